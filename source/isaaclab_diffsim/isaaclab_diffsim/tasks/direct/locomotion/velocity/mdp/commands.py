"""Base-velocity commands with the semantics of Isaac Lab's ``UniformVelocityCommand``."""

from __future__ import annotations

from collections.abc import Callable

import torch
from isaaclab.utils.math import wrap_to_pi


def sample_velocity_commands(uniform: Callable[..., torch.Tensor], num_envs: int, cfg) -> tuple:
    """Draws of one resampling for every env (the caller keeps those of the envs it resamples): (velocities (N, 3),
    heading targets or None, heading-env flags or None, standing-env flags or None). ``uniform(shape, lo, hi)``
    draws; ``cfg`` is the task's ``DiffCommandsCfg`` (None entries: that draw is off)."""
    c, n = cfg, num_envs
    sampled = torch.stack([uniform((n,), *c.lin_vel_x), uniform((n,), *c.lin_vel_y), uniform((n,), *c.ang_vel_z)], 1)
    heading = is_heading = is_standing = None
    if c.heading_command:
        heading = uniform((n,), *c.heading)
        is_heading = uniform((n,), 0.0, 1.0) <= c.rel_heading_envs
    if c.rel_standing_envs > 0.0:
        is_standing = uniform((n,), 0.0, 1.0) <= c.rel_standing_envs
    return sampled, heading, is_heading, is_standing


def heading_yaw_rate(
    base_quat: torch.Tensor, heading_target: torch.Tensor, stiffness: float, ang_vel_range: tuple[float, float]
) -> torch.Tensor:
    """Yaw-rate command turning the base (quaternion xyzw) towards ``heading_target``:
    ``clip(stiffness * wrap_to_pi(target - heading), ang_vel_range)``, differentiable in the base's orientation."""
    x, y, z, w = base_quat.unbind(1)
    # Isaac Lab's ArticulationData.heading_w: the yaw of the base's x axis, atan2(R[1, 0], R[0, 0])
    heading_w = torch.atan2(2.0 * (w * z + x * y), 1.0 - 2.0 * (y * y + z * z))
    return torch.clip(stiffness * wrap_to_pi(heading_target - heading_w), min=ang_vel_range[0], max=ang_vel_range[1])


def standing_commands(commands: torch.Tensor, is_standing: torch.Tensor) -> torch.Tensor:
    """The commands with the standing envs' set to zero."""
    return commands * (~is_standing)[:, None]


def moving_command(commands: torch.Tensor, threshold: float = 0.1) -> torch.Tensor:
    """Envs told to move (bool): planar command above ``threshold`` [m/s] (Isaac Lab's feet_air_time gate)."""
    return commands[:, :2].norm(dim=1) > threshold


def still_command(commands: torch.Tensor, threshold: float) -> torch.Tensor:
    """Envs told to stand (bool): planar and yaw-rate command both below ``threshold``."""
    return (commands[:, :2].norm(dim=1) < threshold) & (commands[:, 2].abs() < threshold)
