"""ANYmal C velocity tracking as a differentiable direct env; registers ``DiffSim-Velocity-Flat-AnymalC-Direct`` and
``DiffSim-Velocity-Rough-AnymalC-Direct`` (+ ``-Play``) with gymnasium, for SHAC and PPO.

The env and its configs are imported on first use (``from isaaclab_diffsim.tasks.direct.anymal_c import
DiffVelocityEnv``), so registering the task ids stays light.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

import gymnasium as gym

from . import agents  # noqa: F401

if TYPE_CHECKING:
    from .diff_velocity_env import DiffVelocityEnv
    from .diff_velocity_env_cfg import (
        DiffCommandsCfg,
        DiffEventsCfg,
        DiffGaitCfg,
        DiffObservationsCfg,
        DiffRewardsCfg,
        DiffVelocityEnvCfg,
    )

_EXPORTS = {
    "DiffVelocityEnv": "diff_velocity_env",
    **{
        name: "diff_velocity_env_cfg"
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


def __getattr__(name: str):
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_EXPORTS[name]}"), name)


def _agents(terrain: str) -> dict[str, str]:
    return {
        "shac_cfg_entry_point": f"{__name__}.agents.shac_cfg:AnymalC{terrain}ShacRunnerCfg",
        "rsl_rl_cfg_entry_point": f"{__name__}.agents.rsl_rl_ppo_cfg:AnymalC{terrain}DiffPPORunnerCfg",
    }


for _terrain, _module in (("Flat", "flat_diff_env_cfg"), ("Rough", "rough_diff_env_cfg")):
    for _suffix in ("", "_PLAY"):
        gym.register(
            id=f"DiffSim-Velocity-{_terrain}-AnymalC-Direct" + ("-Play" if _suffix else ""),
            entry_point=f"{__name__}:DiffVelocityEnv",
            disable_env_checker=True,
            kwargs={
                "env_cfg_entry_point": f"{__name__}.{_module}:AnymalC{_terrain}DiffEnvCfg{_suffix}",
                **_agents(_terrain),
            },
        )
