"""Interval events that act on the differentiable state: velocity changes added inside the autograd graph."""

from __future__ import annotations

import torch


def leg_kick_velocity_change(
    kick: torch.Tensor, leg: torch.Tensor, joint_legs: torch.Tensor, due: torch.Tensor, base_dofs: int
) -> torch.Tensor:
    """The joint-velocity change (N, base dofs + joints) of leg kicks: ``kick`` (N, joints) drawn per joint, kept
    on the joints of each env's drawn ``leg`` (N,) for the envs of ``due``, zero on the base's dofs."""
    dq = kick * ((joint_legs[None, :] == leg[:, None]) & due[:, None])
    return torch.cat([dq.new_zeros(dq.shape[0], base_dofs), dq], dim=1)
