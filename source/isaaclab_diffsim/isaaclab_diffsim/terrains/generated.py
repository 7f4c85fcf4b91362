"""Isaac Lab's terrain generator, run reproducibly, as a triangle mesh and the sub-terrains' origins."""

from __future__ import annotations

from dataclasses import dataclass

import newton
import numpy as np
import torch
from isaaclab.terrains import TerrainGeneratorCfg


@dataclass
class GeneratedTerrain:
    """A generated terrain: world-space vertices (V, 3), triangles (T, 3) wound counter-clockwise seen from above,
    and the origin of every sub-terrain (rows = levels, cols = types, 3), all centred on the world origin as Isaac
    Lab's generator places them."""

    vertices: np.ndarray
    triangles: np.ndarray
    origins: np.ndarray
    sub_terrain_size: tuple[float, float]

    def newton_mesh(self) -> newton.Mesh:
        """The terrain as a Newton mesh for a static (body -1) MESH shape."""
        return newton.Mesh(
            vertices=self.vertices.astype(np.float32),
            indices=self.triangles.astype(np.int32).ravel(),
            compute_inertia=False,
            is_solid=False,
        )


def generate_terrain(cfg: TerrainGeneratorCfg, seed: int, curriculum: bool) -> GeneratedTerrain:
    """Run ``isaaclab.terrains.TerrainGenerator`` on the CPU with ``cfg`` (its ``seed``, or ``seed`` if that is None;
    ``curriculum``: difficulty growing with the row), no cache. The sub-terrain functions draw from numpy's and torch's
    global generators: both are seeded for the call and restored afterwards."""
    from isaaclab.terrains import TerrainGenerator

    cfg = cfg.copy()
    cfg.seed = int(seed) if cfg.seed is None else cfg.seed
    cfg.curriculum, cfg.use_cache = bool(curriculum), False
    state = np.random.get_state()
    try:
        with torch.random.fork_rng(devices=range(torch.cuda.device_count())):
            np.random.seed(cfg.seed % 2**32)
            torch.manual_seed(cfg.seed)
            gen = TerrainGenerator(cfg, device="cpu")
    finally:
        np.random.set_state(state)
    mesh = gen.terrain_mesh
    return GeneratedTerrain(
        vertices=np.asarray(mesh.vertices, dtype=np.float64),
        triangles=np.asarray(mesh.faces, dtype=np.int64),
        origins=np.asarray(gen.terrain_origins, dtype=np.float64),
        sub_terrain_size=(float(cfg.size[0]), float(cfg.size[1])),
    )
