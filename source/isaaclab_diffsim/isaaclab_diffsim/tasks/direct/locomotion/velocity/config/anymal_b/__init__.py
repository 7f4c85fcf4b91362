"""Flat velocity tracking of ANYmal B as a differentiable direct env; registers
``DiffSim-Velocity-Flat-AnymalB-Direct`` (+ ``-Play``) with gymnasium, for SHAC and PPO."""

from ... import register_task
from . import agents  # noqa: F401

register_task(
    "DiffSim-Velocity-Flat-AnymalB-Direct",
    __name__,
    "flat_env_cfg:AnymalBFlatDiffEnvCfg",
    "AnymalBFlatShacRunnerCfg",
    "AnymalBFlatDiffPPORunnerCfg",
)
