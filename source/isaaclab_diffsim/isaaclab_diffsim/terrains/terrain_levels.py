"""Env origins on a generated terrain by (level, type) and Isaac Lab's ``terrain_levels_vel`` curriculum rule."""

from __future__ import annotations

import torch


def terrain_level_moves(
    distance: torch.Tensor, command_xy: torch.Tensor, sub_terrain_size: float, episode_length_s: float
) -> tuple[torch.Tensor, torch.Tensor]:
    """(move_up, move_down) bool masks of Isaac Lab's ``terrain_levels_vel``: up when the robot walked farther than
    half a sub-terrain (``distance`` (N,) from its origin), down when it walked less than half the distance its
    command (N, 2) asks for over a full episode, and not up."""
    up = distance > sub_terrain_size / 2
    down = (distance < torch.linalg.norm(command_xy, dim=1) * episode_length_s * 0.5) & ~up
    return up, down


class TerrainLevels:
    """The sub-terrain of each env: a level (row of ``origins``, difficulty) and a type (column). As Isaac Lab's
    ``TerrainImporter``: types split the envs into equal consecutive blocks, initial levels are uniform in
    0..``max_init_level`` (None: all rows), levels past the top wrap to a random one. The levels are the env's state;
    this holds the origins, the types and the rules.

    Args:
        origins: (rows, cols, 3) sub-terrain origins [m].
        num_envs: Number of envs.
        generator: The env's random generator (initial and wrapped levels).
    """

    def __init__(self, origins: torch.Tensor, num_envs: int, generator: torch.Generator):
        self.origins, self.generator = origins, generator
        self.num_levels, num_types = origins.shape[:2]
        self.types = torch.div(
            torch.arange(num_envs, device=origins.device), num_envs / num_types, rounding_mode="floor"
        ).long()

    def initial_levels(self, max_init_level: int | None) -> torch.Tensor:
        """(num_envs,) levels uniform in 0..``max_init_level`` (clipped to the rows; None: every row)."""
        top = self.num_levels - 1 if max_init_level is None else min(int(max_init_level), self.num_levels - 1)
        return torch.randint(0, top + 1, self.types.shape, generator=self.generator, device=self.types.device)

    def env_origins(self, levels: torch.Tensor) -> torch.Tensor:
        """(num_envs, 3) origin of each env's sub-terrain at ``levels``."""
        return self.origins[levels, self.types]

    def moved(
        self, levels: torch.Tensor, envs: torch.Tensor, move_up: torch.Tensor, move_down: torch.Tensor
    ) -> torch.Tensor:
        """``levels`` with the envs of the bool mask ``envs`` one up or down (bool masks over all envs); below 0
        stays 0, past the top wraps to a random level."""
        levels = levels + (move_up.long() - move_down.long()) * envs
        wrapped = torch.randint(0, self.num_levels, levels.shape, generator=self.generator, device=levels.device)
        return torch.where(levels >= self.num_levels, wrapped, levels.clamp(min=0))
