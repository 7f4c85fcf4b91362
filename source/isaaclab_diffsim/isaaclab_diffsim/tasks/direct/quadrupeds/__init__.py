"""Flat velocity tracking of the Warp quadruped, Unitree Go2 and ANYmal B as differentiable direct envs (the ANYmal C
task's :class:`~isaaclab_diffsim.tasks.direct.anymal_c.DiffVelocityEnv` with another robot); registers
``DiffSim-Velocity-Flat-{WarpQuadruped,Go2,AnymalB}-Direct`` (+ ``-Play``) for SHAC and PPO."""

from __future__ import annotations

import gymnasium as gym

from . import agents  # noqa: F401

_ENV = "isaaclab_diffsim.tasks.direct.anymal_c:DiffVelocityEnv"

for _robot in ("WarpQuadruped", "Go2", "AnymalB"):
    _agents = {
        "shac_cfg_entry_point": f"{__name__}.agents.shac_cfg:{_robot}FlatShacRunnerCfg",
        "rsl_rl_cfg_entry_point": f"{__name__}.agents.rsl_rl_ppo_cfg:{_robot}FlatDiffPPORunnerCfg",
    }
    for _suffix in ("", "_PLAY"):
        gym.register(
            id=f"DiffSim-Velocity-Flat-{_robot}-Direct" + ("-Play" if _suffix else ""),
            entry_point=_ENV,
            disable_env_checker=True,
            kwargs={"env_cfg_entry_point": f"{__name__}.flat_diff_env_cfgs:{_robot}FlatDiffEnvCfg{_suffix}", **_agents},
        )
