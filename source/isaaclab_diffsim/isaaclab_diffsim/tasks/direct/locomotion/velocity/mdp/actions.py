"""The action term: joint-position targets from the policy's actions, action latency and the DC-motor torque."""

from __future__ import annotations

import torch


def joint_targets(default_joint_pos: torch.Tensor, scale: float, actions: torch.Tensor) -> torch.Tensor:
    """Isaac Lab's ``JointPositionAction`` with ``use_default_offset``: default pose + ``scale`` * actions."""
    return default_joint_pos + scale * actions


def delayed_actions(
    actions: torch.Tensor, queue: torch.Tensor, delay: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """(acting actions, new queue): each env's drives receive the action of ``delay`` (N,) steps ago. ``queue`` (N,
    D, A) holds the last D actions newest first; the new one is pushed and the oldest dropped (slices of the actions
    in the graph, so the gradient reaches the action that acts)."""
    full = torch.cat([actions[:, None], queue], 1)
    return full[torch.arange(actions.shape[0], device=actions.device), delay], full[:, :-1]


def dc_motor_torques(
    joint_pos: torch.Tensor,
    joint_vel: torch.Tensor,
    targets: torch.Tensor,
    kp: torch.Tensor,
    kd: torch.Tensor,
    strength: torch.Tensor,
    effort_limit: torch.Tensor,
    velocity_limit: torch.Tensor,
    saturation: float,
) -> torch.Tensor:
    """The PD torque the solver applies: ``strength * (kp (target - q) - kd qd)`` clipped by ``strength *
    effort_limit`` and, with ``saturation`` > 0 (peak torque at zero speed), by the DC motor's torque-speed line
    ``saturation * (+-1 - qd / velocity_limit)``."""
    tau = strength * (kp * (targets - joint_pos) - kd * joint_vel)
    limit = strength * effort_limit
    if saturation <= 0.0:
        return torch.minimum(torch.maximum(tau, -limit), limit)
    hi = torch.minimum(limit, saturation * (1.0 - joint_vel / velocity_limit))
    lo = torch.maximum(-limit, saturation * (-1.0 - joint_vel / velocity_limit))
    return torch.minimum(torch.maximum(tau, lo), hi)
