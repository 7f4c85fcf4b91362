"""Static terrain colliders: triangle meshes (GeoType.MESH) and heightfields (GeoType.HFIELD) on body -1.

Each terrain shape becomes one world-space ``wp.Mesh`` (its shape transform and scale baked into the vertices, so a
query needs no transform); its BVH is the broad phase of the per-step closest-point query and rays
(terrain_frames.py). The terrain is a height field (below its surface is solid); the triangle winding is not used.
"""

from __future__ import annotations

from dataclasses import dataclass

import newton
import numpy as np
import warp as wp

TERRAIN_TYPES = (int(newton.GeoType.MESH), int(newton.GeoType.HFIELD))
TERRAIN_QUERY_DISTANCE = 1.0
"""[m] beyond a candidate's radius: terrain farther than this from a candidate point is out of reach (no contact;
the candidate's distance reads TERRAIN_QUERY_DISTANCE)."""


@wp.struct
class Terrain:
    """What the terrain-frame kernel reads: per terrain slot its mesh id, per candidate its slot (-1: a plane)."""

    mesh: wp.array(dtype=wp.uint64)
    cand_terrain: wp.array(dtype=int)
    query_distance: float


@dataclass
class TerrainColliders:
    """The terrain shapes of a model (slot k is shape ``shapes[k]``), their meshes (kept alive here) and the
    kernel struct."""

    shapes: list[int]
    meshes: list[wp.Mesh]
    data: Terrain


def is_terrain(shape_type: int) -> bool:
    return shape_type in TERRAIN_TYPES


def _heightfield_triangles(hf: newton.Heightfield, scale: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Vertices and triangles of a heightfield in its shape frame: vertex (row, col) at x = -hx + col dx,
    y = -hy + row dy, z = min_z + data (max_z - min_z), all scaled by ``scale``; cell (row, col) split along its
    (p00, p11) diagonal, both triangles wound counter-clockwise seen from +z (Newton's heightfield layout)."""
    nrow, ncol = int(hf.nrow), int(hf.ncol)
    data = np.asarray(hf.data, dtype=np.float64).reshape(nrow, ncol)
    x = np.linspace(-hf.hx, hf.hx, ncol)
    y = np.linspace(-hf.hy, hf.hy, nrow)
    z = hf.min_z + data * (hf.max_z - hf.min_z)
    xx, yy = np.meshgrid(x, y)
    verts = np.stack([xx, yy, z], axis=-1).reshape(-1, 3) * np.asarray(scale[:3], dtype=np.float64)
    r, c = np.meshgrid(np.arange(nrow - 1), np.arange(ncol - 1), indexing="ij")
    p00 = (r * ncol + c).ravel()
    p10, p01, p11 = p00 + 1, p00 + ncol, p00 + ncol + 1
    tris = np.concatenate([np.stack([p00, p10, p11], 1), np.stack([p00, p11, p01], 1)])
    return verts, tris


def terrain_triangles(model: newton.Model, s: int) -> tuple[np.ndarray, np.ndarray]:
    """World-space vertices (V, 3) and triangles (T, 3) of terrain shape ``s``. Raises ValueError on an empty or
    degenerate mesh."""
    shape_type = int(model.shape_type.numpy()[s])
    scale = model.shape_scale.numpy()[s]
    source = model.shape_source[s]
    name = newton.GeoType(shape_type).name
    if shape_type == int(newton.GeoType.HFIELD):
        verts, tris = _heightfield_triangles(source, scale)
    else:
        if source is None or getattr(source, "vertices", None) is None or getattr(source, "indices", None) is None:
            raise ValueError(f"SolverMoreauGS: static {name} shape {s} has no source mesh")
        verts = np.asarray(source.vertices, dtype=np.float64).reshape(-1, 3) * np.asarray(scale[:3], np.float64)
        tris = np.asarray(source.indices, dtype=np.int64).reshape(-1, 3)
    if verts.shape[0] == 0 or tris.shape[0] == 0:
        raise ValueError(f"SolverMoreauGS: static {name} shape {s} (terrain) has no triangles")
    if tris.min() < 0 or tris.max() >= verts.shape[0]:
        raise ValueError(f"SolverMoreauGS: static {name} shape {s} has triangle indices outside its vertices")
    if not np.isfinite(verts).all():
        raise ValueError(f"SolverMoreauGS: static {name} shape {s} has non-finite vertices")
    area = np.linalg.norm(
        np.cross(verts[tris[:, 1]] - verts[tris[:, 0]], verts[tris[:, 2]] - verts[tris[:, 0]]), axis=1
    )
    if not (area > 0.0).any():
        raise ValueError(f"SolverMoreauGS: static {name} shape {s} (terrain) has only zero-area triangles")
    tf = model.shape_transform.numpy()[s]
    rot = np.array(wp.quat_to_matrix(wp.quat(*tf[3:7])), dtype=np.float64).reshape(3, 3)
    return verts @ rot.T + tf[:3], tris


def build_terrain(model: newton.Model, shapes: list[int], cand_terrain: np.ndarray, device) -> TerrainColliders | None:
    """Meshes of the terrain ``shapes`` (all validated) and the per-candidate slots ``cand_terrain`` (-1: plane);
    None when no candidate touches a terrain (plane-only scenes launch nothing extra)."""
    triangles = [terrain_triangles(model, s) for s in shapes]
    if not (np.asarray(cand_terrain) >= 0).any():
        return None
    meshes = [
        wp.Mesh(
            points=wp.array(verts.astype(np.float32), dtype=wp.vec3, device=device),
            indices=wp.array(tris.astype(np.int32).ravel(), dtype=int, device=device),
        )
        for verts, tris in triangles
    ]
    t = Terrain()
    t.mesh = wp.array(np.array([m.id for m in meshes], dtype=np.uint64), dtype=wp.uint64, device=device)
    t.cand_terrain = wp.array(np.asarray(cand_terrain, dtype=np.int32), dtype=int, device=device)
    t.query_distance = TERRAIN_QUERY_DISTANCE
    return TerrainColliders(shapes=list(shapes), meshes=meshes, data=t)
