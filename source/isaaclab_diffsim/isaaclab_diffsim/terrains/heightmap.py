"""A terrain rasterised once into a heightfield, and its heights at any (x, y) as a differentiable torch function."""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F
import warp as wp


@wp.kernel
def _cast_down(
    mesh: wp.uint64,
    x0: float,
    y0: float,
    cell: float,
    z_top: float,
    z_miss: float,
    heights: wp.array2d(dtype=float),
):
    """heights[i, j]: z of the first surface a ray straight down from (x0 + j cell, y0 + i cell, z_top) meets."""
    i, j = wp.tid()
    start = wp.vec3(x0 + float(j) * cell, y0 + float(i) * cell, z_top)
    hit = wp.mesh_query_ray(mesh, start, wp.vec3(0.0, 0.0, -1.0), 2.0 * (z_top - z_miss) + 1.0)
    if hit.result:
        heights[i, j] = z_top - hit.t
    else:
        heights[i, j] = z_miss


class HeightMap:
    """Heights ``heights[i, j]`` at (x0 + j cell, y0 + i cell); :meth:`__call__` interpolates them bilinearly
    (exact on a terrain that is linear over each cell, within a cell of sharp edges). Points outside the grid take
    the height of the nearest edge cell."""

    def __init__(self, heights: torch.Tensor, x0: float, y0: float, cell: float):
        self.heights, self.x0, self.y0, self.cell = heights, float(x0), float(y0), float(cell)
        self.ny, self.nx = heights.shape
        self._flat = heights.reshape(-1)

    @classmethod
    def from_mesh(cls, vertices: np.ndarray, triangles: np.ndarray, cell: float, device) -> HeightMap:
        """Cast a ray down at every grid point over the mesh's horizontal bounds (Warp's BVH ray query); a ray that
        misses reads the mesh's lowest z."""
        lo, hi = vertices.min(0), vertices.max(0)
        nx, ny = int(np.ceil((hi[0] - lo[0]) / cell)) + 1, int(np.ceil((hi[1] - lo[1]) / cell)) + 1
        mesh = wp.Mesh(
            points=wp.array(vertices.astype(np.float32), dtype=wp.vec3, device="cpu"),
            indices=wp.array(triangles.astype(np.int32).ravel(), dtype=int, device="cpu"),
        )
        heights = wp.zeros((ny, nx), dtype=float, device="cpu")
        z_top = float(hi[2]) + 1.0
        wp.launch(
            _cast_down,
            dim=(ny, nx),
            inputs=[mesh.id, float(lo[0]), float(lo[1]), cell, z_top, float(lo[2])],
            outputs=[heights],
            device="cpu",
        )
        return cls(torch.as_tensor(heights.numpy(), device=device), lo[0], lo[1], cell)

    def __call__(self, xy: torch.Tensor) -> torch.Tensor:
        """Terrain height at the points ``xy`` (..., 2) [m], shape (...); differentiable w.r.t. ``xy``."""
        u = ((xy[..., 0] - self.x0) / self.cell).clamp(0.0, self.nx - 1)
        v = ((xy[..., 1] - self.y0) / self.cell).clamp(0.0, self.ny - 1)
        j = u.detach().floor().clamp(max=self.nx - 2).long()
        i = v.detach().floor().clamp(max=self.ny - 2).long()
        fu, fv = u - j, v - i
        k = i * self.nx + j
        h = self._flat
        bottom = h[k] + fu * (h[k + 1] - h[k])
        top = h[k + self.nx] + fu * (h[k + self.nx + 1] - h[k + self.nx])
        return bottom + fv * (top - bottom)

    def edge_map(self, radius: float, step: float) -> HeightMap:
        """How close to a terrain edge each grid point is: the share of the grid points within ``radius`` [m] along x
        and y of it (a square) that are edge points, those around which the heights within ``radius`` span more than
        ``step`` [m] (a stair or box edge, a drop). It is 0 at ``2 radius`` from any edge and largest on it; read with
        :meth:`__call__` its gradient w.r.t. xy points towards the nearest edges within that distance."""
        r = int(round(radius / self.cell))
        h = self.heights[None, None]
        highest = F.max_pool2d(h, 2 * r + 1, stride=1, padding=r)
        lowest = -F.max_pool2d(-h, 2 * r + 1, stride=1, padding=r)
        edge = ((highest - lowest) > step).to(self.heights.dtype)
        near = F.avg_pool2d(edge, 2 * r + 1, stride=1, padding=r, count_include_pad=True)[0, 0]
        return HeightMap(near, self.x0, self.y0, self.cell)
