"""The generated terrain a bundle was trained on, regenerated from io.yaml's ``terrain`` block (Isaac Lab's
generator cfg and seed; nothing downloaded) and rasterised into a heightfield: MuJoCo's ground in sim-to-sim."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..io_spec import BundleMismatchError

ORIGIN_ATOL = 1e-4
"""[m] The regenerated sub-terrain origins must be the exported ones within this (float32 rounding)."""


@dataclass
class BundleTerrain:
    """Heights ``heights[i, j]`` [m] of the terrain at (x0 + j cell, y0 + i cell), the sub-terrain ``origins``
    (levels, columns, 3) and the ``generator`` cfg that made it (sub-terrain names and proportions)."""

    heights: np.ndarray
    x0: float
    y0: float
    cell: float
    origins: np.ndarray
    generator: object


def terrain_generator_cfg(io: dict):
    """The ``TerrainGeneratorCfg`` of io.yaml's ``terrain.generator``: the rough task's terrain cfg with the
    bundle's values, and only its sub-terrains. Raises :class:`BundleMismatchError` (one line) for a bundle without
    a terrain block or with a generator cfg the rough task's cannot take."""
    from isaaclab.utils.dict import update_class_from_dict

    from ...terrains import rough_terrains_cfg

    block = io.get("terrain")
    if not block:
        raise BundleMismatchError(
            "the bundle's io.yaml has no terrain block: it was exported from a task without generated terrain (or "
            "before terrains were written to io.yaml); a terrain run needs a rough-task bundle"
        )
    data = block["generator"]
    gen = rough_terrains_cfg()
    names = list(data.get("sub_terrains", {}))
    unknown = sorted(set(names) - set(gen.sub_terrains))
    if unknown:
        raise BundleMismatchError(
            f"io.yaml terrain.generator.sub_terrains {unknown} are not sub-terrains of the rough task's terrain cfg "
            f"{sorted(gen.sub_terrains)}: cannot regenerate the terrain"
        )
    gen.sub_terrains = {k: gen.sub_terrains[k] for k in names}
    # fields that are None in the rough task's cfg (the seed, optional parameters) take the bundle's value as is:
    # Isaac Lab's dict update refuses to replace None
    for obj, values in [(gen, data)] + [(gen.sub_terrains[k], data["sub_terrains"][k]) for k in names]:
        for key, value in values.items():
            if hasattr(obj, key) and getattr(obj, key) is None and not isinstance(value, dict):
                setattr(obj, key, tuple(value) if isinstance(value, list) else value)
    try:
        update_class_from_dict(gen, data)
    except (KeyError, ValueError, TypeError) as err:
        raise BundleMismatchError(f"io.yaml terrain.generator cannot be read back: {err}") from None
    return gen


def with_proportions(gen, proportions: dict[str, float]):
    """A copy of generator cfg ``gen`` with the named sub-terrains at the given proportions (the others kept).
    Raises ValueError (one line) for a name that is not one of ``gen``'s sub-terrains, a negative or non-finite
    proportion, or proportions that leave no sub-terrain above zero."""
    unknown = sorted(set(proportions) - set(gen.sub_terrains))
    if unknown:
        raise ValueError(
            f"terrain proportions: {unknown} are not sub-terrains of the bundle's terrain {list(gen.sub_terrains)}"
        )
    bad = {k: v for k, v in proportions.items() if not (math.isfinite(v) and v >= 0)}
    if bad:
        raise ValueError(f"terrain proportions must be finite and >= 0, got {bad}")
    out = gen.copy()
    for name, value in proportions.items():
        out.sub_terrains[name].proportion = float(value)
    if sum(float(t.proportion) for t in out.sub_terrains.values()) <= 0:
        raise ValueError("terrain proportions leave no sub-terrain with a proportion > 0")
    return out


def bundle_terrain(io: dict, seed: int | None = None, proportions: dict[str, float] | None = None) -> BundleTerrain:
    """Regenerate the bundle's terrain (``seed``: another seed instead of the exported one; ``proportions``: those
    sub-terrains at other proportions, :func:`with_proportions`, e.g. the evaluation's mix for a bundle trained on
    a few types) in the curriculum layout (a level per row, a type per column: what the per-type and per-level
    reports group by, as ``evaluate_terrain.py`` evaluates) and rasterise it at io.yaml's
    ``terrain.heightmap_resolution`` as the env does. With the exported seed, the sub-terrain origins and the
    triangle count of the terrain the bundle was trained on must be the exported ones (:class:`BundleMismatchError`
    otherwise: another generator); a bundle trained without curriculum (tiles of random type and level) or
    evaluated at other proportions has its own terrain regenerated for that check."""
    from ...terrains import HeightMap, generate_terrain

    gen = terrain_generator_cfg(io)
    block = io["terrain"]
    if seed is not None:
        gen.seed = int(seed)
    evaluated = with_proportions(gen, proportions) if proportions else gen
    terrain = generate_terrain(evaluated, gen.seed, True)
    if seed is None:
        same = gen.curriculum and evaluated is gen
        trained = terrain if same else generate_terrain(gen, gen.seed, bool(gen.curriculum))
        want = np.asarray(block["origins"], dtype=np.float64)
        same_shape = want.shape == trained.origins.shape
        off = float(np.abs(trained.origins - want).max()) if same_shape else np.inf
        if off > ORIGIN_ATOL or len(trained.triangles) != int(block["num_triangles"]):
            raise BundleMismatchError(
                f"the regenerated terrain is not the bundle's (sub-terrain origins off by {off:.3g} m, "
                f"{len(trained.triangles)} triangles against {block['num_triangles']}): this Isaac Lab's terrain "
                "generator differs from the exporting one"
            )
    cell = float(block["heightmap_resolution"])
    heights = HeightMap.from_mesh(terrain.vertices, terrain.triangles, cell, "cpu")
    return BundleTerrain(
        heights.heights.numpy().astype(np.float64), heights.x0, heights.y0, cell, terrain.origins, evaluated
    )
