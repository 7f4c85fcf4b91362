"""Termination terms: failures of the base and the time limit."""

from __future__ import annotations

import torch


def base_failure(
    base_height: torch.Tensor, projected_gravity: torch.Tensor, min_height: float, max_gravity_z: float
) -> torch.Tensor:
    """Failures (bool): the base below ``min_height`` above the ground, or tilted (:func:`base_tilted`)."""
    return (base_height < min_height) | base_tilted(projected_gravity, max_gravity_z)


def base_tilted(projected_gravity: torch.Tensor, max_gravity_z: float) -> torch.Tensor:
    """The base tilted so that gravity's z in the base frame is above ``max_gravity_z`` (-1 upright; -0.5: 60
    degrees of tilt), bool."""
    return projected_gravity[:, 2] > max_gravity_z


@torch.no_grad()
def time_out(episode_length: torch.Tensor, max_episode_length: int) -> torch.Tensor:
    return episode_length >= max_episode_length
