"""Episodes of a bundle or a LEAPP export in MuJoCo: the runtime :class:`~isaaclab_diffsim.deploy.Controller` at
the io spec's dt, PD drives in Python every physics step; on a plane or a terrain's heightfield, the height scan by
MuJoCo's ray casts."""

from __future__ import annotations

import math

import numpy as np

from ...assets.anymal_c_urdf import urdf_joint_limits
from ..io_spec import BundleMismatchError
from ..leapp_session import NOISE_NOT_LEAPP
from ..observations import rotate_inverse
from ..runtime import Controller
from .actuator import DcMotor
from .metrics import EpisodeAccumulator, EpisodeMetrics, StepSample
from .mujoco_ground import MujocoGround
from .mujoco_model import FOOT_LINKS, build_mujoco_anymal
from .noise import add_noise
from .variants import NOMINAL_FRICTION, PUSH_INTERVAL_S, Variant


def _xyzw(wxyz: np.ndarray) -> np.ndarray:
    return np.concatenate([wxyz[1:], wxyz[:1]])[None]


def joint_limits(joint_names: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """The URDF's lower and upper position limits [rad] of ``joint_names``."""
    lower, upper = urdf_joint_limits("lower"), urdf_joint_limits("upper")
    return np.array([lower[n] for n in joint_names]), np.array([upper[n] for n in joint_names])


class MujocoRunner:
    """Runs episodes of the bundle ``(io, session)`` (from :func:`~isaaclab_diffsim.deploy.open_bundle`) in MuJoCo.

    Physics at ``timestep`` (0.0025 s: 400 Hz PD), the controller every ``round(io dt / timestep)`` steps. An episode
    starts upright at ``init_height`` in the default pose at rest and ends by a fall (base below ``min_height`` or
    gravity's z in the base frame above ``max_gravity_z``) or after ``episode_s``. ``noise`` maps measurement names
    to the (lo, hi) of the uniform noise the ``noise`` variant adds (None: that variant is refused).

    ``terrain`` (a :class:`~isaaclab_diffsim.deploy.sim2sim.bundle_terrain.BundleTerrain`) replaces the plane by its
    heightfield: an episode starts above its ``start`` point, and the base's height (falls) and the feet's (stance)
    are measured from the ground below them. A bundle that observes a height scan gets it from MuJoCo's ray casts.
    ``feet_only``: only the feet collide, as in the differentiable task (:func:`build_mujoco_anymal`).
    """

    def __init__(
        self,
        io,
        session,
        timestep=0.0025,
        init_height=0.6,
        min_height=0.3,
        max_gravity_z=-0.5,
        noise=None,
        terrain=None,
        feet_only=False,
    ):
        self.io, self.session = io, session
        self.feet_only = feet_only
        robot = io["articulations"]["robot"]
        self.joint_names = list(robot["joint_names"])
        self.default = np.asarray(robot["default_joint_pos"], dtype=np.float64)
        self.dt = float(io["scene"]["dt"])
        self.decimation = round(self.dt / timestep)
        if self.decimation < 1 or not math.isclose(self.decimation * timestep, self.dt, rel_tol=1e-6):
            raise BundleMismatchError(f"control dt {self.dt} s is not a multiple of the MuJoCo timestep {timestep} s")
        self.timestep = timestep
        self.action_scale = float(io["actions"]["joint_pos"]["scale"])
        self.init_height, self.min_height, self.max_gravity_z = init_height, min_height, max_gravity_z
        self.noise, self.terrain = noise, terrain
        self._robots = {}  # compiled models by (friction, payload): a terrain's heightfield takes ~0.5 s to build
        self.lower, self.upper = joint_limits(self.joint_names)
        self.controller = Controller(io=io, session=session)
        scan = self.controller.scan
        self.pattern = None if scan is None else np.asarray(scan["pattern_xy"], dtype=np.float64)
        """The height scan's points (P, 2) in the base's yaw frame (None: the bundle observes no scan)."""
        meas = self._measurements(np.r_[0, 0, 0, 1.0, 0, 0, 0], np.zeros(6), self.default, np.zeros(12), np.zeros(3))
        if self.pattern is not None:
            meas["height_scan"] = np.zeros(len(self.pattern))
        feet = self.controller.feet
        if feet is not None:
            order = [link.split("_")[0] for link in FOOT_LINKS]
            if list(feet["feet"]) != order:
                raise BundleMismatchError(f"io.yaml foot_heights.feet is {feet['feet']}, the MuJoCo model's {order}")
            meas["foot_heights"] = np.zeros(len(order))
        self.controller.observation(meas)  # refuses unknown terms now

    @staticmethod
    def _measurements(qpos_base, qvel_base, q, qd, command) -> dict:
        quat = _xyzw(qpos_base[3:7])
        return {
            "base_lin_vel": rotate_inverse(quat, qvel_base[None, 0:3])[0],
            # MuJoCo's free-joint angular velocity is in the body frame already
            "base_ang_vel": qvel_base[3:6].copy(),
            "projected_gravity": rotate_inverse(quat, np.array([[0.0, 0.0, -1.0]]))[0],
            "base_quat_xyzw": quat[0],  # what a LEAPP export takes; a bundle's controller uses projected_gravity
            "joint_pos": np.array(q),
            "joint_vel": np.array(qd),
            "command": np.asarray(command, dtype=np.float64),
        }

    def episode(
        self, command, variant: Variant, episode_s: float, seed: int, schedule=None, trace=None, start=None
    ) -> EpisodeMetrics:
        """One episode under ``variant`` with the constant ``command`` (vx, vy, yaw rate), or ``schedule(t)`` ->
        command at time t when given; pushes and noise from ``seed``; the base starts ``init_height`` above
        ``start`` (x, y, z; default the origin). Appends (t, command, base-frame linear velocity, yaw rate) per
        control step to the list ``trace`` when given. Returns its :class:`EpisodeMetrics`."""
        import mujoco

        if variant.noise and self.noise is None:
            raise ValueError("the noise variant needs the runner's noise ranges")
        if variant.noise and self.controller.leapp:
            raise ValueError(NOISE_NOT_LEAPP)
        rng = np.random.default_rng(seed)
        friction = NOMINAL_FRICTION if variant.friction is None else variant.friction
        key = (friction, variant.payload)
        if key not in self._robots:
            self._robots[key] = build_mujoco_anymal(
                self.joint_names, friction, self.timestep, variant.payload, self.terrain, self.feet_only
            )
        robot = self._robots[key]
        motor = DcMotor(self.io["articulations"]["robot"], variant.motor)
        m, qa, da = robot.model, robot.qpos_adr, robot.dof_adr
        ground = MujocoGround(m, robot.ground_top)
        d = mujoco.MjData(m)
        d.qpos[0:3] = np.zeros(3) if start is None else np.asarray(start, dtype=np.float64)
        d.qpos[2] += self.init_height
        d.qpos[3] = 1.0
        d.qpos[qa] = self.default
        mujoco.mj_forward(m, d)
        command = np.array(command, dtype=np.float64)
        foot_radius = float(m.geom_size[robot.foot_geoms[0], 0])
        acc = EpisodeAccumulator(command[None], self.lower, self.upper, self.dt, foot_radius)
        ctrl = self.controller
        ctrl.reset()
        nj = len(self.joint_names)
        queue = [np.zeros((1, nj), dtype=np.float32)] * variant.latency
        steps = int(math.ceil(episode_s / self.dt))
        push_every = round(PUSH_INTERVAL_S / self.dt)
        for k in range(steps):
            if schedule is not None:
                command = np.asarray(schedule(k * self.dt), dtype=np.float64)
                acc.commands[0] = command
            meas = self._measurements(d.qpos[:7], d.qvel[:6], d.qpos[qa], d.qvel[da], command)
            if self.pattern is not None:
                meas["height_scan"] = ground.scan(d, d.qpos[0:3], d.qpos[3:7], self.pattern)
            if ctrl.feet is not None:
                meas["foot_heights"] = ground.foot_heights(d, robot.foot_geoms, foot_radius)
            if variant.noise:
                meas = add_noise(meas, self.noise, rng)
            targets = ctrl.step(meas)
            actions = ctrl.last_action
            queue.append(actions)
            applied = queue.pop(0)
            # the drives get the targets of the delayed actions at the current gait phase
            target = (targets + self.action_scale * (applied - actions)[0]).astype(np.float64)
            for _ in range(self.decimation):
                d.qfrc_applied[da] = motor.torque(target, d.qpos[qa], d.qvel[da])
                mujoco.mj_step(m, d)
            if variant.push > 0 and (k + 1) % push_every == 0:
                d.qvel[0:2] += rng.uniform(-variant.push, variant.push, 2)
            if not np.all(np.isfinite(d.qpos)):
                raise FloatingPointError(f"MuJoCo state not finite at control step {k}")
            after = self._measurements(d.qpos[:7], d.qvel[:6], d.qpos[qa], d.qvel[da], command)
            g = after["projected_gravity"]
            feet = d.geom_xpos[robot.foot_geoms].copy()
            base_height = d.qpos[2]
            if self.terrain is not None:  # heights above the ground below
                base_height -= ground.heights(d, d.qpos[None, 0:2])[0]
                feet[:, 2] -= ground.heights(d, feet[:, 0:2])
            fell = base_height < self.min_height or g[2] > self.max_gravity_z
            q, qd = after["joint_pos"], after["joint_vel"]
            sample = StepSample(
                after["base_lin_vel"][None],
                after["base_ang_vel"][None],
                g[None],
                q[None],
                qd[None],
                motor.torque(target, q, qd)[None],
                feet[None],
                np.array([fell]),
                np.array([k + 1 == steps]),
                d.qpos[None, 0:3].copy(),
            )
            acc.add(sample)
            if trace is not None:
                v = after["base_lin_vel"]
                trace.append([(k + 1) * self.dt, *command, *v, float(after["base_ang_vel"][2])])
            if not acc.active[0]:
                break
        return acc.episodes()[0]
