"""The actuator a policy was trained with, carried in its LEAPP pipeline and applied to a deployment scene.

The export puts it under ``actuator`` in the metadata of the pipeline's ``joint_pos`` output (LEAPP writes a
tensor's extra fields into its YAML): the model (``dc_motor``: a PD clipped to the torque-speed line of
``saturation_effort`` and ``actuator_velocity_limit`` and to ``actuator_effort_limit``; ``ideal_pd`` without the
line) and, per joint, Isaac Lab's actuator fields :data:`PER_JOINT`. A deployment builds Isaac Lab's actuator
config of that model from it (:func:`actuator_cfgs`).
"""

from __future__ import annotations

import yaml

ACTUATOR_KEY = "actuator"
"""Metadata key of the actuator on the pipeline's joint target output."""
PER_JOINT = ("stiffness", "damping", "actuator_effort_limit", "actuator_velocity_limit", "armature", "friction")
"""The actuator's per-joint fields (Isaac Lab's ``ActuatorBaseCfg`` names)."""


def _leg_dofs(env, array) -> list[float]:
    """The leg joints' values of a per-dof model array, in ``env.layout.joint_names`` order (world 0)."""
    return [float(v) for v in array.numpy().reshape(env.num_envs, -1)[0, 6:]]


def trained_actuator(env) -> dict:
    """The actuator of the differentiable env ``env`` (nominal gains, DC-motor envelope, armature, friction)."""
    saturation = float(env.cfg.solver_cfg.actuator_saturation)
    values = {
        "stiffness": [float(v) for v in env.kp_leg],
        "damping": [float(v) for v in env.kd_leg],
        "actuator_effort_limit": [float(v) for v in env.effort_limit],
        "actuator_velocity_limit": [float(v) for v in env.velocity_limit],
        "armature": _leg_dofs(env, env.model.joint_armature),
        "friction": _leg_dofs(env, env.model.joint_friction),
    }
    actuator = {"model": "dc_motor" if saturation > 0 else "ideal_pd", "joint_names": list(env.layout.joint_names)}
    actuator.update(values)
    if saturation > 0:
        actuator["saturation_effort"] = saturation
    return actuator


def read_actuator(pipeline: str) -> dict | None:
    """The actuator a LEAPP pipeline YAML carries on an output, or None (e.g. Isaac Lab's own export)."""
    with open(pipeline) as f:
        desc = yaml.safe_load(f)
    for model in desc["models"].values():
        for output in model.get("outputs", []):
            if ACTUATOR_KEY in output:
                return output[ACTUATOR_KEY]
    return None


def _per_joint(names: list[str], values: list[float]) -> float | dict[str, float]:
    """One value if all joints share it, else ``{joint name: value}`` (exact names as Isaac Lab's expressions)."""
    return values[0] if len(set(values)) == 1 else dict(zip(names, values))


def actuator_cfgs(actuators: dict, actuator: dict) -> dict:
    """The scene's actuator groups ``actuators`` (name -> cfg), each replaced by ``actuator``'s model over the same
    joints."""
    from isaaclab.actuators import DCMotorCfg, IdealPDActuatorCfg

    models = {"dc_motor": DCMotorCfg, "ideal_pd": IdealPDActuatorCfg}
    if actuator["model"] not in models:
        raise ValueError(f"pipeline actuator model {actuator['model']!r} is not one of {sorted(models)}")
    fields = {key: _per_joint(actuator["joint_names"], actuator[key]) for key in PER_JOINT}
    if actuator["model"] == "dc_motor":
        fields["saturation_effort"] = actuator["saturation_effort"]
    cls = models[actuator["model"]]
    return {name: cls(joint_names_expr=cfg.joint_names_expr, **fields) for name, cfg in actuators.items()}


def deploy_actuators(actuators: dict, pipeline: str | None, kp: float | None = None, kd: float | None = None):
    """(actuator groups, notes to log) of a deployment: the pipeline's actuator on every group where the pipeline
    carries one, then ``kp`` / ``kd`` (if given) as the stiffness / damping of every group."""
    actuator = read_actuator(pipeline) if pipeline else None
    notes = []
    if actuator is not None:
        actuators = actuator_cfgs(actuators, actuator)
        gains = {key: sorted(set(actuator[key])) for key in ("stiffness", "damping")}
        model, kp_set, kd_set = actuator["model"], gains["stiffness"], gains["damping"]
        notes.append(f"the scene's actuators run the pipeline's {model} (kp {kp_set}, kd {kd_set})")
    for flag, field, value in (("kp", "stiffness", kp), ("kd", "damping", kd)):
        if value is None:
            continue
        for cfg in actuators.values():
            setattr(cfg, field, value)
        source = "the pipeline's actuator" if actuator is not None else "the scene's actuators"
        notes.append(f"--{flag} {value} overrides the {field} of {source}")
    return actuators, notes
