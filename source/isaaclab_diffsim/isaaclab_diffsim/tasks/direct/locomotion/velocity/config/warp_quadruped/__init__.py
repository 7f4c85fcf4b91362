"""Flat velocity tracking of the Warp example quadruped as a differentiable direct env; registers
``DiffSim-Velocity-Flat-WarpQuadruped-Direct`` (+ ``-Play``) with gymnasium, for SHAC and PPO."""

import gymnasium as gym

from ... import ENTRY_POINT
from . import agents  # noqa: F401

for _suffix in ("", "_PLAY"):
    gym.register(
        id="DiffSim-Velocity-Flat-WarpQuadruped-Direct" + ("-Play" if _suffix else ""),
        entry_point=ENTRY_POINT,
        disable_env_checker=True,
        kwargs={
            "env_cfg_entry_point": f"{__name__}.flat_env_cfg:WarpQuadrupedFlatDiffEnvCfg{_suffix}",
            "shac_cfg_entry_point": f"{__name__}.agents.shac_cfg:WarpQuadrupedFlatShacRunnerCfg",
            "rsl_rl_cfg_entry_point": f"{__name__}.agents.rsl_rl_ppo_cfg:WarpQuadrupedFlatDiffPPORunnerCfg",
        },
    )
