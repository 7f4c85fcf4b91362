"""ANYmal C velocity tracking as a differentiable direct env; registers ``DiffSim-Velocity-Flat-AnymalC-Direct`` and
``DiffSim-Velocity-Rough-AnymalC-Direct`` (+ ``-Play``) with gymnasium, for SHAC and PPO. ``scene_model.py`` is
ANYmal C's Isaac Lab scene (``asset_source="isaaclab"``)."""

import gymnasium as gym

from ... import ENTRY_POINT
from . import agents  # noqa: F401

for _terrain, _module in (("Flat", "flat_env_cfg"), ("Rough", "rough_env_cfg")):
    for _suffix in ("", "_PLAY"):
        gym.register(
            id=f"DiffSim-Velocity-{_terrain}-AnymalC-Direct" + ("-Play" if _suffix else ""),
            entry_point=ENTRY_POINT,
            disable_env_checker=True,
            kwargs={
                "env_cfg_entry_point": f"{__name__}.{_module}:AnymalC{_terrain}DiffEnvCfg{_suffix}",
                "shac_cfg_entry_point": f"{__name__}.agents.shac_cfg:AnymalC{_terrain}ShacRunnerCfg",
                "rsl_rl_cfg_entry_point": f"{__name__}.agents.rsl_rl_ppo_cfg:AnymalC{_terrain}DiffPPORunnerCfg",
            },
        )
