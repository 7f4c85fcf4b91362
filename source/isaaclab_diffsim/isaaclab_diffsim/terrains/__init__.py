"""Generated terrain in the differentiable env: generation, the rasterised heightfield, the height scan and the
terrain-level curriculum (docs/tasks.md "Rough terrain")."""

from .generated import GeneratedTerrain, generate_terrain, generator_cfg, seeded_generation, terrain_from_generator
from .height_scan import grid_pattern, height_scan, scan_points
from .heightmap import HeightMap
from .terrain_cfg import DiffFootHeightsCfg, DiffHeightScanCfg, DiffTerrainCfg, rough_terrains_cfg
from .terrain_levels import TerrainLevels, terrain_level_moves
from .tile_types import TileTypes

__all__ = [
    "DiffFootHeightsCfg",
    "DiffHeightScanCfg",
    "DiffTerrainCfg",
    "GeneratedTerrain",
    "HeightMap",
    "TerrainLevels",
    "TileTypes",
    "rough_terrains_cfg",
    "generate_terrain",
    "generator_cfg",
    "grid_pattern",
    "height_scan",
    "scan_points",
    "seeded_generation",
    "terrain_from_generator",
    "terrain_level_moves",
]
