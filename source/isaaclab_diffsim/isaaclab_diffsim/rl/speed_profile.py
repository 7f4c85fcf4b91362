"""Velocity tracking by command: how fast a policy goes along its command, per band of command speed and per
sector of command direction.

A policy that tracks slow commands and saturates on fast ones has a tracking error that grows with |v_cmd| and a
speed along the command that stops growing; one that walks forward and not sideways tracks forward commands and not
lateral ones. The episode-mean error of :func:`~.evaluation.evaluate` mixes all of them.
"""

from __future__ import annotations

import math

import torch

SPEED_BANDS = (0.0, 0.25, 0.5, 0.75, 1.0, math.inf)
"""Edges of the command-speed bands [m/s]: band k holds the steps with ``SPEED_BANDS[k] <= |v_xy,cmd| <
SPEED_BANDS[k + 1]`` (Isaac Lab's velocity commands reach sqrt(2) m/s)."""

DIRECTION_SECTORS = ("forward", "lateral", "backward")
"""Sectors of a nonzero command's direction in the base frame: within 45 degrees of +x (forward), of -x
(backward), and the rest (lateral, either side)."""


class _TrackingSums:
    """Per-bin sums over evaluated steps of |v_cmd - v| (the tracking error), of v . v_cmd / |v_cmd| (the speed along
    the command; 0 for a zero command) and of |v_cmd|; a subclass says which bin a step falls in."""

    def __init__(self, num_bins: int):
        # one more column for the steps a subclass leaves out (summed there, then dropped: no host sync)
        self._sums = torch.zeros(4, num_bins + 1, dtype=torch.float64)

    def _bins(self, cmd: torch.Tensor, speed: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError

    def add(self, command_xy: torch.Tensor, velocity_xy: torch.Tensor, mask: torch.Tensor) -> None:
        """Count the steps of the envs where ``mask``: commanded and achieved planar velocities (n, 2), base frame."""
        cmd, vel = command_xy.double(), velocity_xy.double()
        if self._sums.device != cmd.device:
            self._sums = self._sums.to(cmd.device)
        speed = cmd.norm(dim=1)
        along = torch.where(speed > 0.0, (cmd * vel).sum(dim=1) / speed.clamp_min(1e-12), 0.0)
        left_out = self._sums.shape[1] - 1
        bins = torch.where(mask.to(cmd.device), self._bins(cmd, speed), left_out)
        terms = torch.stack([torch.ones_like(speed), (cmd - vel).norm(dim=1), along, speed])
        self._sums.index_add_(1, bins, terms)

    def _rows(self, key: str, labels: list) -> list[dict]:
        steps, error, along, speed = self._sums[:, :-1].cpu().tolist()
        return [
            {
                key: label,
                "steps": int(n),
                "tracking_error": error[k] / n,
                "speed_along_command": along[k] / n,
                "command_speed": speed[k] / n,
            }
            for k, (n, label) in enumerate(zip(steps, labels))
            if n > 0.0
        ]


class SpeedProfile(_TrackingSums):
    """The tracking sums per band of command speed (``bands``, :data:`SPEED_BANDS`)."""

    def __init__(self, bands: tuple[float, ...] = SPEED_BANDS):
        if len(bands) < 2 or any(not b > a for a, b in zip(bands, bands[1:])) or bands[0] != 0.0:
            raise ValueError(f"speed bands must start at 0 and increase, got {bands!r}")
        super().__init__(len(bands) - 1)
        self.bands = tuple(float(b) for b in bands)
        self._edges = torch.tensor(self.bands[1:-1], dtype=torch.float64)

    def _bins(self, cmd: torch.Tensor, speed: torch.Tensor) -> torch.Tensor:
        if self._edges.device != speed.device:
            self._edges = self._edges.to(speed.device)
        return torch.bucketize(speed, self._edges, right=True)

    def rows(self) -> list[dict]:
        """Per band with steps: ``{"band": [lo, hi], "steps", "tracking_error", "speed_along_command",
        "command_speed"}`` (means over the band's steps; ``hi`` None for an open band)."""
        his = [None if math.isinf(hi) else hi for hi in self.bands[1:]]
        return self._rows("band", [[lo, hi] for lo, hi in zip(self.bands, his)])


class DirectionProfile(_TrackingSums):
    """The tracking sums per sector of command direction (:data:`DIRECTION_SECTORS`); zero commands count nowhere."""

    def __init__(self):
        super().__init__(len(DIRECTION_SECTORS))

    def _bins(self, cmd: torch.Tensor, speed: torch.Tensor) -> torch.Tensor:
        cos = cmd[:, 0] / speed.clamp_min(1e-12)  # of the angle to the base's +x
        half = math.cos(math.pi / 4.0)
        sector = torch.where(cos >= half, 0, torch.where(cos <= -half, 2, 1))
        return torch.where(speed > 0.0, sector, len(DIRECTION_SECTORS))

    def rows(self) -> list[dict]:
        """Per sector with steps: ``{"sector": name, "steps", "tracking_error", "speed_along_command",
        "command_speed"}`` (means over the sector's steps)."""
        return self._rows("sector", list(DIRECTION_SECTORS))


class EnvGroupProfile(_TrackingSums):
    """The tracking sums per group of envs (the sub-terrain type an env started on, its level): ``groups``
    (num_envs,) the group index of each env, ``labels`` the groups' names. Every step counts, zero commands too, as
    in :class:`SpeedProfile`."""

    def __init__(self, groups: torch.Tensor, labels: list[str]):
        groups = torch.as_tensor(groups).long()
        if groups.ndim != 1 or (groups.numel() and not 0 <= int(groups.min()) <= int(groups.max()) < len(labels)):
            raise ValueError(f"env groups must be a 1-D index into the {len(labels)} labels")
        super().__init__(len(labels))
        self.groups, self.labels = groups, list(labels)

    def _bins(self, cmd: torch.Tensor, speed: torch.Tensor) -> torch.Tensor:
        if self.groups.device != speed.device:
            self.groups = self.groups.to(speed.device)
        return self.groups

    def rows(self) -> list[dict]:
        """Per group with steps: ``{"group": label, "steps", "tracking_error", "speed_along_command",
        "command_speed"}`` (means over the group's steps)."""
        return self._rows("group", self.labels)


def pooled(rows: list[dict]) -> dict:
    """The rows of a profile pooled into one over all their steps: ``{"steps", "tracking_error",
    "speed_along_command", "command_speed"}``. ``command_speed`` is also the tracking error a robot standing still
    would have on these steps; ``speed_along_command`` how much of it the policy walks."""
    steps = sum(r["steps"] for r in rows)
    if steps == 0:
        raise ValueError("pooled: no steps in the rows")
    keys = ("tracking_error", "speed_along_command", "command_speed")
    return {"steps": steps, **{k: sum(r["steps"] * r[k] for r in rows) / steps for k in keys}}


def band_label(band: list) -> str:
    """``"0.25-0.50"`` for a band ``[lo, hi]`` of :meth:`SpeedProfile.rows`, ``">= 1.00"`` for an open one."""
    lo, hi = band
    return f"{lo:.2f}-{hi:.2f}" if hi is not None else f">= {lo:.2f}"


def profile_summary(rows: list[dict]) -> str:
    """One line of :meth:`SpeedProfile.rows` or :meth:`DirectionProfile.rows`: per band or sector, the speed along
    the command against the commanded speed."""
    return "; ".join(
        f"{band_label(r['band']) if 'band' in r else r['sector']}: {r['speed_along_command']:.2f} of "
        f"{r['command_speed']:.2f} m/s (error {r['tracking_error']:.3f})"
        for r in rows
    )


def along_summary(rows: list[dict]) -> str:
    """One line of :func:`pooled` ``rows``: how far the policy walks along its commands against the commanded speed,
    which is the tracking error of standing still."""
    p = pooled(rows)
    return (
        f"along the commands: {p['speed_along_command']:.3f} of {p['command_speed']:.3f} m/s "
        f"(standing still would track at {p['command_speed']:.3f} m/s)"
    )
