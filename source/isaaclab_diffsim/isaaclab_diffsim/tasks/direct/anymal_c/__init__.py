"""ANYmal C flat velocity tracking as a differentiable direct env (gym id ``DiffSim-Velocity-Flat-AnymalC-Direct``)."""

from .diff_velocity_env import DiffVelocityEnv
from .diff_velocity_env_cfg import (
    DiffCommandsCfg,
    DiffEventsCfg,
    DiffGaitCfg,
    DiffObservationsCfg,
    DiffRewardsCfg,
    DiffVelocityEnvCfg,
)

__all__ = ["DiffCommandsCfg", "DiffEventsCfg", "DiffGaitCfg", "DiffObservationsCfg", "DiffRewardsCfg", "DiffVelocityEnv",
           "DiffVelocityEnvCfg"]
