"""Flat velocity tracking of the Warp example quadruped as a differentiable direct env; registers
``DiffSim-Velocity-Flat-WarpQuadruped-Direct`` (+ ``-Play``) with gymnasium, for SHAC and PPO."""

from ... import register_task
from . import agents  # noqa: F401

register_task(
    "DiffSim-Velocity-Flat-WarpQuadruped-Direct",
    __name__,
    "flat_env_cfg:WarpQuadrupedFlatDiffEnvCfg",
    "WarpQuadrupedFlatShacRunnerCfg",
    "WarpQuadrupedFlatDiffPPORunnerCfg",
)
