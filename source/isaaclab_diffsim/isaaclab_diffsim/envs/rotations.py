"""Quaternion helpers for (x, y, z, w) quaternions, as Newton stores them (differentiable torch)."""

import torch


def quat_rotate_inverse(q: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """Rotate v by the inverse of unit quaternion q: R(q)^T v."""
    u, w = q[:, :3], q[:, 3:4]
    t = 2.0 * torch.cross(u, v, dim=1)
    return v - w * t + torch.cross(u, t, dim=1)


def quat_rotate(q: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """Rotate v by unit quaternion q: R(q) v."""
    u, w = q[:, :3], q[:, 3:4]
    t = 2.0 * torch.cross(u, v, dim=1)
    return v + w * t + torch.cross(u, t, dim=1)


def yaw_quat(yaw: torch.Tensor) -> torch.Tensor:
    """Quaternion of a rotation by ``yaw`` about z."""
    z = torch.zeros_like(yaw)
    return torch.stack([z, z, torch.sin(0.5 * yaw), torch.cos(0.5 * yaw)], dim=1)
