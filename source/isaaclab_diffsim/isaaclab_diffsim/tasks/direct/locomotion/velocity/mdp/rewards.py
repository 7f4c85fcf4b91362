"""Reward terms of the differentiable velocity task, unweighted: the env multiplies each by its weight
(``DiffRewardsCfg``) and the policy step. Base-frame quantities come from :func:`.observations.base_frame`; per-foot
tensors are (N, feet) in the robot's leg order."""

from __future__ import annotations

import torch


def track_lin_vel_xy_exp(commands: torch.Tensor, lin_vel_b: torch.Tensor, std: float) -> torch.Tensor:
    """Isaac Lab's ``track_lin_vel_xy_exp``: ``exp(-|c_xy - v_xy|^2 / std^2)`` (base frame)."""
    return torch.exp(-((commands[:, :2] - lin_vel_b[:, :2]) ** 2).sum(1) / std**2)


def track_ang_vel_z_exp(commands: torch.Tensor, ang_vel_b: torch.Tensor, std: float) -> torch.Tensor:
    """Isaac Lab's ``track_ang_vel_z_exp``: ``exp(-(c_z - w_z)^2 / std^2)``."""
    return torch.exp(-((commands[:, 2] - ang_vel_b[:, 2]) ** 2) / std**2)


def track_lin_vel_xy_l2(commands: torch.Tensor, lin_vel_b: torch.Tensor) -> torch.Tensor:
    """Quadratic xy tracking error ``|c_xy - v_xy|^2``: its gradient grows with the error (the kernel's is flat far
    from the command)."""
    return ((commands[:, :2] - lin_vel_b[:, :2]) ** 2).sum(1)


def track_lin_vel_xy_huber(commands: torch.Tensor, lin_vel_b: torch.Tensor, delta: float) -> torch.Tensor:
    """Pseudo-Huber xy tracking error ``sqrt(|c_xy - v_xy|^2 + delta^2) - delta``: quadratic (``|e|^2 / (2 delta)``)
    below ``delta``, linear above; its gradient ``e / sqrt(|e|^2 + delta^2)`` is near unit length for any error well
    above ``delta``, where the quadratic's (``2 e``) shrinks with the error."""
    e2 = ((commands[:, :2] - lin_vel_b[:, :2]) ** 2).sum(1)
    return torch.sqrt(e2 + delta**2) - delta


def track_ang_vel_z_l2(commands: torch.Tensor, ang_vel_b: torch.Tensor) -> torch.Tensor:
    """Quadratic yaw-rate tracking error ``(c_z - w_z)^2``."""
    return (commands[:, 2] - ang_vel_b[:, 2]) ** 2


def lin_vel_z_l2(lin_vel_b: torch.Tensor) -> torch.Tensor:
    return lin_vel_b[:, 2] ** 2


def ang_vel_xy_l2(ang_vel_b: torch.Tensor) -> torch.Tensor:
    return (ang_vel_b[:, :2] ** 2).sum(1)


def joint_torques_l2(torques: torch.Tensor) -> torch.Tensor:
    """Isaac Lab's ``joint_torques_l2`` (the task's ``dof_torques_l2``) of the applied torques."""
    return (torques**2).sum(1)


def joint_acc_l2(joint_vel: torch.Tensor, prev_joint_vel: torch.Tensor, step_dt: float) -> torch.Tensor:
    """Isaac Lab's ``joint_acc_l2`` (``dof_acc_l2``): joint accelerations as the velocity change over the step."""
    return (((joint_vel - prev_joint_vel) / step_dt) ** 2).sum(1)


def action_rate_l2(actions: torch.Tensor, last_actions: torch.Tensor) -> torch.Tensor:
    return ((actions - last_actions) ** 2).sum(1)


def flat_orientation_l2(projected_gravity: torch.Tensor) -> torch.Tensor:
    return (projected_gravity[:, :2] ** 2).sum(1)


def joint_deviation_l1(joint_pos: torch.Tensor, default_joint_pos: torch.Tensor) -> torch.Tensor:
    return (joint_pos - default_joint_pos).abs().sum(1)


def joint_deviation_l2(joint_pos: torch.Tensor, default_joint_pos: torch.Tensor) -> torch.Tensor:
    return ((joint_pos - default_joint_pos) ** 2).sum(1)


def base_height_exp(base_height: torch.Tensor, target: float, sharpness: float) -> torch.Tensor:
    """``exp(-sharpness (h - target)^2)``, h the base height above the ground below it."""
    return torch.exp(-sharpness * (base_height - target) ** 2)


def upright(projected_gravity: torch.Tensor) -> torch.Tensor:
    """The base's uprightness ``-g_z``: 1 upright, the cosine of the tilt otherwise."""
    return -projected_gravity[:, 2]


@torch.no_grad()
def feet_air_time(
    air_time: torch.Tensor, first_contact: torch.Tensor, threshold: float, moving: torch.Tensor
) -> torch.Tensor:
    """Isaac Lab's ``feet_air_time``: on touchdown (``first_contact``), the foot's air time minus ``threshold``,
    summed over the feet, for envs told to move. Contact timing is not differentiable: the gradient is stopped."""
    reward = ((air_time - threshold) * first_contact).sum(1)
    return reward * moving


def foot_clearance(
    foot_pos: torch.Tensor,
    prev_foot_pos: torch.Tensor,
    foot_height: torch.Tensor,
    fresh: torch.Tensor,
    step_dt: float,
    target_height: float,
    std: float,
    tanh_mult: float,
) -> torch.Tensor:
    """Isaac Lab's Spot ``foot_clearance_reward``: ``exp(-sum_f (h_f - target)^2 tanh(tanh_mult |v_xy,f|) / std)``.
    The feet's horizontal speed is their displacement since ``prev_foot_pos`` over the step, 0 for the envs of
    ``fresh`` (N, 1) (first step of an episode: the previous positions are the last episode's)."""
    step = foot_pos[..., :2] - prev_foot_pos[..., :2]
    speed = torch.where(fresh, 0.0, (step.square().sum(-1) + 1e-12).sqrt() / step_dt)  # smooth at 0
    error = (foot_height - target_height) ** 2 * torch.tanh(tanh_mult * speed)
    return torch.exp(-error.sum(1) / std)


def foot_lift(
    foot_height: torch.Tensor, lift_height: float, air_time: torch.Tensor, max_air_s: float, moving: torch.Tensor
) -> torch.Tensor:
    """Lifted feet, up to two, as a fraction of two feet at ``lift_height``, for envs told to move. With
    ``max_air_s`` > 0 only feet whose air time is below it count (a foot held up earns nothing)."""
    lifted = torch.clamp(foot_height, 0.0, lift_height)
    if max_air_s > 0.0:
        lifted = lifted * (air_time < max_air_s)
    lifted = lifted.sum(1)
    return torch.clamp(lifted, max=2.0 * lift_height) / (2.0 * lift_height) * moving


def hanging_foot_height(foot_height: torch.Tensor, air_time: torch.Tensor, max_air_s: float) -> torch.Tensor:
    """Sum of ``|h_f|`` over the feet whose air time (since their last contact) is above ``max_air_s``: how far the
    feet held in the air are from the ground below them. Differentiable in the heights; the gate is not."""
    return (foot_height.abs() * (air_time > max_air_s)).sum(1)


def foot_edge(edge: torch.Tensor, contact: torch.Tensor) -> torch.Tensor:
    """Sum of the edge map ``edge`` (N, feet; :meth:`.HeightMap.edge_map` at the feet) over the feet in contact
    (``contact``, bool): how close the standing feet are to terrain edges. Differentiable in ``edge`` (its gradient
    moves a foot away from the edge); the gate is not."""
    return (edge * contact).sum(1)


def gait_foot_height_l2(foot_height: torch.Tensor, swing: torch.Tensor, swing_height: float) -> torch.Tensor:
    """Sum over feet of ``(h_f - swing_height * swing_f)^2``: the reference is a half sine during swing (``swing``,
    :func:`.gait.swing_profile`), 0 in stance."""
    ref = swing_height * swing
    return ((foot_height - ref) ** 2).sum(1)


def stand_still(joint_pos: torch.Tensor, default_joint_pos: torch.Tensor, still: torch.Tensor) -> torch.Tensor:
    """legged_gym's ``stand_still``: ``sum |q - q_default|`` for the envs told to stand (``still``,
    :func:`.commands.still_command`)."""
    return (joint_pos - default_joint_pos).abs().sum(1) * still


def stand_still_joint_vel(joint_vel: torch.Tensor, still: torch.Tensor) -> torch.Tensor:
    """``sum |qd|`` for the envs told to stand: stepping in place moves the joints however close to the default
    pose the feet land."""
    return joint_vel.abs().sum(1) * still


def stand_still_feet_height(foot_height: torch.Tensor, still: torch.Tensor) -> torch.Tensor:
    """``sum_f max(h_f, 0)`` for the envs told to stand: the feet's lift above the ground, so every step taken in
    place costs in proportion to how high the foot rises (a foot on the ground costs nothing)."""
    return foot_height.clamp(min=0.0).sum(1) * still
