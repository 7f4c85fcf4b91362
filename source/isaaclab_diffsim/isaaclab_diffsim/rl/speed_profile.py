"""Velocity tracking by commanded speed: how fast a policy goes along its command, per band of command speed.

A policy that tracks slow commands and saturates on fast ones has a tracking error that grows with |v_cmd| and a
speed along the command that stops growing; the episode-mean error of :func:`~.evaluation.evaluate` mixes both.
"""

from __future__ import annotations

import math

import torch

SPEED_BANDS = (0.0, 0.25, 0.5, 0.75, 1.0, math.inf)
"""Edges of the command-speed bands [m/s]: band k holds the steps with ``SPEED_BANDS[k] <= |v_xy,cmd| <
SPEED_BANDS[k + 1]`` (Isaac Lab's velocity commands reach sqrt(2) m/s)."""


class SpeedProfile:
    """Per-band sums over evaluated steps of |v_cmd - v| (the tracking error), of v . v_cmd / |v_cmd| (the speed along
    the command; 0 for a zero command) and of |v_cmd|; :meth:`rows` gives their means."""

    def __init__(self, bands: tuple[float, ...] = SPEED_BANDS):
        if len(bands) < 2 or any(not b > a for a, b in zip(bands, bands[1:])) or bands[0] != 0.0:
            raise ValueError(f"speed bands must start at 0 and increase, got {bands!r}")
        self.bands = tuple(float(b) for b in bands)
        self._edges = torch.tensor(self.bands[1:-1], dtype=torch.float64)
        self._sums = torch.zeros(4, len(self.bands) - 1, dtype=torch.float64)  # steps, error, along, speed per band

    def add(self, command_xy: torch.Tensor, velocity_xy: torch.Tensor, mask: torch.Tensor) -> None:
        """Count the steps of the envs where ``mask``: commanded and achieved planar velocities (n, 2), base frame."""
        cmd, vel = command_xy[mask].double(), velocity_xy[mask].double()  # summed where they are: no host sync
        if self._sums.device != cmd.device:
            self._sums, self._edges = self._sums.to(cmd.device), self._edges.to(cmd.device)
        speed = cmd.norm(dim=1)
        along = torch.where(speed > 0.0, (cmd * vel).sum(dim=1) / speed.clamp_min(1e-12), 0.0)
        band = torch.bucketize(speed, self._edges, right=True)
        terms = torch.stack([torch.ones_like(speed), (cmd - vel).norm(dim=1), along, speed])
        self._sums.index_add_(1, band, terms)

    def rows(self) -> list[dict]:
        """Per band with steps: ``{"band": [lo, hi], "steps", "tracking_error", "speed_along_command",
        "command_speed"}`` (means over the band's steps; ``hi`` None for an open band)."""
        steps, error, along, speed = self._sums.cpu().tolist()
        out = []
        for k, n in enumerate(steps):
            if n == 0.0:
                continue
            hi = self.bands[k + 1]
            out.append(
                {
                    "band": [self.bands[k], None if math.isinf(hi) else hi],
                    "steps": int(n),
                    "tracking_error": error[k] / n,
                    "speed_along_command": along[k] / n,
                    "command_speed": speed[k] / n,
                }
            )
        return out


def band_label(band: list) -> str:
    """``"0.25-0.50"`` for a band ``[lo, hi]`` of :meth:`SpeedProfile.rows`, ``">= 1.00"`` for an open one."""
    lo, hi = band
    return f"{lo:.2f}-{hi:.2f}" if hi is not None else f">= {lo:.2f}"


def profile_summary(rows: list[dict]) -> str:
    """One line of :meth:`SpeedProfile.rows`: per band, the speed along the command against the commanded speed."""
    return "; ".join(
        f"{band_label(r['band'])}: {r['speed_along_command']:.2f} of {r['command_speed']:.2f} m/s "
        f"(error {r['tracking_error']:.3f})"
        for r in rows
    )
