"""Termination terms of the manager-based velocity tasks on rough terrain."""

from __future__ import annotations

import torch
from isaaclab.managers import SceneEntityCfg


def base_height_over_terrain_below(
    env,
    minimum_height: float,
    asset_cfg: SceneEntityCfg | None = None,
    sensor_cfg: SceneEntityCfg | None = None,
) -> torch.Tensor:
    """Terminate when the root is less than ``minimum_height`` above the terrain under it: the root height minus
    the mean height of the ray caster's finite hits (the world height itself where every ray missed). ``asset_cfg``
    defaults to the ``robot``, ``sensor_cfg`` to the ``height_scanner``.

    The rough-terrain counterpart of Isaac Lab's ``root_height_below_minimum`` (world z, flat ground only), for
    robots whose torso does not collide (the DiffSim presets collide the feet only, so base contact never fires)."""
    asset = env.scene[(asset_cfg or SceneEntityCfg("robot")).name]
    hits_z = env.scene.sensors[(sensor_cfg or SceneEntityCfg("height_scanner")).name].data.ray_hits_w.torch[..., 2]
    finite = torch.isfinite(hits_z)
    count = finite.sum(dim=1)
    ground = torch.where(finite, hits_z, torch.zeros_like(hits_z)).sum(dim=1) / count.clamp(min=1)
    ground = torch.where(count > 0, ground, torch.zeros_like(ground))
    return asset.data.root_pos_w.torch[:, 2] - ground < minimum_height
