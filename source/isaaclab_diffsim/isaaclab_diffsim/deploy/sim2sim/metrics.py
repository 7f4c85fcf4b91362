"""Per-episode measures of a sim-to-sim run and their summary per variant."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class EpisodeMetrics:
    """One episode: whether it fell (base below the height limit or tilted past the task's limit), its length in
    control steps, the mean over its steps of |cmd_xy - v_xy| (base frame, m/s), of the joints' mechanical power
    sum |tau qd| [W], and the rms roll and pitch [rad]."""

    command_vx: float
    fell: bool
    length: int
    tracking_error: float
    joint_power: float
    roll_rms: float
    pitch_rms: float


def summarize(episodes: list[EpisodeMetrics], step_dt: float) -> dict:
    """Fall rate, means of the other measures over the episodes, episode length in seconds."""

    def mean(key):
        return float(np.mean([getattr(e, key) for e in episodes]))

    return {
        "episodes": len(episodes),
        "fall_rate": mean("fell"),
        "tracking_error": mean("tracking_error"),
        "episode_length_s": mean("length") * step_dt,
        "joint_power_w": mean("joint_power"),
        "roll_rms": mean("roll_rms"),
        "pitch_rms": mean("pitch_rms"),
    }


class EpisodeAccumulator:
    """Running sums of one batch of episodes (numpy arrays of length N); only steps of still active episodes
    count."""

    def __init__(self, commands: np.ndarray):
        n = commands.shape[0]
        self.commands = commands
        self.active = np.ones(n, dtype=bool)
        self.fell = np.zeros(n, dtype=bool)
        self.length = np.zeros(n, dtype=np.int64)
        self.err = np.zeros(n)
        self.power = np.zeros(n)
        self.roll2 = np.zeros(n)
        self.pitch2 = np.zeros(n)

    def add(self, lin_vel_b, proj_g, power, terminated, truncated) -> None:
        """One control step: base-frame velocity and projected gravity after it, joint power, and the episodes
        that ended with it by failure (``terminated``) or time-out."""
        a = self.active
        self.err += np.where(a, np.linalg.norm(self.commands[:, :2] - lin_vel_b[:, :2], axis=1), 0.0)
        self.power += np.where(a, power, 0.0)
        # roll and pitch of the base from the gravity direction in its frame
        roll = np.arctan2(-proj_g[:, 1], -proj_g[:, 2])
        pitch = np.arcsin(np.clip(proj_g[:, 0], -1.0, 1.0))
        self.roll2 += np.where(a, roll**2, 0.0)
        self.pitch2 += np.where(a, pitch**2, 0.0)
        self.length += a
        self.fell |= a & terminated
        self.active = a & ~(terminated | truncated)

    def episodes(self) -> list[EpisodeMetrics]:
        n = np.maximum(self.length, 1)
        return [
            EpisodeMetrics(
                float(self.commands[i, 0]),
                bool(self.fell[i]),
                int(self.length[i]),
                float(self.err[i] / n[i]),
                float(self.power[i] / n[i]),
                float(np.sqrt(self.roll2[i] / n[i])),
                float(np.sqrt(self.pitch2[i] / n[i])),
            )
            for i in range(len(self.commands))
        ]
