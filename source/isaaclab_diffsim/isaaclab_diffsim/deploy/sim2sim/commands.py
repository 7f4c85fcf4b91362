"""The commands of a sim-to-sim episode (``scripts/deploy/sim2sim.py``): one per episode, held over it, the same in
both simulators."""

from __future__ import annotations

import numpy as np

FORWARD_VX_RANGE = (-1.0, 1.0)
"""Forward command range [m/s] of sim2sim's episodes by default (no lateral or yaw-rate command)."""


def draw_commands(
    episodes: int,
    vx_range: tuple[float, float],
    seed: int,
    vy_range: tuple[float, float] = (0.0, 0.0),
    yaw_range: tuple[float, float] = (0.0, 0.0),
) -> np.ndarray:
    """(episodes, 3) commands (vx, vy, yaw rate) uniform in their ranges, the same for both sims; with the default
    zero lateral and yaw ranges, forward commands only (drawn as before those ranges existed)."""
    rng = np.random.default_rng(seed)
    cmd = np.zeros((episodes, 3))
    cmd[:, 0] = rng.uniform(*vx_range, episodes)
    for axis, bounds in ((1, vy_range), (2, yaw_range)):
        if tuple(bounds) != (0.0, 0.0):
            cmd[:, axis] = rng.uniform(*bounds, episodes)
    return cmd
