"""Foot measures: where the foot spheres are, how high above the ground, whether they touch it."""

from __future__ import annotations

from collections.abc import Callable

import torch

from ......envs.rotations import quat_rotate


def foot_centres(
    body_q: torch.Tensor, foot_bodies: torch.Tensor, foot_offsets: torch.Tensor, num_envs: int, num_feet: int
) -> torch.Tensor:
    """Centre of each foot sphere, (num_envs, feet, 3): the bodies ``foot_bodies`` (num_envs, feet) of the body
    poses ``body_q`` (bodies, 7: position, quaternion xyzw) moved by the sphere offsets ``foot_offsets``
    (num_envs * feet, 3) in the body frames."""
    pose = body_q[foot_bodies.reshape(-1)]
    return (pose[:, :3] + quat_rotate(pose[:, 3:7], foot_offsets)).view(num_envs, num_feet, 3)


def height_above_ground(
    pos: torch.Tensor, ground_height: Callable[[torch.Tensor], torch.Tensor] | None = None
) -> torch.Tensor:
    """Height of the points ``pos`` (..., 3) above the ground below them: their z above the ground plane, or minus
    ``ground_height(xy)`` (a terrain's heightfield, differentiable w.r.t. xy)."""
    return pos[..., 2] if ground_height is None else pos[..., 2] - ground_height(pos[..., :2])


def feet_contact(contact_impulses: torch.Tensor, sim_dt: float, threshold: float = 1.0) -> torch.Tensor:
    """Feet in contact (bool, (N, feet)): the normal impulse of the last physics step (N, feet, 3; normal first) is
    above ``threshold`` [N] over ``sim_dt`` (1 N, Isaac Lab's contact sensor threshold)."""
    return contact_impulses[..., 0] > threshold * sim_dt


def update_air_time(air_time: torch.Tensor, contact: torch.Tensor, step_dt: float) -> tuple[torch.Tensor, torch.Tensor]:
    """(first contacts, new air times): a foot touches down when in contact after time in the air; air time
    restarts at 0 in contact and grows by ``step_dt`` otherwise."""
    first_contact = contact & (air_time > 0.0)
    return first_contact, torch.where(contact, torch.zeros_like(air_time), air_time + step_dt)
