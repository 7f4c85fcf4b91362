"""Differentiable environments (layer 4): the direct-env base on the bridge's simulator, and the rsl_rl adapter.

Tasks built on it live in :mod:`isaaclab_diffsim.tasks` (the differentiable velocity task:
``tasks.direct.locomotion.velocity``).
"""

from .diff_direct_env import DiffDirectRLEnv, DiffDirectRLEnvCfg
from .rsl_rl_wrapper import DiffEnvRslRlWrapper

__all__ = ["DiffDirectRLEnv", "DiffDirectRLEnvCfg", "DiffEnvRslRlWrapper"]
