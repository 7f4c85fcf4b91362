"""ANYmal C velocity tracking as a differentiable direct env; registers ``DiffSim-Velocity-Flat-AnymalC-Direct``
(walking without a trajectory generator), ``DiffSim-Velocity-Flat-AnymalC-Trot-Direct`` (the trot generator) and
``DiffSim-Velocity-Rough-AnymalC-Direct`` (+ ``-Play``) with gymnasium, for SHAC and PPO. ``scene_model.py`` is
ANYmal C's Isaac Lab scene (``asset_source="isaaclab"``)."""

import gymnasium as gym

from ... import ENTRY_POINT
from . import agents  # noqa: F401

# id infix, config class infix, config module: the reference-free flat task, the trot-generator flat task, rough
for _id, _variant, _module in (
    ("Flat", "Flat", "flat_env_cfg"),
    ("Flat-AnymalC-Trot", "FlatTrot", "flat_env_cfg"),
    ("Rough", "Rough", "rough_env_cfg"),
):
    _name = _id if "AnymalC" in _id else f"{_id}-AnymalC"
    for _suffix in ("", "_PLAY"):
        gym.register(
            id=f"DiffSim-Velocity-{_name}-Direct" + ("-Play" if _suffix else ""),
            entry_point=ENTRY_POINT,
            disable_env_checker=True,
            kwargs={
                "env_cfg_entry_point": f"{__name__}.{_module}:AnymalC{_variant}DiffEnvCfg{_suffix}",
                "shac_cfg_entry_point": f"{__name__}.agents.shac_cfg:AnymalC{_variant}ShacRunnerCfg",
                "rsl_rl_cfg_entry_point": f"{__name__}.agents.rsl_rl_ppo_cfg:AnymalC{_variant}DiffPPORunnerCfg",
            },
        )
