"""The sub-terrain type of the tile below points of a generated terrain, one-hot: a privileged observation for
diagnostics (``env.terrain_oracle``), which a deployed robot does not have."""

from __future__ import annotations

import torch
from isaaclab.terrains import TerrainGeneratorCfg

from .grid_groups import column_sub_terrains


class TileTypes:
    """One-hot type of the sub-terrain below points (x, y) of a terrain grid laid out as Isaac Lab's generator lays
    it: rows along x, columns along y, tiles of ``sub_terrain_size`` centred on ``origins``; a column's type is its
    sub-terrain (:func:`column_sub_terrains`). The encoding has one entry per sub-terrain of ``gen`` (in its order)
    and a last entry for points off the grid (the border).

    Args:
        gen: The generator's config (its sub-terrains and their proportions over the columns).
        origins: (rows, cols, 3) sub-terrain origins [m].
        sub_terrain_size: (x, y) size of a tile [m].
    """

    def __init__(self, gen: TerrainGeneratorCfg, origins: torch.Tensor, sub_terrain_size: tuple[float, float]):
        self.num_rows, self.num_cols = origins.shape[:2]
        self.size = torch.tensor(sub_terrain_size, dtype=origins.dtype, device=origins.device)
        self.corner = origins[0, 0, 0:2] - 0.5 * self.size
        self.column_types = torch.as_tensor(column_sub_terrains(gen), device=origins.device).long()
        self.num_types = len(gen.sub_terrains)
        self.num_entries = self.encoding_size(gen)
        """Size of the encoding: the sub-terrain types and the border."""

    @staticmethod
    def encoding_size(gen: TerrainGeneratorCfg) -> int:
        """Size of the encoding for the terrain of ``gen``: one entry per sub-terrain and one for the border."""
        return len(gen.sub_terrains) + 1

    def types(self, xy: torch.Tensor) -> torch.Tensor:
        """(...,) sub-terrain index of the tile below the points ``xy`` (..., 2); ``num_types`` off the grid."""
        cell = torch.floor((xy.detach() - self.corner) / self.size).long()
        rows, cols = cell[..., 0], cell[..., 1]
        inside = (rows >= 0) & (rows < self.num_rows) & (cols >= 0) & (cols < self.num_cols)
        return torch.where(inside, self.column_types[cols.clamp(0, self.num_cols - 1)], self.num_types)

    def one_hot(self, xy: torch.Tensor) -> torch.Tensor:
        """(..., ``num_entries``) one-hot of :meth:`types` (float; no gradient)."""
        return torch.nn.functional.one_hot(self.types(xy), self.num_entries).to(xy.dtype)
