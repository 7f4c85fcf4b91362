"""ANYmal C as a USD file for Isaac Lab scenes, converted locally from the ``example-robot-data`` URDF.

The conversion and cache are :mod:`.robot_usd`'s (feet ``{leg}_FOOT`` kept as bodies, which carry the URDF's
foot spheres); the cache is ``<cache>/anymal_c/anymal_c.usda`` with its manifest and ``anymal_c.lock``.

Result: 17 rigid bodies (base, 4 x HIP/THIGH/SHANK/FOOT), 12 revolute joints, 52.13 kg.
"""

from __future__ import annotations

from pathlib import Path

from .anymal_c_urdf import LEGS, anymal_c_urdf_path
from .robot_usd import (
    FORMAT_VERSION,
    AssetCacheError,
    UsdConversion,
    cache_problem,
    cached_usd_path,
    writable_cache_folder,
)
from .robot_usd import asset_cache_dir as anymal_c_cache_dir

__all__ = [
    "BODY_NAMES",
    "FORMAT_VERSION",
    "USD_NAME",
    "AssetCacheError",
    "anymal_c_cache_dir",
    "anymal_c_conversion",
    "anymal_c_usd_path",
    "writable_cache_folder",
]

USD_NAME = "anymal_c.usda"
BODY_NAMES = ("base", *(f"{leg}_{link}" for link in ("HIP", "THIGH", "SHANK", "FOOT") for leg in LEGS))
"""Rigid bodies of the lean articulation."""


def anymal_c_conversion(urdf: Path | None = None) -> UsdConversion:
    """ANYmal C's conversion (the same as ``robot_usd_conversion(ANYMAL_C_ROBOT_CFG)``)."""
    return UsdConversion("anymal_c", urdf or anymal_c_urdf_path(), tuple(f"{leg}_FOOT" for leg in LEGS))


def anymal_c_usd_path(cache_dir: str | Path | None = None, rebuild: bool = False) -> Path:
    """Path of the cached ANYmal C USD, converting the URDF first if the cache is missing or invalid."""
    return cached_usd_path(anymal_c_conversion(), cache_dir, rebuild)


def _fingerprint(urdf: Path) -> dict:
    return anymal_c_conversion(urdf).fingerprint()


def _cache_problem(target: Path, expected: dict) -> str | None:
    """Why the cached asset cannot be used, or None."""
    return cache_problem(target, expected, USD_NAME, BODY_NAMES)
