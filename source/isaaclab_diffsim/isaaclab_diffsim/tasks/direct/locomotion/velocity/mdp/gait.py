"""The optional gait clock: foot phases, the swing profile and the joint-space trajectory generator."""

from __future__ import annotations

import math

import torch


def gait_phase(episode_length: torch.Tensor, step_dt: float, period_s: float) -> torch.Tensor:
    """Gait clock in [0, 1): episode time over the gait period (restarts at every reset); ``episode_length`` in
    policy steps."""
    return torch.remainder(episode_length.float() * step_dt / period_s, 1.0)


def gait_phases(cycles: torch.Tensor, phase_offsets: torch.Tensor) -> torch.Tensor:
    """Per-foot phases in [0, 1): ``cycles`` (N, 1) (time over the period) shifted by each foot's offset."""
    return torch.remainder(cycles + phase_offsets, 1.0)


def swing_profile(phases: torch.Tensor) -> torch.Tensor:
    """``max(sin(2 pi phase), 0)``: a half sine during the swing half of a foot's cycle, 0 in stance."""
    return torch.clamp(torch.sin(2.0 * math.pi * phases), min=0.0)


def trajectory_generator_offsets(
    swing: torch.Tensor, joint_legs: torch.Tensor, default_joint_pos: torch.Tensor, scale: float
) -> torch.Tensor:
    """Joint-target offsets (N, joints) of the trajectory generator: ``scale * swing_f * q_default`` for the joints
    of leg f (``joint_legs``: each joint's leg index), which folds a swinging leg whose default pose is bent."""
    return scale * swing[:, joint_legs] * default_joint_pos
