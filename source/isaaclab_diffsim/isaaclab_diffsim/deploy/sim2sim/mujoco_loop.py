"""Episodes of a bundle in MuJoCo: onnxruntime controller at io.yaml's dt, PD drives in Python every physics step."""

from __future__ import annotations

import math

import numpy as np

from ..io_spec import BundleMismatchError
from ..observations import concat_terms, state_terms
from .actuator import DcMotor
from .metrics import EpisodeAccumulator, EpisodeMetrics
from .mujoco_model import build_mujoco_anymal
from .variants import NOMINAL_FRICTION, PUSH_INTERVAL_S, Variant


def _xyzw(wxyz: np.ndarray) -> np.ndarray:
    return np.concatenate([wxyz[1:], wxyz[:1]])[None].astype(np.float32)


class MujocoRunner:
    """Runs episodes of the bundle ``(io, session)`` (from :func:`~isaaclab_diffsim.deploy.open_bundle`) in MuJoCo.

    Physics at ``timestep`` (0.0025 s: 400 Hz PD), the controller every ``round(io dt / timestep)`` steps. An episode
    starts upright at ``init_height`` in the default pose at rest and ends by a fall (base below ``min_height`` or
    gravity's z in the base frame above ``max_gravity_z``) or after ``episode_s``.
    """

    def __init__(self, io, session, timestep=0.0025, init_height=0.6, min_height=0.3, max_gravity_z=-0.5):
        self.io, self.session = io, session
        robot = io["articulations"]["robot"]
        self.joint_names = list(robot["joint_names"])
        self.default = np.asarray(robot["default_joint_pos"], dtype=np.float64)
        self.motor = DcMotor(robot)
        self.dt = float(io["scene"]["dt"])
        self.decimation = round(self.dt / timestep)
        if self.decimation < 1 or not math.isclose(self.decimation * timestep, self.dt, rel_tol=1e-6):
            raise BundleMismatchError(f"control dt {self.dt} s is not a multiple of the MuJoCo timestep {timestep} s")
        self.timestep = timestep
        self.terms = [t["name"] for t in io["observations"]["policy"]]
        self.scales = {t["name"]: float(t["scale"]) for t in io["observations"]["policy"]}
        self.action_scale = float(io["actions"]["joint_pos"]["scale"])
        self.init_height, self.min_height, self.max_gravity_z = init_height, min_height, max_gravity_z
        inputs = [i.name for i in session.get_inputs()]
        self.has_step = "step" in inputs
        concat_terms(self.terms, self.scales, self._values(np.zeros(7), np.zeros(6), 12, np.zeros(3)))

    def _values(self, qpos_base, qvel_base, nj, command, q=None, qd=None, last=None):
        quat = _xyzw(qpos_base[3:7])
        lin_w = qvel_base[None, 0:3].astype(np.float32)
        # MuJoCo's free-joint angular velocity is in the body frame: rotate it to the world frame
        ang_b = qvel_base[None, 3:6].astype(np.float32)
        u, w = quat[:, :3], quat[:, 3:4]
        t = 2.0 * np.cross(u, ang_b)
        ang_w = ang_b + w * t + np.cross(u, t)
        zeros = np.zeros((1, nj), dtype=np.float32)
        return state_terms(
            quat,
            lin_w,
            ang_w,
            command[None].astype(np.float32),
            zeros if q is None else (q - self.default)[None].astype(np.float32),
            zeros if qd is None else qd[None].astype(np.float32),
            zeros if last is None else last,
        )

    def episode(self, command, variant: Variant, episode_s: float, seed: int) -> EpisodeMetrics:
        """One episode under ``variant`` with the constant ``command`` (vx, vy, yaw rate); pushes from ``seed``."""
        import mujoco

        rng = np.random.default_rng(seed)
        friction = NOMINAL_FRICTION if variant.friction is None else variant.friction
        robot = build_mujoco_anymal(self.joint_names, friction, self.timestep, variant.payload)
        m, qa, da = robot.model, robot.qpos_adr, robot.dof_adr
        d = mujoco.MjData(m)
        d.qpos[2], d.qpos[3] = self.init_height, 1.0
        d.qpos[qa] = self.default
        mujoco.mj_forward(m, d)
        command = np.asarray(command, dtype=np.float64)
        acc = EpisodeAccumulator(command[None])
        nj = len(self.joint_names)
        last = np.zeros((1, nj), dtype=np.float32)
        queue = [np.zeros((1, nj), dtype=np.float32)] * variant.latency
        steps = int(math.ceil(episode_s / self.dt))
        push_every = round(PUSH_INTERVAL_S / self.dt)
        for k in range(steps):
            values = self._values(d.qpos[:7], d.qvel[:6], nj, command, d.qpos[qa], d.qvel[da], last)
            obs = concat_terms(self.terms, self.scales, values)
            feed = {"obs": obs}
            if self.has_step:
                feed["step"] = np.float32([[k]])
            targets, actions = self.session.run(["joint_pos_target", "actions"], feed)
            last = actions.copy()
            queue.append(actions)
            applied = queue.pop(0)
            # the drives get the targets of the delayed actions at the current gait phase
            target = (targets + self.action_scale * (applied - actions))[0].astype(np.float64)
            for _ in range(self.decimation):
                d.qfrc_applied[da] = self.motor.torque(target, d.qpos[qa], d.qvel[da])
                mujoco.mj_step(m, d)
            if variant.push > 0 and (k + 1) % push_every == 0:
                d.qvel[0:2] += rng.uniform(-variant.push, variant.push, 2)
            v = self._values(d.qpos[:7], d.qvel[:6], nj, command)
            qd = d.qvel[da]
            power = np.abs(self.motor.torque(target, d.qpos[qa], qd) * qd).sum()
            g = v["projected_gravity"]
            fell = d.qpos[2] < self.min_height or g[0, 2] > self.max_gravity_z
            if not np.all(np.isfinite(d.qpos)):
                raise FloatingPointError(f"MuJoCo state not finite at control step {k}")
            acc.add(v["base_lin_vel"], g, np.array([power]), np.array([fell]), np.array([k + 1 == steps]))
            if not acc.active[0]:
                break
        return acc.episodes()[0]
