"""Differentiable velocity tracking of a legged robot as a direct env, laid out as Isaac Lab's velocity task: the
generic env and its config (:class:`DiffVelocityEnv`, :class:`DiffVelocityEnvCfg`), the MDP's terms in :mod:`.mdp`,
the recipes robots' tasks apply (:mod:`.recipes`) and one ``config/<robot>/`` folder per robot with its task
configs, agents and gymnasium registration (``DiffSim-Velocity-*-Direct``).

The env and its configs are imported on first use (``from isaaclab_diffsim.tasks.direct.locomotion.velocity import
DiffVelocityEnv``), so registering the task ids stays light.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .velocity_env import DiffVelocityEnv
    from .velocity_env_cfg import (
        DiffCommandsCfg,
        DiffEventsCfg,
        DiffGaitCfg,
        DiffObservationsCfg,
        DiffRewardsCfg,
        DiffVelocityEnvCfg,
    )

_EXPORTS = {
    "DiffVelocityEnv": "velocity_env",
    **{
        name: "velocity_env_cfg"
        for name in (
            "DiffCommandsCfg",
            "DiffEventsCfg",
            "DiffGaitCfg",
            "DiffObservationsCfg",
            "DiffRewardsCfg",
            "DiffVelocityEnvCfg",
        )
    },
}

__all__ = [
    "DiffCommandsCfg",
    "DiffEventsCfg",
    "DiffGaitCfg",
    "DiffObservationsCfg",
    "DiffRewardsCfg",
    "DiffVelocityEnv",
    "DiffVelocityEnvCfg",
]
assert sorted(__all__) == sorted(_EXPORTS)

ENTRY_POINT = f"{__name__}:DiffVelocityEnv"


def register_task(task_id: str, package: str, env_cfg: str, shac_cfg: str, ppo_cfg: str) -> None:
    """Register ``task_id`` and ``task_id-Play`` with gymnasium: the env config ``env_cfg`` (``"module:Class"``
    relative to ``package``; ``-Play`` takes ``Class_PLAY``) and the agents' configs in ``package.agents``."""
    import gymnasium as gym

    for suffix in ("", "_PLAY"):
        gym.register(
            id=task_id + ("-Play" if suffix else ""),
            entry_point=ENTRY_POINT,
            disable_env_checker=True,
            kwargs={
                "env_cfg_entry_point": f"{package}.{env_cfg}{suffix}",
                "shac_cfg_entry_point": f"{package}.agents.shac_cfg:{shac_cfg}",
                "rsl_rl_cfg_entry_point": f"{package}.agents.rsl_rl_ppo_cfg:{ppo_cfg}",
            },
        )


"""The gymnasium entry point of every robot's task."""


def __getattr__(name: str):
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_EXPORTS[name]}"), name)
