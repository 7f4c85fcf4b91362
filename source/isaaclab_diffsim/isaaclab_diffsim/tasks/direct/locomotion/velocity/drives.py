"""The leg drives and ground written into the model the solver steps: PD gains per joint (with an ANYdrive preset's
armature and friction) and the startup randomisation of motor strength and ground friction."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import newton
import torch
import warp as wp

from .....assets.anydrive import ACTUATOR_PRESETS, per_joint
from .....assets.robot_layout import RobotLayout


def configure_drives(
    model: newton.Model, layout: RobotLayout, kp: float, kd: float, preset_name: str, device
) -> tuple[torch.Tensor, torch.Tensor, RobotLayout, bool]:
    """(kp per joint, kd per joint, layout, whether the model changed): ``kp``/``kd`` for every joint, or with
    ``preset_name`` (a key of ``ACTUATOR_PRESETS``) the preset's gains, armature and joint friction, written into
    the model (and the layout's stiffness and damping)."""
    n, names, nd = layout.num_worlds, layout.joint_names, layout.dofs_per_world
    nj = len(names)
    if not preset_name:
        return torch.full((nj,), float(kp), device=device), torch.full((nj,), float(kd), device=device), layout, False
    preset = ACTUATOR_PRESETS[preset_name]
    what = f"actuator_preset {preset_name!r}"
    kp_j, kd_j = per_joint(preset.kp, names, what + " kp"), per_joint(preset.kd, names, what + " kd")
    friction = per_joint(preset.friction, names, what + " friction")
    for array, values in (
        (model.joint_target_ke, kp_j),
        (model.joint_target_kd, kd_j),
        (model.joint_friction, friction),
        (model.joint_armature, [preset.armature] * nj),
    ):
        wp.to_torch(array, requires_grad=False).view(n, nd)[:, 6:] = torch.tensor(values, device=device)
    layout = dataclasses.replace(layout, stiffness=tuple(kp_j), damping=tuple(kd_j))
    return torch.tensor(kp_j, device=device), torch.tensor(kd_j, device=device), layout, True


@torch.no_grad()
def randomise_ground_and_motors(
    model: newton.Model, layout: RobotLayout, events, uniform: Callable[..., torch.Tensor], device
) -> tuple[torch.Tensor, bool]:
    """(motor strength (N, 1), whether the model changed): ``events.ground_friction`` on the ground (the shapes
    outside every world) and a motor strength per env (``events.motor_strength_range``, drawn with ``uniform``)
    scaling the leg drives' kp, kd and effort limit in the model."""
    n, nd = layout.num_worlds, layout.dofs_per_world
    strength = torch.ones(n, 1, device=device)
    changed = False
    if events.ground_friction is not None:
        ground = torch.as_tensor(model.shape_world.numpy() < 0, device=device)
        if not bool(ground.any()):
            raise ValueError("events.ground_friction is set, but the model has no ground plane")
        wp.to_torch(model.shape_material_mu, requires_grad=False)[ground] = float(events.ground_friction)
        changed = True
    if tuple(events.motor_strength_range) != (1.0, 1.0):
        strength = uniform((n, 1), *events.motor_strength_range)
        for array in (model.joint_target_ke, model.joint_target_kd, model.joint_effort_limit):
            wp.to_torch(array, requires_grad=False).view(n, nd)[:, 6:] *= strength
        changed = True
    return strength, changed
