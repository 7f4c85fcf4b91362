"""Episodes on a generated terrain grouped by sub-terrain type and by level: the layout of the per-terrain reports."""

from __future__ import annotations

import numpy as np
from isaaclab.terrains import TerrainGeneratorCfg


def column_sub_terrains(gen: TerrainGeneratorCfg) -> np.ndarray:
    """The sub-terrain index of each column: Isaac Lab's curriculum layout (proportions over the columns)."""
    proportions = np.array([c.proportion for c in gen.sub_terrains.values()], dtype=float)
    cumulative = np.cumsum(proportions / proportions.sum())
    return np.array([int(np.min(np.nonzero(c / gen.num_cols + 0.001 < cumulative)[0])) for c in range(gen.num_cols)])


def terrain_groups(
    gen: TerrainGeneratorCfg, columns, levels, tracking_errors, falls, tilted_falls=None
) -> dict[str, dict[str, float | int]]:
    """``{"type <sub-terrain name>" | "level <row>": {"episodes", "tracking_error", "fall_rate"}}`` of episodes on
    the columns ``columns`` and levels ``levels`` (arrays of one entry per episode, as the tracking errors [m/s] and
    falls (bool)); types first, in the sub-terrains' order, then the levels in increasing order. With
    ``tilted_falls`` (bool per episode: the falls whose base was tilted past the limit) each group also has
    ``tilted_fall_rate``."""
    columns, levels = np.asarray(columns), np.asarray(levels)
    errors, falls = np.asarray(tracking_errors, dtype=float), np.asarray(falls, dtype=float)
    names, sub = list(gen.sub_terrains), column_sub_terrains(gen)
    masks = [(f"type {names[s]}", np.isin(columns, np.nonzero(sub == s)[0])) for s in np.unique(sub[columns])]
    masks += [(f"level {lv}", levels == lv) for lv in np.unique(levels)]
    groups = {
        key: {
            "episodes": int(mask.sum()),
            "tracking_error": float(errors[mask].mean()),
            "fall_rate": float(falls[mask].mean()),
        }
        for key, mask in masks
    }
    if tilted_falls is not None:
        tilted = np.asarray(tilted_falls, dtype=float)
        for key, mask in masks:
            groups[key]["tilted_fall_rate"] = float(tilted[mask].mean())
    return groups
