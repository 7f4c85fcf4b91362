"""Observation terms of the flat velocity MDP (Isaac Lab's ``base_lin_vel`` ... ``last_action``) and its noise."""

from __future__ import annotations

import math

import torch
from isaaclab.utils.noise import UniformNoiseCfg

from ......envs.rotations import quat_rotate_inverse

NOISY_TERMS = ("base_lin_vel", "base_ang_vel", "projected_gravity", "joint_pos", "joint_vel")
"""The observation terms that can be corrupted (commands and last actions: none)."""


def observation_terms(num_joints: int) -> dict[str, slice]:
    """Entries of each term of the flat velocity MDP's observation (before the optional gait clock)."""
    sizes = {
        "base_lin_vel": 3,
        "base_ang_vel": 3,
        "projected_gravity": 3,
        "velocity_commands": 3,
        "joint_pos": num_joints,
        "joint_vel": num_joints,
        "actions": num_joints,
    }
    terms, start = {}, 0
    for name, size in sizes.items():
        terms[name], start = slice(start, start + size), start + size
    return terms


def observation_size(num_joints: int) -> int:
    """Size of the flat velocity MDP's observation (without the gait clock): 12 + 3 x joints."""
    return observation_terms(num_joints)["actions"].stop


def base_frame(q: torch.Tensor, qd: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Base linear and angular velocity and projected gravity, in the base frame, from the joint state (free joint
    first: position, quaternion xyzw; world-frame linear, angular velocity)."""
    quat = q[:, 3:7]
    lin_b = quat_rotate_inverse(quat, qd[:, 0:3])
    ang_b = quat_rotate_inverse(quat, qd[:, 3:6])
    proj_g = quat_rotate_inverse(quat, q.new_tensor([0.0, 0.0, -1.0]).expand(q.shape[0], 3))
    return lin_b, ang_b, proj_g


def policy_observation(
    base: tuple[torch.Tensor, torch.Tensor, torch.Tensor],
    commands: torch.Tensor,
    joint_pos_rel: torch.Tensor,
    joint_vel: torch.Tensor,
    last_actions: torch.Tensor,
) -> torch.Tensor:
    """The flat MDP's terms in :func:`observation_terms` order; ``base`` is :func:`base_frame`'s triple and
    ``joint_pos_rel`` the joint positions minus the default pose."""
    lin_b, ang_b, proj_g = base
    return torch.cat([lin_b, ang_b, proj_g, commands, joint_pos_rel, joint_vel, last_actions], 1)


def gait_clock(phase: torch.Tensor) -> torch.Tensor:
    """(sin, cos) of a gait phase in [0, 1): (N,) -> (N, 2)."""
    angle = 2.0 * math.pi * phase
    return torch.cat([torch.sin(angle)[:, None], torch.cos(angle)[:, None]], 1)


def observation_noise(terms: dict[str, slice], noise_cfg, device) -> UniformNoiseCfg:
    """The noise configs of :data:`NOISY_TERMS` (attributes of ``noise_cfg``; None: no noise) as one Isaac Lab
    ``UniformNoiseCfg`` over the observation's entries (per-entry bounds, 0 where a term has none), so one call of
    its function corrupts the whole observation. ``terms``: :func:`observation_terms`."""
    size = terms["actions"].stop
    lo, hi = torch.zeros(size, device=device), torch.zeros(size, device=device)
    for name in NOISY_TERMS:
        entries = terms[name]
        noise = getattr(noise_cfg, name)
        if noise is None:
            continue
        if not isinstance(noise, UniformNoiseCfg) or noise.operation != "add":
            raise ValueError(f"observations.{name}: only additive UniformNoiseCfg is supported, got {noise!r}")
        lo[entries], hi[entries] = float(noise.n_min), float(noise.n_max)
    return UniformNoiseCfg(n_min=lo, n_max=hi)
