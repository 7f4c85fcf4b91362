"""Sim-to-sim: an exported bundle driven through onnxruntime in an independent simulator (MuJoCo) and in ours,
under named variants (friction, payload, latency, pushes), with the same commands and metrics."""

from .metrics import EpisodeMetrics, summarize
from .mujoco_model import MujocoAnymal, build_mujoco_anymal, urdf_link_mass
from .variants import NOMINAL_FRICTION, Variant, parse_variant, parse_variants

__all__ = [
    "EpisodeMetrics",
    "MujocoAnymal",
    "NOMINAL_FRICTION",
    "Variant",
    "build_mujoco_anymal",
    "parse_variant",
    "parse_variants",
    "summarize",
    "urdf_link_mass",
]
