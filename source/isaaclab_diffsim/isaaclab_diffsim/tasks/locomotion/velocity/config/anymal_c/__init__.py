"""Registers Isaac Lab's manager-based ANYmal C flat and rough velocity tasks on the DiffSim backend with gymnasium:
``DiffSim-Velocity-Flat-AnymalC`` and ``DiffSim-Velocity-Rough-AnymalC`` (+ ``-Play``). The differentiable direct
task is in :mod:`isaaclab_diffsim.tasks.direct.locomotion.velocity`.
"""

import gymnasium as gym

from . import agents  # noqa: F401

_PPO = f"{__name__}.agents.rsl_rl_ppo_manager_cfg"

for _task, _env_cfg, _agent in (
    ("DiffSim-Velocity-Flat-AnymalC", "flat_env_cfg:AnymalCFlatDiffSimEnvCfg", "AnymalCFlatDiffSimPPORunnerCfg"),
    (
        "DiffSim-Velocity-Flat-AnymalC-Play",
        "flat_env_cfg:AnymalCFlatDiffSimEnvCfg_PLAY",
        "AnymalCFlatDiffSimPPORunnerCfg",
    ),
    ("DiffSim-Velocity-Rough-AnymalC", "rough_env_cfg:AnymalCRoughDiffSimEnvCfg", "AnymalCRoughDiffSimPPORunnerCfg"),
    (
        "DiffSim-Velocity-Rough-AnymalC-Play",
        "rough_env_cfg:AnymalCRoughDiffSimEnvCfg_PLAY",
        "AnymalCRoughDiffSimPPORunnerCfg",
    ),
):
    gym.register(
        id=_task,
        entry_point="isaaclab.envs:ManagerBasedRLEnv",
        disable_env_checker=True,
        kwargs={"env_cfg_entry_point": f"{__name__}.{_env_cfg}", "rsl_rl_cfg_entry_point": f"{_PPO}:{_agent}"},
    )
