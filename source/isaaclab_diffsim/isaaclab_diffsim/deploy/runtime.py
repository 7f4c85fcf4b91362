"""The controller a robot computer runs: a bundle's ONNX controller through onnxruntime, fed named measurements.

Needs numpy, onnxruntime and pyyaml only. ``Controller.step`` takes the robot's measurements by name, maps its
joints by name to the bundle's order, assembles the observation as ``io.yaml`` declares, runs the controller with
its own step counter (the gait clock) and returns the joint position targets for the PD drives; it keeps the last
``actions`` for the next observation's ``last_action`` term. A bundle that observes a height scan takes the
``height_scan`` measurement too and applies io.yaml's offset and clip to it; one that observes foot heights takes the
``foot_heights`` measurement and clips it.

A LEAPP export (:mod:`.leapp_session`) runs the same way from the io spec in its YAML: its model takes the raw
measurements (the base orientation as ``base_quat_xyzw``), the last actions and the step count, and computes the
observation inside.
"""

from __future__ import annotations

import numpy as np

from .io_spec import BundleMismatchError, foot_heights_fields, height_scan_fields
from .leapp_session import LeappSession
from .observations import concat_terms, rotate_inverse

MEASUREMENTS = ("base_lin_vel", "base_ang_vel", "joint_pos", "joint_vel", "command")
"""Measurements every step needs, besides the orientation: ``projected_gravity`` or ``base_quat_xyzw``."""
ORIENTATIONS = ("projected_gravity", "base_quat_xyzw")


class Controller:
    """``reset()`` then ``step(measurements) -> joint_pos_target`` once per control step (io.yaml's ``scene.dt``).

    ``measurements`` (arrays of shape (d,) for one robot, or (num_robots, d)):

    - ``base_lin_vel``, ``base_ang_vel``: the base's velocity estimate in the base frame [m/s, rad/s];
    - ``projected_gravity`` (unit gravity direction in the base frame) or ``base_quat_xyzw`` (IMU orientation,
      base to world, x y z w; a LEAPP export needs ``base_quat_xyzw``, its model's input);
    - ``joint_pos``, ``joint_vel`` [rad, rad/s]: dicts by joint name, or arrays in ``joint_order`` (io.yaml's
      ``joint_names`` by default);
    - ``command``: (vx, vy, yaw rate) in the base frame [m/s, m/s, rad/s];
    - ``height_scan`` (only for a bundle that observes one): base z minus the terrain height below each point of
      io.yaml's ``height_scan.pattern_xy`` (turned by the base's yaw) [m], shape (P,) or (num_robots, P);
    - ``foot_heights`` (only for a bundle that observes them): each foot's lowest point above the terrain straight
      below it, in io.yaml's ``foot_heights.feet`` order [m], shape (F,) or (num_robots, F).

    The returned targets are in ``joint_order`` (a dict by name when ``joint_pos`` was a dict). Build it from a
    bundle folder or a LEAPP export (folder or YAML), or from ``io`` and ``session`` of
    :func:`~isaaclab_diffsim.deploy.open_bundle`.
    """

    def __init__(self, bundle_dir=None, *, io=None, session=None, joint_order=None, num_robots: int = 1):
        if bundle_dir is not None:
            from .onnx_policy import open_bundle

            io, session = open_bundle(bundle_dir)
        if io is None or session is None:
            raise ValueError("Controller needs a bundle folder, a LEAPP export, or both io and session")
        self.io, self.session = io, session
        robot = io["articulations"]["robot"]
        self.joint_names = list(robot["joint_names"])
        self.joint_order = list(self.joint_names if joint_order is None else joint_order)
        if sorted(self.joint_order) != sorted(self.joint_names):
            raise BundleMismatchError(
                f"joint_order {self.joint_order} is not a permutation of the bundle's joints {self.joint_names}"
            )
        # bundle joint i is joint_order[perm[i]]
        self.perm = np.array([self.joint_order.index(n) for n in self.joint_names])
        self.default_joint_pos = np.asarray(robot["default_joint_pos"], dtype=np.float32)
        self.terms = [t["name"] for t in io["observations"]["policy"]]
        self.scales = {t["name"]: float(t["scale"]) for t in io["observations"]["policy"]}
        self.scan = height_scan_fields(io)
        """io.yaml's ``height_scan`` block (None: the controller observes no scan)."""
        self.feet = foot_heights_fields(io)
        """io.yaml's ``foot_heights`` block (None: the controller observes no foot heights)."""
        self.leapp = isinstance(session, LeappSession)
        """Whether ``session`` is a LEAPP export's model (raw measurements in) rather than a bundle's (obs in)."""
        self.has_step = self.leapp or "step" in [i.name for i in session.get_inputs()]
        self.num_robots = int(num_robots)
        self.step_count = np.zeros(self.num_robots, dtype=np.int64)
        """Control steps since each robot's reset (the controller's ``step`` input)."""
        self.last_action = np.zeros((self.num_robots, len(self.joint_names)), dtype=np.float32)
        """The controller's latest ``actions`` (bundle joint order)."""
        self.last_obs: np.ndarray | None = None
        """The latest ``obs`` input (for a LEAPP export, built as a bundle would take it; its model builds its own)."""

    def reset(self, robots=None) -> None:
        """Start an episode (all robots, or those of the index or mask ``robots``): step 0, no previous action."""
        index = slice(None) if robots is None else robots
        self.step_count[index] = 0
        self.last_action[index] = 0.0

    def _joints(self, value, key: str) -> np.ndarray:
        if isinstance(value, dict):
            missing = [n for n in self.joint_names if n not in value]
            unknown = sorted(set(value) - set(self.joint_names))
            if missing or unknown:
                raise KeyError(f"measurement {key!r}: joints missing {missing}, unknown {unknown}")
            return np.array([[float(value[n]) for n in self.joint_names]], dtype=np.float32)
        a = np.atleast_2d(np.asarray(value, dtype=np.float32))
        if a.shape[1] != len(self.joint_order):
            raise ValueError(f"measurement {key!r} has {a.shape[1]} joints, joint_order has {len(self.joint_order)}")
        return a[:, self.perm]

    def _rows(self, measurements: dict, key: str, size: int) -> np.ndarray:
        """``measurements[key]`` as a (num_robots, size) float32 array; ValueError naming it otherwise."""
        a = np.atleast_2d(np.asarray(measurements[key], dtype=np.float32))
        if a.shape != (self.num_robots, size):
            raise ValueError(f"measurement {key!r} has shape {a.shape}, expected ({self.num_robots}, {size})")
        return a

    def _vector(self, measurements: dict, key: str) -> np.ndarray:
        return self._rows(measurements, key, 4 if key == "base_quat_xyzw" else 3)

    def _height_scan(self, measurements: dict) -> np.ndarray:
        h = self._rows(measurements, "height_scan", len(self.scan["pattern_xy"]))
        clip = np.float32(self.scan["clip"])
        return np.clip(h - np.float32(self.scan["offset"]), -clip, clip)

    def _foot_heights(self, measurements: dict) -> np.ndarray:
        h = self._rows(measurements, "foot_heights", len(self.feet["feet"]))
        clip = np.float32(self.feet["clip"])
        return np.clip(h, -clip, clip)

    def _measured(self, measurements: dict) -> dict[str, np.ndarray]:
        """The measurements as (num_robots, size) arrays, joints in the bundle's order, with the projected gravity
        (and, for a LEAPP export, the base quaternion); KeyError naming what is missing."""
        scan = ("height_scan",) if self.scan is not None else ()
        feet = ("foot_heights",) if self.feet is not None else ()
        missing = [k for k in MEASUREMENTS + scan + feet if k not in measurements]
        if self.leapp and "base_quat_xyzw" not in measurements:
            missing.append("base_quat_xyzw (a LEAPP export's model takes the base orientation)")
        elif not any(k in measurements for k in ORIENTATIONS):
            missing.append(" or ".join(ORIENTATIONS))
        if missing:
            raise KeyError(f"measurements lack {missing}")
        raw = {key: self._vector(measurements, key) for key in ("base_lin_vel", "base_ang_vel", "command")}
        raw["joint_pos"] = self._joints(measurements["joint_pos"], "joint_pos")
        raw["joint_vel"] = self._joints(measurements["joint_vel"], "joint_vel")
        if "base_quat_xyzw" in measurements and (self.leapp or "projected_gravity" not in measurements):
            raw["base_quat_xyzw"] = self._vector(measurements, "base_quat_xyzw")
        if "projected_gravity" in measurements:
            raw["projected_gravity"] = self._vector(measurements, "projected_gravity")
        else:
            quat = raw["base_quat_xyzw"]
            raw["projected_gravity"] = rotate_inverse(quat, np.tile(np.float32([0.0, 0.0, -1.0]), (len(quat), 1)))
        if self.scan is not None:
            raw["height_scan"] = self._height_scan(measurements)
        if self.feet is not None:
            raw["foot_heights"] = self._foot_heights(measurements)
        return raw

    def _observation(self, raw: dict[str, np.ndarray]) -> np.ndarray:
        values = {
            "base_lin_vel": raw["base_lin_vel"],
            "base_ang_vel": raw["base_ang_vel"],
            "projected_gravity": raw["projected_gravity"],
            "velocity_commands": raw["command"],
            "joint_pos_rel": raw["joint_pos"] - self.default_joint_pos,
            "joint_vel_rel": raw["joint_vel"],
            "last_action": self.last_action,
        }
        if self.scan is not None:
            values["height_scan"] = raw["height_scan"]
        if self.feet is not None:
            values["foot_heights"] = raw["foot_heights"]
        return concat_terms(self.terms, self.scales, values)

    def observation(self, measurements: dict) -> np.ndarray:
        """The controller's ``obs`` input for ``measurements``, term by term in io.yaml's order."""
        return self._observation(self._measured(measurements))

    def step(self, measurements: dict):
        """One control step: joint position targets for the drives (``joint_order``; a dict when ``joint_pos``
        was one; shape (num_joints,) when the measurements were single vectors)."""
        raw = self._measured(measurements)
        obs = self._observation(raw)
        if self.leapp:
            targets, actions = self.session.run(raw, self.last_action, self.step_count)
        else:
            feed = {"obs": obs}
            if self.has_step:
                feed["step"] = self.step_count.astype(np.float32)[:, None]
            targets, actions = self.session.run(["joint_pos_target", "actions"], feed)
        self.last_obs, self.last_action = obs, actions.copy()
        self.step_count += 1
        joint_pos = measurements["joint_pos"]
        if isinstance(joint_pos, dict):
            return dict(zip(self.joint_names, map(float, targets[0])))
        out = np.empty_like(targets)
        out[:, self.perm] = targets
        return out[0] if np.ndim(joint_pos) == 1 else out
