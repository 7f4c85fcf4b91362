"""ANYmal C velocity tracking as a differentiable direct env; registers ``DiffSim-Velocity-Flat-AnymalC-Direct``
(walking without a trajectory generator), ``DiffSim-Velocity-Flat-AnymalC-Trot-Direct`` (the trot generator) and
``DiffSim-Velocity-Rough-AnymalC-Direct`` (the reference-free task on Isaac Lab's rough terrains),
``DiffSim-Velocity-Rough-AnymalC-Trot-Direct`` (+ ``-Play`` each) with gymnasium, for SHAC and PPO.
``scene_model.py`` is ANYmal C's Isaac Lab scene (``asset_source="isaaclab"``)."""

from ... import register_task
from . import agents  # noqa: F401

# task id, config module, config class infix: the reference-free and trot-generator tasks, flat and rough
for _task, _module, _variant in (
    ("DiffSim-Velocity-Flat-AnymalC-Direct", "flat_env_cfg", "Flat"),
    ("DiffSim-Velocity-Flat-AnymalC-Trot-Direct", "flat_env_cfg", "FlatTrot"),
    ("DiffSim-Velocity-Rough-AnymalC-Direct", "rough_env_cfg", "Rough"),
    ("DiffSim-Velocity-Rough-AnymalC-Trot-Direct", "rough_env_cfg", "RoughTrot"),
):
    register_task(
        _task,
        __name__,
        f"{_module}:AnymalC{_variant}DiffEnvCfg",
        f"AnymalC{_variant}ShacRunnerCfg",
        f"AnymalC{_variant}DiffPPORunnerCfg",
    )
