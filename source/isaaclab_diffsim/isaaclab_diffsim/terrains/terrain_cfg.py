"""Configs of generated terrain in the differentiable env: the terrain and what the env observes of it."""

from __future__ import annotations

from isaaclab.terrains import MeshPlaneTerrainCfg, TerrainGeneratorCfg
from isaaclab.terrains.config.rough import ROUGH_TERRAINS_CFG
from isaaclab.utils import configclass
from isaaclab.utils.noise import UniformNoiseCfg

from ..utils.validation import Rule, check, integer, non_negative, optional, positive, sequence


def rough_terrains_cfg(num_rows: int = 10, num_cols: int = 20) -> TerrainGeneratorCfg:
    """Isaac Lab's ``ROUGH_TERRAINS_CFG`` (its six sub-terrain types and their proportions): ``num_rows`` difficulty
    levels x ``num_cols`` columns, Isaac Lab's 10 x 20 by default (a smaller grid for tests; 10 columns hold every
    type)."""
    cfg = ROUGH_TERRAINS_CFG.copy()
    cfg.num_rows, cfg.num_cols = num_rows, num_cols
    return cfg


@configclass
class DiffTerrainCfg:
    """Generated terrain (Isaac Lab's ``TerrainGenerator``) as the env's static mesh collider, with Isaac Lab's
    ``TerrainImporter`` conventions for the env origins: a level (row) and a type (column) per env."""

    generator: TerrainGeneratorCfg = rough_terrains_cfg()
    """The generator's config; its ``seed`` None takes the env's ``seed``. ``curriculum`` is set from
    :attr:`curriculum` (difficulty growing with the row, as Isaac Lab's tasks do with a terrain curriculum)."""
    max_init_terrain_level: int | None = 5
    """Levels drawn at startup are uniform in 0..this (None: every level); Isaac Lab's rough task's value."""
    curriculum: bool = True
    """Isaac Lab's ``terrain_levels_vel`` at every reset (:class:`~isaaclab_diffsim.terrains.TerrainLevels`)."""
    heightmap_resolution: float = 0.05
    """[m] cell of the heightfield the terrain is rasterised into once (the height scan and terrain-relative
    heights interpolate it bilinearly)."""

    def use_flat_ground(self) -> None:
        """Make every sub-terrain a plane (Isaac Lab's ``MeshPlaneTerrainCfg``), the grid, levels and origins kept: a
        rough-task policy's evaluation without the terrain (``evaluate_terrain.py --flat``)."""
        self.generator.sub_terrains = {"flat": MeshPlaneTerrainCfg(proportion=1.0)}

    def validate_values(self, prefix: str = "") -> None:
        """Raise ValueError naming ``prefix`` + the field whose value cannot work."""
        check(
            self,
            {
                "max_init_terrain_level": optional(integer(0)),
                "heightmap_resolution": positive,
                "generator.size": sequence(positive, length=2),
                "generator.num_rows": integer(1),
                "generator.num_cols": integer(1),
                "generator.border_width": non_negative,
                "generator.sub_terrains": Rule(
                    "at least one sub-terrain with a proportion > 0",
                    lambda d: bool(d) and sum(float(t.proportion) for t in d.values()) > 0,
                ),
            },
            prefix=prefix,
        )

    def check_scan_fits(self, scan: DiffHeightScanCfg) -> None:
        """Raise ValueError naming ``height_scan.size`` when the scan, from a robot at the terrain's edge, reaches past
        the terrain's flat border (its half-diagonal longer than ``generator.border_width``)."""
        reach = 0.5 * (scan.size[0] ** 2 + scan.size[1] ** 2) ** 0.5
        border = float(self.generator.border_width)
        if reach > border:
            raise ValueError(
                f"height_scan.size {tuple(scan.size)!r} reaches {reach:g} m from the base, past the terrain's border "
                f"(terrain.generator.border_width {border:g} m): shrink the scan or widen the border"
            )


@configclass
class DiffHeightScanCfg:
    """Isaac Lab's ANYmal height scanner and its ``height_scan`` observation: a ``size`` grid at ``resolution``
    around the base, yaw-aligned, observing ``base height - terrain height - offset`` clipped to +-``clip``."""

    size: tuple[float, float] = (1.6, 1.0)
    """[m] along the base's heading (x) and across it (y)."""
    resolution: float = 0.1
    offset: float = 0.5
    clip: float = 1.0
    noise: UniformNoiseCfg | None = UniformNoiseCfg(n_min=-0.1, n_max=0.1)
    """Additive noise before the clip (Isaac Lab's rough task); off with ``observations.enable_corruption``."""

    def validate_values(self, prefix: str = "") -> None:
        """Raise ValueError naming ``prefix`` + the field whose value cannot work."""
        check(self, {"size": sequence(non_negative, length=2), "resolution": positive, "clip": positive}, prefix=prefix)


@configclass
class DiffFootHeightsCfg:
    """The ``foot_heights`` observation: the height of each foot's lowest point above the terrain straight below
    it, clipped to +-``clip`` and multiplied by ``scale``, in leg order. A perceptive ANYmal controller reads the same
    from its elevation map around the feet; here it tells a foot over a step edge (far above the ground below it)
    from a foot in an ordinary swing, which the base-frame ``height_scan`` holds only through the leg kinematics."""

    clip: float = 1.0
    """[m]"""
    scale: float = 5.0
    """Observation scale (Isaac Lab's term ``scale``): 0.2 m reads 1."""
    noise: UniformNoiseCfg | None = None
    """Additive noise [m] before the clip; off with ``observations.enable_corruption``."""

    def validate_values(self, prefix: str = "") -> None:
        """Raise ValueError naming ``prefix`` + the field whose value cannot work."""
        check(self, {"clip": positive, "scale": positive}, prefix=prefix)
