"""ANYmal C velocity tracking as a differentiable direct env; registers ``DiffSim-Velocity-Flat-AnymalC-Direct``
(walking without a trajectory generator), ``DiffSim-Velocity-Flat-AnymalC-Trot-Direct`` (the trot generator) and
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


def _agents(variant: str) -> dict[str, str]:
    return {
        "shac_cfg_entry_point": f"{__name__}.agents.shac_cfg:AnymalC{variant}ShacRunnerCfg",
        "rsl_rl_cfg_entry_point": f"{__name__}.agents.rsl_rl_ppo_cfg:AnymalC{variant}DiffPPORunnerCfg",
    }


# id infix, config class infix, config module: the reference-free flat task, the trot-generator flat task, rough
for _id, _variant, _module in (
    ("Flat", "Flat", "flat_diff_env_cfg"),
    ("Flat-AnymalC-Trot", "FlatTrot", "flat_diff_env_cfg"),
    ("Rough", "Rough", "rough_diff_env_cfg"),
):
    _name = _id if "AnymalC" in _id else f"{_id}-AnymalC"
    for _suffix in ("", "_PLAY"):
        gym.register(
            id=f"DiffSim-Velocity-{_name}-Direct" + ("-Play" if _suffix else ""),
            entry_point=f"{__name__}:DiffVelocityEnv",
            disable_env_checker=True,
            kwargs={
                "env_cfg_entry_point": f"{__name__}.{_module}:AnymalC{_variant}DiffEnvCfg{_suffix}",
                **_agents(_variant),
            },
        )
