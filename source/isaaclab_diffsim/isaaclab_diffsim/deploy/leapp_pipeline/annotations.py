"""LEAPP annotations of the differentiable ANYmal C env's observation and action path (the direct-workflow pattern).

:class:`~isaaclab_diffsim.tasks.direct.locomotion.velocity.DiffVelocityEnv` calls these only while a LEAPP export
traces it (``env.leapp_node`` set and ``leapp.start`` called, see :mod:`.shac_export`); training never reaches
them. Every input carries the ``isaaclab_connection`` of the manager-based task's scene (entity ``robot``, command
``base_velocity``), so :class:`isaaclab.envs.LeappDeploymentEnv` runs the export on that scene. The names, kinds and
element names are those of Isaac Lab's manager-based export of ``DiffSim-Velocity-Flat-AnymalC``.
"""

from __future__ import annotations

import torch

ROBOT, COMMAND = "robot", "base_velocity"
"""The manager-based task's scene entity and command term the connections name."""
XYZ, QUAT_XYZW = ["x", "y", "z"], ["qx", "qy", "qz", "qw"]


def _semantics(name, ref, kind, element_names, connection):
    from leapp import TensorSemantics

    return TensorSemantics(
        name=name, ref=ref, kind=kind, element_names=element_names, extra={"isaaclab_connection": connection}
    )


def annotate_inputs(env, quat_w, lin_vel_b, ang_vel_b, commands, joint_pos, joint_vel, last_actions, step):
    """The traced versions of the policy's raw inputs; ``last_actions`` and ``step`` (control steps since the
    episode started, float, (N, 1): the gait clock) become LEAPP feedback state."""
    from leapp import annotate

    node, joints = env.leapp_node, list(env.layout.joint_names)
    inputs = [
        _semantics("robot_root_quat_w", quat_w, "state/body/rotation", [QUAT_XYZW], f"state:{ROBOT}:root_quat_w"),
        _semantics(
            "robot_root_lin_vel_b", lin_vel_b, "state/body/linear_velocity", [XYZ], f"state:{ROBOT}:root_lin_vel_b"
        ),
        _semantics(
            "robot_root_ang_vel_b", ang_vel_b, "state/body/angular_velocity", [XYZ], f"state:{ROBOT}:root_ang_vel_b"
        ),
        _semantics(
            COMMAND, commands, "command/body/velocity", [["lin_vel_x", "lin_vel_y", "ang_vel_z"]], f"command:{COMMAND}"
        ),
        _semantics("robot_joint_pos", joint_pos, "state/joint/position", [joints], f"state:{ROBOT}:joint_pos"),
        _semantics("robot_joint_vel", joint_vel, "state/joint/velocity", [joints], f"state:{ROBOT}:joint_vel"),
    ]
    traced = annotate.input_tensors(node, inputs)
    state = annotate.state_tensors(node, {"last_action": last_actions, "gait_step": step})
    return (*traced, *state)


def annotate_outputs(env, actions: torch.Tensor, step: torch.Tensor, targets: torch.Tensor) -> None:
    """Close the traced step: the joint position targets (written to the robot) and the next feedback state.

    The actuator the targets were trained with goes into the target's metadata (:mod:`.actuator`), not into gain
    outputs: Isaac Lab's export wires gain outputs to the simulation's joint gains, and the manager-based scene's DC
    motor is an explicit actuator (the simulation's gains stay 0; its own gains set the PD), so a deployment sets it
    on the scene's actuators (``scripts/deploy/leapp_deploy.py``).
    """
    from leapp import annotate

    from .actuator import ACTUATOR_KEY, trained_actuator

    node, joints = env.leapp_node, list(env.layout.joint_names)
    annotate.update_state(node, {"last_action": actions, "gait_step": step + 1.0})
    out = _semantics(
        "joint_pos", targets, "target/joint/position", [joints], f"write:{ROBOT}:set_joint_position_target_index"
    )
    out.extra[ACTUATOR_KEY] = trained_actuator(env)
    annotate.output_tensors(node, [out], export_with="onnx-dynamo")
