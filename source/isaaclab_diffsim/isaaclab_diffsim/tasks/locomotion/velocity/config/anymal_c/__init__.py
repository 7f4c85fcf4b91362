"""Registers Isaac Lab's manager-based ANYmal C flat velocity task on the DiffSim backend with gymnasium:
``DiffSim-Velocity-Flat-AnymalC`` (+ ``-Play``). The differentiable direct task is in
:mod:`isaaclab_diffsim.tasks.direct.anymal_c`.
"""

import gymnasium as gym

from . import agents  # noqa: F401

_AGENTS = {
    "rsl_rl_cfg_entry_point": f"{__name__}.agents.rsl_rl_ppo_manager_cfg:AnymalCFlatDiffSimPPORunnerCfg",
}

for _task, _env_cfg in (
    ("DiffSim-Velocity-Flat-AnymalC", "AnymalCFlatDiffSimEnvCfg"),
    ("DiffSim-Velocity-Flat-AnymalC-Play", "AnymalCFlatDiffSimEnvCfg_PLAY"),
):
    gym.register(
        id=_task,
        entry_point="isaaclab.envs:ManagerBasedRLEnv",
        disable_env_checker=True,
        kwargs={"env_cfg_entry_point": f"{__name__}.flat_env_cfg:{_env_cfg}", **_AGENTS},
    )
