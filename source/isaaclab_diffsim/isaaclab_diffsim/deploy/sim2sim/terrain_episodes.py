"""Sim-to-sim on a bundle's terrain: which episodes run where (a level and a column per episode, at the sub-terrain's
origin) and their report per sub-terrain type and level, in the layout of ``scripts/experiments/evaluate_terrain.py``
(:func:`~isaaclab_diffsim.terrains.grid_groups.terrain_groups`)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...terrains.grid_groups import column_sub_terrains, terrain_groups


@dataclass(frozen=True)
class TerrainCell:
    """An episode's sub-terrain: its ``level`` (row of the grid) and ``column``, of type ``type_name``."""

    level: int
    column: int
    type_name: str


def terrain_cells(terrain, episodes: int, levels=None, types=None) -> list[TerrainCell]:
    """``episodes`` episodes per (level, sub-terrain type) over ``levels`` (None: every level) and ``types``
    (sub-terrain names; None: every type on the grid); a type's k-th episode runs on its k-th column (cycling over
    its columns). ValueError (one line) for a level off the grid or a type not on it."""
    gen = terrain.generator
    names, sub = list(gen.sub_terrains), column_sub_terrains(gen)
    on_grid = [names[s] for s in np.unique(sub)]
    num_levels = terrain.origins.shape[0]
    levels = list(range(num_levels)) if levels is None else [int(lv) for lv in levels]
    bad = [lv for lv in levels if not 0 <= lv < num_levels]
    if bad:
        raise ValueError(f"terrain levels {bad} are off the grid: its levels are 0..{num_levels - 1}")
    types = on_grid if types is None else list(types)
    unknown = [t for t in types if t not in on_grid]
    if unknown:
        raise ValueError(f"terrain types {unknown} are not on the bundle's terrain: its types are {on_grid}")
    cells = []
    for level in levels:
        for name in types:
            columns = np.nonzero(sub == names.index(name))[0]
            cells += [TerrainCell(level, int(columns[k % len(columns)]), name) for k in range(episodes)]
    return cells


def terrain_report(terrain, cells: list[TerrainCell], episodes) -> dict:
    """Episodes, tracking error and fall rate per ``"type <name>"`` and ``"level <row>"`` of ``episodes``
    (:class:`~isaaclab_diffsim.deploy.sim2sim.metrics.EpisodeMetrics`, one per cell)."""
    return terrain_groups(
        terrain.generator,
        [c.column for c in cells],
        [c.level for c in cells],
        [e.tracking_error for e in episodes],
        [e.fell for e in episodes],
    )
