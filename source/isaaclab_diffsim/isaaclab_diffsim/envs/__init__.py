"""Differentiable environments (layer 4): torch MDPs on the bridge's simulator."""

from .diff_velocity_env import DiffVelocityEnv
from .diff_velocity_env_cfg import DiffCommandsCfg, DiffEventsCfg, DiffGaitCfg, DiffRewardsCfg, DiffVelocityEnvCfg
from .rsl_rl_wrapper import DiffEnvRslRlWrapper

__all__ = [
    "DiffEnvRslRlWrapper",
    "DiffCommandsCfg", "DiffEventsCfg", "DiffGaitCfg", "DiffRewardsCfg", "DiffVelocityEnv", "DiffVelocityEnvCfg"]
