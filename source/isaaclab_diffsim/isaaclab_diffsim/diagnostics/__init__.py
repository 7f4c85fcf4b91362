"""Gradient-health diagnostics: replay of captured SHAC horizons with per-substep adjoint norms, and variants of
the horizon with single physics factors switched off (``scripts/tools/replay_horizon.py``)."""

from .gradient_direction import MEASURES, DirectionResult, gradient_direction
from .horizon_replay import HorizonResult, build_runner, replay
from .variants import VARIANTS, Variant, VariantUnavailable, applied

__all__ = [
    "MEASURES",
    "VARIANTS",
    "DirectionResult",
    "HorizonResult",
    "Variant",
    "VariantUnavailable",
    "applied",
    "build_runner",
    "gradient_direction",
    "replay",
]
