"""Terrain meshes and small scenes on them (newton models) for the terrain tests and benchmark."""

from __future__ import annotations

import math

import newton
import numpy as np
import warp as wp


def grid_mesh(heights: np.ndarray, spacing: float, origin: tuple[float, float] = (0.0, 0.0)) -> newton.Mesh:
    """Open triangle mesh of a height grid: vertex (i, j) at (x0 + j spacing, y0 + i spacing, heights[i, j]), each
    cell two triangles wound counter-clockwise seen from above."""
    ny, nx = heights.shape
    x = origin[0] + spacing * np.arange(nx)
    y = origin[1] + spacing * np.arange(ny)
    xx, yy = np.meshgrid(x, y)
    verts = np.stack([xx, yy, heights], axis=-1).reshape(-1, 3)
    i, j = np.meshgrid(np.arange(ny - 1), np.arange(nx - 1), indexing="ij")
    a = (i * nx + j).ravel()
    tris = np.concatenate([np.stack([a, a + 1, a + nx + 1], 1), np.stack([a, a + nx + 1, a + nx], 1)])
    return _mesh(verts, tris)


def _mesh(verts, tris) -> newton.Mesh:
    return newton.Mesh(
        vertices=np.asarray(verts, dtype=np.float32),
        indices=np.asarray(tris, dtype=np.int32).ravel(),
        compute_inertia=False,
        is_solid=False,
    )


def profile_mesh(xs, zs, half_width: float = 2.0) -> newton.Mesh:
    """A surface z(x) piecewise linear through the points (xs[k], zs[k]), constant in y over [-half_width,
    half_width]: one quad (two triangles) per segment."""
    xs, zs = np.asarray(xs, dtype=np.float64), np.asarray(zs, dtype=np.float64)
    n = len(xs)
    verts = np.concatenate([np.stack([xs, np.full(n, y), zs], 1) for y in (-half_width, half_width)])
    k = np.arange(n - 1)
    tris = np.concatenate([np.stack([k, k + 1, k + n + 1], 1), np.stack([k, k + n + 1, k + n], 1)])
    return _mesh(verts, tris)


def incline_mesh(angle: float, half: float = 2.0) -> newton.Mesh:
    """A square slope through the origin descending along +x at ``angle`` (the tilted-plane terrain)."""
    return profile_mesh([-half, half], [half * math.tan(angle), -half * math.tan(angle)], half)


def crease_mesh(angle: float, half: float = 2.0) -> newton.Mesh:
    """Two slopes meeting along the y axis: a valley (V) for angle > 0, a ridge for angle < 0."""
    h = half * math.tan(angle)
    return profile_mesh([-half, 0.0, half], [h, 0.0, h], half)


def step_mesh(height: float, half: float = 2.0) -> newton.Mesh:
    """Level ground at z = 0 for x < 0 and z = ``height`` for x > 0, joined by a vertical wall at x = 0."""
    return profile_mesh([-half, 0.0, 0.0, half], [0.0, 0.0, height, height], half)


def rough_terrain_mesh(size: float, cell: float, amplitude: float, seed: int = 0) -> newton.Mesh:
    """A random height grid (uniform in [-amplitude, amplitude]) of ``size`` x ``size`` m at ``cell`` m, centred
    on the origin."""
    n = int(round(size / cell)) + 1
    heights = np.random.default_rng(seed).uniform(-amplitude, amplitude, size=(n, n))
    return grid_mesh(heights, cell, origin=(-0.5 * size, -0.5 * size))


def _cfg(mu: float) -> newton.ModelBuilder.ShapeConfig:
    return newton.ModelBuilder.ShapeConfig(mu=mu, density=0.0)


def add_terrain(builder: newton.ModelBuilder, mesh: newton.Mesh, mu: float, xform=None) -> int:
    """A static terrain shape (a MESH on body -1)."""
    return builder.add_shape_mesh(-1, mesh=mesh, xform=xform, cfg=_cfg(mu))


def sphere_on_terrain_model(
    terrain: newton.Mesh | None,
    position: tuple[float, float, float],
    radius: float = 0.1,
    mass: float = 1.0,
    mu: float = 0.5,
    translation_only: bool = False,
    device: str = "cpu",
    requires_grad: bool = False,
) -> newton.Model:
    """A sphere at ``position`` above ``terrain`` (None: a Newton ground plane). ``translation_only``: three
    prismatic dofs instead of a free joint, so the sphere slides like a block and cannot roll."""
    builder = newton.ModelBuilder()
    inertia = 0.4 * mass * radius**2
    inertia_m = wp.mat33(inertia, 0.0, 0.0, 0.0, inertia, 0.0, 0.0, 0.0, inertia)
    if translation_only:
        body = builder.add_link(mass=mass, inertia=inertia_m)
        axes = [newton.ModelBuilder.JointDofConfig(axis=a) for a in (newton.Axis.X, newton.Axis.Y, newton.Axis.Z)]
        joint = builder.add_joint_d6(
            -1, body, linear_axes=axes, parent_xform=wp.transform(position, wp.quat_identity())
        )
        builder.add_articulation([joint])
    else:
        body = builder.add_body(xform=wp.transform(position, wp.quat_identity()), mass=mass, inertia=inertia_m)
    builder.add_shape_sphere(body, radius=radius, cfg=_cfg(mu))
    if terrain is None:
        builder.add_ground_plane(cfg=_cfg(mu))
    else:
        add_terrain(builder, terrain, mu)
    return builder.finalize(device=device, requires_grad=requires_grad)


def box_on_terrain_model(
    terrain: newton.Mesh | None,
    position: tuple[float, float, float],
    half_extents: tuple[float, float, float] = (0.1, 0.1, 0.1),
    mass: float = 1.0,
    mu: float = 0.5,
    ground_height: float = 0.0,
    device: str = "cpu",
) -> newton.Model:
    """A free box (eight corner candidates) at ``position`` above ``terrain`` (None: a Newton ground plane at
    ``ground_height``)."""
    builder = newton.ModelBuilder()
    hx, hy, hz = half_extents
    inertia = wp.mat33(np.diag([hy**2 + hz**2, hx**2 + hz**2, hx**2 + hy**2]) * mass / 3.0)
    body = builder.add_body(xform=wp.transform(position, wp.quat_identity()), mass=mass, inertia=inertia)
    builder.add_shape_box(body, hx=hx, hy=hy, hz=hz, cfg=_cfg(mu))
    if terrain is None:
        builder.add_shape_plane(
            body=-1, xform=wp.transform((0.0, 0.0, ground_height)), width=0.0, length=0.0, cfg=_cfg(mu)
        )
    else:
        add_terrain(builder, terrain, mu)
    return builder.finalize(device=device)
