"""Rollout recordings for visual debugging: time-sampled USD with per-foot contact and gradient overlays.

Sits above ``envs`` (it reads a :class:`~isaaclab_diffsim.envs.DiffDirectRLEnv`'s model, solver and state) and
below ``rl``/``scripts``, which call it. Needs only ``pxr`` (usd-core), no Kit.
"""

from .foot_contacts import FootContactFrame, FootContactReader, contact_weights
from .rollout import HorizonRecording, record_differentiated_rollout
from .schema import LAYER_KEY, SCHEMA
from .usd_recorder import RolloutRecorder

__all__ = [
    "FootContactFrame",
    "FootContactReader",
    "HorizonRecording",
    "LAYER_KEY",
    "RolloutRecorder",
    "SCHEMA",
    "contact_weights",
    "record_differentiated_rollout",
]
