"""Registers Isaac Lab's manager-based flat ANYmal B velocity task on the DiffSim backend with gymnasium:
``DiffSim-Velocity-Flat-AnymalB`` (+ ``-Play``). The differentiable direct task is in
:mod:`isaaclab_diffsim.tasks.direct.locomotion.velocity.config.anymal_b`.
"""

import gymnasium as gym

from . import agents  # noqa: F401

_PPO = f"{__name__}.agents.rsl_rl_ppo_manager_cfg:AnymalBFlatDiffSimPPORunnerCfg"

for _task, _env_cfg in (
    ("DiffSim-Velocity-Flat-AnymalB", "AnymalBFlatDiffSimEnvCfg"),
    ("DiffSim-Velocity-Flat-AnymalB-Play", "AnymalBFlatDiffSimEnvCfg_PLAY"),
):
    gym.register(
        id=_task,
        entry_point="isaaclab.envs:ManagerBasedRLEnv",
        disable_env_checker=True,
        kwargs={"env_cfg_entry_point": f"{__name__}.flat_env_cfg:{_env_cfg}", "rsl_rl_cfg_entry_point": _PPO},
    )
