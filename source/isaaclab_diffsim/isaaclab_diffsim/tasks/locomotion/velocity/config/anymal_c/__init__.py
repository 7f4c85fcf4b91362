"""Registers the ANYmal C flat velocity tasks with gymnasium.

- ``DiffSim-Velocity-Flat-AnymalC`` (+ ``-Play``): Isaac Lab's manager-based MDP on the DiffSim backend.
- ``DiffSim-Velocity-Flat-AnymalC-Direct`` (+ ``-Play``): the differentiable env (SHAC and PPO).
"""

import gymnasium as gym

from . import agents  # noqa: F401

_kwargs = {
    "shac_cfg_entry_point": f"{__name__}.agents.shac_cfg:AnymalCFlatShacRunnerCfg",
    "rsl_rl_cfg_entry_point": f"{__name__}.agents.rsl_rl_ppo_cfg:AnymalCFlatDiffPPORunnerCfg",
}

gym.register(
    id="DiffSim-Velocity-Flat-AnymalC-Direct",
    entry_point="isaaclab_diffsim.envs:DiffVelocityEnv",
    disable_env_checker=True,
    kwargs={"env_cfg_entry_point": f"{__name__}.flat_diff_env_cfg:AnymalCFlatDiffEnvCfg", **_kwargs},
)

gym.register(
    id="DiffSim-Velocity-Flat-AnymalC-Direct-Play",
    entry_point="isaaclab_diffsim.envs:DiffVelocityEnv",
    disable_env_checker=True,
    kwargs={"env_cfg_entry_point": f"{__name__}.flat_diff_env_cfg:AnymalCFlatDiffEnvCfg_PLAY", **_kwargs},
)

gym.register(
    id="DiffSim-Velocity-Flat-AnymalC",
    entry_point="isaaclab.envs:ManagerBasedRLEnv",
    disable_env_checker=True,
    kwargs={
        "env_cfg_entry_point": f"{__name__}.flat_env_cfg:AnymalCFlatDiffSimEnvCfg",
        "rsl_rl_cfg_entry_point": f"{__name__}.agents.rsl_rl_ppo_manager_cfg:AnymalCFlatDiffSimPPORunnerCfg",
    },
)

gym.register(
    id="DiffSim-Velocity-Flat-AnymalC-Play",
    entry_point="isaaclab.envs:ManagerBasedRLEnv",
    disable_env_checker=True,
    kwargs={
        "env_cfg_entry_point": f"{__name__}.flat_env_cfg:AnymalCFlatDiffSimEnvCfg_PLAY",
        "rsl_rl_cfg_entry_point": f"{__name__}.agents.rsl_rl_ppo_manager_cfg:AnymalCFlatDiffSimPPORunnerCfg",
    },
)
