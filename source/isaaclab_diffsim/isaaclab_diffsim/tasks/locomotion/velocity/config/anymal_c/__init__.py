"""Registers the ANYmal C flat velocity tasks with gymnasium.

- ``DiffSim-Velocity-Flat-AnymalC`` (+ ``-Play``): Isaac Lab's manager-based MDP on the DiffSim backend.
- ``DiffSim-Velocity-Flat-AnymalC-Direct`` (+ ``-Play``): the differentiable env (SHAC and PPO).
"""

import gymnasium as gym

from . import agents  # noqa: F401

_DIRECT_AGENTS = {
    "shac_cfg_entry_point": f"{__name__}.agents.shac_cfg:AnymalCFlatShacRunnerCfg",
    "rsl_rl_cfg_entry_point": f"{__name__}.agents.rsl_rl_ppo_cfg:AnymalCFlatDiffPPORunnerCfg",
}
_MANAGER_AGENTS = {
    "rsl_rl_cfg_entry_point": f"{__name__}.agents.rsl_rl_ppo_manager_cfg:AnymalCFlatDiffSimPPORunnerCfg",
}

# task id -> (env class, env cfg, agent cfgs)
_TASKS = {
    "DiffSim-Velocity-Flat-AnymalC-Direct": ("isaaclab_diffsim.tasks.direct.anymal_c:DiffVelocityEnv", "flat_diff_env_cfg:AnymalCFlatDiffEnvCfg", _DIRECT_AGENTS),
    "DiffSim-Velocity-Flat-AnymalC-Direct-Play": ("isaaclab_diffsim.tasks.direct.anymal_c:DiffVelocityEnv", "flat_diff_env_cfg:AnymalCFlatDiffEnvCfg_PLAY", _DIRECT_AGENTS),
    "DiffSim-Velocity-Flat-AnymalC": ("isaaclab.envs:ManagerBasedRLEnv", "flat_env_cfg:AnymalCFlatDiffSimEnvCfg", _MANAGER_AGENTS),
    "DiffSim-Velocity-Flat-AnymalC-Play": ("isaaclab.envs:ManagerBasedRLEnv", "flat_env_cfg:AnymalCFlatDiffSimEnvCfg_PLAY", _MANAGER_AGENTS),
}  # fmt: skip

for _task, (_entry, _env_cfg, _agents) in _TASKS.items():
    gym.register(
        id=_task,
        entry_point=_entry,
        disable_env_checker=True,
        kwargs={"env_cfg_entry_point": f"{__name__}.{_env_cfg}", **_agents},
    )
