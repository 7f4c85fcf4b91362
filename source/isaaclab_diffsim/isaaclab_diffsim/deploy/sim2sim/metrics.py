"""Per-episode measures of a sim-to-sim run and their summary per variant."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

CONTACT_HEIGHT = 0.01
"""A foot is in stance when its sphere's lowest point is within this many metres of the ground."""
STEP_HEIGHT = 0.02
"""A touchdown is a return to stance of a foot whose lowest point rose above this many metres since its last stance
(a foot that only flickers about the stance height is not stepping)."""


@dataclass
class EpisodeMetrics:
    """One episode: whether it fell (base below the height limit or tilted past the task's limit), its length in
    control steps, and over its control steps the mean |cmd_xy - v_xy| (base frame, m/s), the mean |cmd_yaw -
    w_z| [rad/s], the joints' mean mechanical power sum |tau qd| [W], the rms roll and pitch [rad], the fraction
    of steps with any joint beyond its limit and the largest excursion beyond a limit [rad], the rms torque change
    from one control step to the next [N m], and the mean horizontal speed of the feet in stance [m/s]."""

    command_vx: float
    fell: bool
    length: int
    tracking_error: float
    joint_power: float
    roll_rms: float
    pitch_rms: float
    yaw_rate_error: float = 0.0
    joint_limit_fraction: float = 0.0
    joint_limit_max_rad: float = 0.0
    torque_change_rms: float = 0.0
    foot_slip_speed: float = 0.0
    touchdowns_per_foot_s: float = 0.0
    """Touchdowns (stance after a lift above :data:`STEP_HEIGHT`) per foot per second (standing still: 0)."""
    drift_m: float = 0.0
    """Horizontal distance [m] of the base from its start at the episode's last step before it ended."""


def summarize(episodes: list[EpisodeMetrics], step_dt: float) -> dict:
    """Fall rate, means of the other measures over the episodes (the largest joint excursion: their maximum),
    episode length in seconds."""

    def mean(key):
        return float(np.mean([getattr(e, key) for e in episodes]))

    return {
        "episodes": len(episodes),
        "fall_rate": mean("fell"),
        "tracking_error": mean("tracking_error"),
        "yaw_rate_error": mean("yaw_rate_error"),
        "episode_length_s": mean("length") * step_dt,
        "joint_power_w": mean("joint_power"),
        "roll_rms": mean("roll_rms"),
        "pitch_rms": mean("pitch_rms"),
        "joint_limit_fraction": mean("joint_limit_fraction"),
        "joint_limit_max_rad": float(max(e.joint_limit_max_rad for e in episodes)),
        "torque_change_rms": mean("torque_change_rms"),
        "foot_slip_speed": mean("foot_slip_speed"),
        "touchdowns_per_foot_s": mean("touchdowns_per_foot_s"),
        "drift_m": mean("drift_m"),
    }


@dataclass
class StepSample:
    """One control step of N episodes, after the step: base-frame linear and angular velocity (N, 3), projected
    gravity (N, 3), joint positions, velocities and drive torques (N, J), foot sphere centres in the world (N, F, 3)
    (None: no slip measure), and the episodes that ended with the step by failure (``terminated``) or time-out."""

    lin_vel_b: np.ndarray
    ang_vel_b: np.ndarray
    proj_g: np.ndarray
    joint_pos: np.ndarray
    joint_vel: np.ndarray
    torque: np.ndarray
    foot_pos: np.ndarray | None
    terminated: np.ndarray
    truncated: np.ndarray
    base_pos: np.ndarray | None = None
    """Base positions in the world (N, 3) (None: no drift measure)."""


class EpisodeAccumulator:
    """Running sums of one batch of N episodes with constant ``commands`` (N, 3); only steps of still active
    episodes count. ``joint_lower``/``joint_upper`` (J,) are the joints' limits [rad], ``dt`` the control step [s],
    ``foot_radius`` [m] the feet's sphere radius."""

    def __init__(self, commands, joint_lower, joint_upper, dt: float, foot_radius: float = 0.0):
        n = commands.shape[0]
        self.commands = np.asarray(commands, dtype=np.float64)
        self.lower, self.upper = np.asarray(joint_lower), np.asarray(joint_upper)
        self.dt, self.foot_radius = float(dt), float(foot_radius)
        self.active = np.ones(n, dtype=bool)
        self.fell = np.zeros(n, dtype=bool)
        self.length = np.zeros(n, dtype=np.int64)
        z = np.zeros(n)
        self.err, self.yaw_err, self.power, self.roll2, self.pitch2 = z.copy(), z.copy(), z.copy(), z.copy(), z.copy()
        self.limit_steps, self.limit_max = z.copy(), z.copy()
        self.dtau2, self.dtau_count = z.copy(), z.copy()
        self.slip, self.slip_count = z.copy(), z.copy()
        self.touchdowns = z.copy()
        self.lifted: np.ndarray | None = None
        self.stood: np.ndarray | None = None  # the foot has been in stance since the episode started
        self.start_xy: np.ndarray | None = None
        self.last_xy: np.ndarray | None = None
        self.prev_torque: np.ndarray | None = None
        self.prev_feet: np.ndarray | None = None

    def add(self, s: StepSample) -> None:
        a = self.active
        self.err += np.where(a, np.linalg.norm(self.commands[:, :2] - s.lin_vel_b[:, :2], axis=1), 0.0)
        self.yaw_err += np.where(a, np.abs(self.commands[:, 2] - s.ang_vel_b[:, 2]), 0.0)
        self.power += np.where(a, np.abs(s.torque * s.joint_vel).sum(1), 0.0)
        # roll and pitch of the base from the gravity direction in its frame
        roll = np.arctan2(-s.proj_g[:, 1], -s.proj_g[:, 2])
        pitch = np.arcsin(np.clip(s.proj_g[:, 0], -1.0, 1.0))
        self.roll2 += np.where(a, roll**2, 0.0)
        self.pitch2 += np.where(a, pitch**2, 0.0)
        excursion = np.maximum(np.maximum(s.joint_pos - self.upper, self.lower - s.joint_pos), 0.0).max(1)
        self.limit_steps += a & (excursion > 0.0)
        self.limit_max = np.where(a, np.maximum(self.limit_max, excursion), self.limit_max)
        if self.prev_torque is not None:
            has_prev = a & (self.length > 0)
            self.dtau2 += np.where(has_prev, ((s.torque - self.prev_torque) ** 2).mean(1), 0.0)
            self.dtau_count += has_prev
        self.prev_torque = s.torque.copy()
        ended = s.terminated | s.truncated
        if s.foot_pos is not None:
            # stance at both ends of the step; the step that ends an episode is left out (a simulator may have
            # reset the robot already)
            if self.prev_feet is not None:
                stance = self._stance(self.prev_feet) & self._stance(s.foot_pos)
                stance &= (a & (self.length > 0) & ~ended)[:, None]
                speed = np.linalg.norm(s.foot_pos[..., :2] - self.prev_feet[..., :2], axis=-1) / self.dt
                self.slip += np.where(stance, speed, 0.0).sum(1)
                self.slip_count += stance.sum(1)
            height = s.foot_pos[..., 2] - self.foot_radius
            if self.lifted is None:
                self.lifted = np.zeros(height.shape, dtype=bool)
                self.stood = np.zeros(height.shape, dtype=bool)
            counted = (a & (self.length > 0) & ~ended)[:, None]
            stance = self._stance(s.foot_pos)
            # a lift counts from stance only: the first landing of a robot spawned above the ground is not a step
            self.lifted |= (height > STEP_HEIGHT) & self.stood
            self.stood |= stance
            landed = self.lifted & stance
            self.touchdowns += (landed & counted).sum(1)
            self.lifted &= ~landed
            self.prev_feet = s.foot_pos.copy()
        if s.base_pos is not None:
            xy = np.array(s.base_pos, dtype=np.float64)[:, :2]
            if self.start_xy is None:  # the batch's episodes start together: after their first step
                self.start_xy, self.last_xy = xy.copy(), xy.copy()
            # a simulator may have reset the robot with the step that ends an episode: that position is left out
            self.last_xy = np.where((a & ~ended)[:, None], xy, self.last_xy)
        self.length += a
        self.fell |= a & s.terminated
        self.active = a & ~ended

    def _stance(self, feet: np.ndarray) -> np.ndarray:
        return feet[..., 2] - self.foot_radius < CONTACT_HEIGHT

    def episodes(self) -> list[EpisodeMetrics]:
        n = np.maximum(self.length, 1)
        feet = 1 if self.prev_feet is None else self.prev_feet.shape[1]
        return [
            EpisodeMetrics(
                command_vx=float(self.commands[i, 0]),
                fell=bool(self.fell[i]),
                length=int(self.length[i]),
                tracking_error=float(self.err[i] / n[i]),
                joint_power=float(self.power[i] / n[i]),
                roll_rms=float(np.sqrt(self.roll2[i] / n[i])),
                pitch_rms=float(np.sqrt(self.pitch2[i] / n[i])),
                yaw_rate_error=float(self.yaw_err[i] / n[i]),
                joint_limit_fraction=float(self.limit_steps[i] / n[i]),
                joint_limit_max_rad=float(self.limit_max[i]),
                torque_change_rms=float(np.sqrt(self.dtau2[i] / max(self.dtau_count[i], 1))),
                foot_slip_speed=float(self.slip[i] / max(self.slip_count[i], 1)),
                touchdowns_per_foot_s=float(self.touchdowns[i] / (feet * n[i] * self.dt)),
                drift_m=0.0 if self.start_xy is None else float(np.linalg.norm(self.last_xy[i] - self.start_xy[i])),
            )
            for i in range(len(self.commands))
        ]
