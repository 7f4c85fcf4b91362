"""The height scan of Isaac Lab's ANYmal rough task (a yaw-aligned grid around the base) as a torch function."""

from __future__ import annotations

from collections.abc import Callable

import torch


def grid_pattern(size: tuple[float, float], resolution: float, device=None) -> torch.Tensor:
    """(P, 2) points of a ``size`` = (length along x, width along y) grid at ``resolution``, centred on 0, x running
    fastest (Isaac Lab's ``GridPatternCfg`` with ``ordering="xy"``: 17 x 11 = 187 points for 1.6 x 1.0 m at 0.1)."""
    x = torch.arange(-size[0] / 2, size[0] / 2 + 1e-9, resolution, device=device)
    y = torch.arange(-size[1] / 2, size[1] / 2 + 1e-9, resolution, device=device)
    yy, xx = torch.meshgrid(y, x, indexing="ij")
    return torch.stack([xx.reshape(-1), yy.reshape(-1)], 1)


def yaw_axes(quat: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(cos yaw, sin yaw) of quaternions (N, 4) (x, y, z, w): the base's x axis projected on the ground, normalised."""
    x, y, z, w = quat.unbind(-1)
    c, s = 1.0 - 2.0 * (y * y + z * z), 2.0 * (x * y + w * z)
    norm = torch.sqrt(c * c + s * s + 1e-12)
    return c / norm, s / norm


def scan_points(base_pos: torch.Tensor, base_quat: torch.Tensor, pattern: torch.Tensor) -> torch.Tensor:
    """World (x, y) of the pattern (P, 2) around each base (N, 3), turned by the base's yaw: (N, P, 2)."""
    c, s = (a[:, None] for a in yaw_axes(base_quat))
    px, py = pattern[:, 0], pattern[:, 1]
    return torch.stack([base_pos[:, 0:1] + c * px - s * py, base_pos[:, 1:2] + s * px + c * py], -1)


def height_scan(
    base_pos: torch.Tensor,
    base_quat: torch.Tensor,
    pattern: torch.Tensor,
    ground: Callable[[torch.Tensor], torch.Tensor],
    offset: float,
) -> torch.Tensor:
    """Isaac Lab's ``height_scan`` without its clip: base height - ``ground(xy)`` at each scan point - ``offset``,
    (N, P); differentiable w.r.t. the base's position and yaw (e.g. ``ground`` a :class:`HeightMap`)."""
    return base_pos[:, 2:3] - ground(scan_points(base_pos, base_quat, pattern)) - offset
