"""Generated terrain in the differentiable env: generation, the rasterised heightfield, the height scan and the
terrain-level curriculum (docs/tasks.md "Rough terrain")."""

from .generated import GeneratedTerrain, generate_terrain
from .height_scan import grid_pattern, height_scan, scan_points
from .heightmap import HeightMap
from .terrain_cfg import DiffHeightScanCfg, DiffTerrainCfg, cpu_rough_terrains_cfg
from .terrain_levels import TerrainLevels, terrain_level_moves

__all__ = [
    "DiffHeightScanCfg",
    "DiffTerrainCfg",
    "GeneratedTerrain",
    "HeightMap",
    "TerrainLevels",
    "cpu_rough_terrains_cfg",
    "generate_terrain",
    "grid_pattern",
    "height_scan",
    "scan_points",
    "terrain_level_moves",
]
