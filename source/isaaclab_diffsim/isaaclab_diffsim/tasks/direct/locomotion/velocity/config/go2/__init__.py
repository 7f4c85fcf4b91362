"""Flat velocity tracking of Unitree Go2 as a differentiable direct env; registers
``DiffSim-Velocity-Flat-Go2-Direct`` (+ ``-Play``) with gymnasium, for SHAC and PPO."""

import gymnasium as gym

from ... import ENTRY_POINT
from . import agents  # noqa: F401

for _suffix in ("", "_PLAY"):
    gym.register(
        id="DiffSim-Velocity-Flat-Go2-Direct" + ("-Play" if _suffix else ""),
        entry_point=ENTRY_POINT,
        disable_env_checker=True,
        kwargs={
            "env_cfg_entry_point": f"{__name__}.flat_env_cfg:Go2FlatDiffEnvCfg{_suffix}",
            "shac_cfg_entry_point": f"{__name__}.agents.shac_cfg:Go2FlatShacRunnerCfg",
            "rsl_rl_cfg_entry_point": f"{__name__}.agents.rsl_rl_ppo_cfg:Go2FlatDiffPPORunnerCfg",
        },
    )
