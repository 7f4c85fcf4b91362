"""io.yaml's ``height_scan`` block (the scan a rough-terrain controller observes: grid, offset, clip), ``foot_heights``
block (each foot's height above the terrain below it: feet, clip, scale) and ``terrain`` block (the generated
terrain of training, by its generator cfg and seed, to regenerate; nothing downloaded or stored)."""

from __future__ import annotations

import numpy as np

SCAN_MEASUREMENT = (
    "height_scan: base z minus the terrain height straight below each point of pattern_xy (base position plus the "
    "point turned by the base's yaw) [m]; the controller subtracts offset and clips to +-clip"
)

FOOT_HEIGHTS_MEASUREMENT = (
    "foot_heights: z of each foot's lowest point (its sphere's centre minus its radius) minus the terrain height "
    "straight below the foot's centre, in the order of feet [m]; the controller clips it to +-clip"
)


def height_scan_block(env) -> dict:
    """The ``height_scan`` block of ``env``'s scan (``cfg.height_scan``; its points as the env builds them)."""
    c = env.cfg.height_scan
    return {
        "size": [float(s) for s in c.size],
        "resolution": float(c.resolution),
        "ordering": "xy",
        "alignment": "yaw",
        "pattern_xy": np.round(env.scan_pattern.detach().cpu().double().numpy(), 6).tolist(),
        "offset": float(c.offset),
        "clip": float(c.clip),
        "measurement": SCAN_MEASUREMENT,
        "observation": "clip(height_scan - offset, -clip, clip) * scale",
    }


def foot_heights_block(env) -> dict:
    """The ``foot_heights`` block of ``env``'s foot-height observation (``cfg.foot_heights``)."""
    c = env.cfg.foot_heights
    return {
        "feet": list(env.layout.foot_names),
        "foot_radius": round(float(env.foot_radius), 6),
        "clip": float(c.clip),
        "scale": float(c.scale),
        "measurement": FOOT_HEIGHTS_MEASUREMENT,
        "observation": "clip(foot_heights, -clip, clip) * scale",
    }


def terrain_block(env) -> dict:
    """The ``terrain`` block of ``env``'s generated terrain: the generator cfg as it ran (seed and curriculum
    resolved), the heightfield cell, and sizes and sub-terrain origins to check a regenerated terrain against."""
    from ..terrains.generated import generator_cfg

    cfg, terrain = env.cfg, env.terrain
    gen = generator_cfg(cfg.terrain.generator, cfg.seed, cfg.terrain.curriculum)
    return {
        "generator": gen.to_dict(),
        "heightmap_resolution": float(cfg.terrain.heightmap_resolution),
        "num_triangles": int(len(terrain.triangles)),
        "origins": np.round(np.asarray(terrain.origins, dtype=np.float64), 5).tolist(),
        "layout": "origins[level][column]: a level per row (difficulty), a sub-terrain type per column",
    }


def scan_and_terrain_blocks(env) -> dict:
    """``height_scan``, ``foot_heights`` and ``terrain`` blocks of ``env``, each present when the env has it."""
    out = {}
    if getattr(env.cfg, "height_scan", None) is not None:
        out["height_scan"] = height_scan_block(env)
    if getattr(env.cfg, "foot_heights", None) is not None:
        out["foot_heights"] = foot_heights_block(env)
    if getattr(env, "terrain", None) is not None:
        out["terrain"] = terrain_block(env)
    return out
