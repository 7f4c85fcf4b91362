"""Isaac Lab's terrain generator, run reproducibly, as a triangle mesh and the sub-terrains' origins."""

from __future__ import annotations

import contextlib
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


def generator_cfg(cfg: TerrainGeneratorCfg, seed: int, curriculum: bool) -> TerrainGeneratorCfg:
    """A copy of ``cfg`` to generate with: its ``seed`` (``seed`` if that is None), ``curriculum`` (difficulty growing
    with the row), no cache."""
    cfg = cfg.copy()
    cfg.seed = int(seed) if cfg.seed is None else cfg.seed
    cfg.curriculum, cfg.use_cache = bool(curriculum), False
    return cfg


@contextlib.contextmanager
def seeded_generation(seed: int):
    """Within the block numpy's and torch's global generators (which the sub-terrain functions draw from) start from
    ``seed``; both are restored afterwards."""
    state = np.random.get_state()
    try:
        with torch.random.fork_rng(devices=range(torch.cuda.device_count())):
            np.random.seed(int(seed) % 2**32)
            torch.manual_seed(int(seed))
            yield
    finally:
        np.random.set_state(state)


def terrain_from_generator(mesh, origins, cfg: TerrainGeneratorCfg) -> GeneratedTerrain:
    """The :class:`GeneratedTerrain` of a generator's (or Isaac Lab ``TerrainImporter``'s) trimesh and origins."""
    return GeneratedTerrain(
        vertices=np.asarray(mesh.vertices, dtype=np.float64),
        triangles=np.asarray(mesh.faces, dtype=np.int64),
        origins=np.asarray(origins, dtype=np.float64),
        sub_terrain_size=(float(cfg.size[0]), float(cfg.size[1])),
    )


def generate_terrain(cfg: TerrainGeneratorCfg, seed: int, curriculum: bool) -> GeneratedTerrain:
    """Run ``isaaclab.terrains.TerrainGenerator`` on the CPU with :func:`generator_cfg` under
    :func:`seeded_generation` (the same terrain as Isaac Lab's ``TerrainImporter`` makes in that block)."""
    from isaaclab.terrains import TerrainGenerator

    cfg = generator_cfg(cfg, seed, curriculum)
    with seeded_generation(cfg.seed):
        gen = TerrainGenerator(cfg, device="cpu")
    return terrain_from_generator(gen.terrain_mesh, gen.terrain_origins, cfg)
