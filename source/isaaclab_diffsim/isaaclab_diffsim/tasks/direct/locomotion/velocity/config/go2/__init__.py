"""Flat velocity tracking of Unitree Go2 as a differentiable direct env; registers
``DiffSim-Velocity-Flat-Go2-Direct`` (+ ``-Play``) with gymnasium, for SHAC and PPO."""

from ... import register_task
from . import agents  # noqa: F401

register_task(
    "DiffSim-Velocity-Flat-Go2-Direct",
    __name__,
    "flat_env_cfg:Go2FlatDiffEnvCfg",
    "Go2FlatShacRunnerCfg",
    "Go2FlatDiffPPORunnerCfg",
)
