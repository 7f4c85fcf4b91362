"""The deployable controller: observation normaliser, actor, action scaling, default pose and gait generator.

Inputs: ``obs`` (N, num_obs) float32, the physical observation terms that ``io.yaml`` lists (without the gait
clock), and ``step`` (N, 1) float32, control steps since the robot's episode (its gait clock) started. The gait
phase is computed inside from ``step`` (``phase = (step * dt / period) mod 1``); the controller appends its
(sin, cos) to the observation for the actor and evaluates the trajectory generator at the same phase, as the
training env does. Outputs: ``joint_pos_target`` (N, num_joints) in the bundle's joint order, and ``actions``
(N, num_joints), the raw actor output, which the next observation's ``last_action`` term needs.
"""

from __future__ import annotations

import math

import torch
from torch import nn


class DeployedController(nn.Module):
    """``policy(normalised obs) -> actions`` folded together with everything a robot needs to turn them into
    joint position targets: ``default_joint_pos + action_scale * actions + gait offsets``.

    ``policy`` maps raw observations (with the gait clock when ``gait_period_s > 0``) to actions and holds its own
    normaliser (e.g. :class:`~isaaclab_diffsim.rl.shac.ShacInferencePolicy`). The trajectory generator
    offsets of joint j of leg f are ``joint_swing_scale * max(sin(2 pi (phase + phase_offsets[f])), 0) *
    default_joint_pos[j]``.
    """

    def __init__(
        self,
        policy: nn.Module,
        action_scale: float,
        default_joint_pos: torch.Tensor,
        step_dt: float,
        gait_period_s: float = 0.0,
        joint_swing_scale: float = 0.0,
        joint_phase_offsets=None,
        action_clip: float | None = None,
    ):
        super().__init__()
        self.policy = policy
        self.action_scale = float(action_scale)
        self.register_buffer("default_joint_pos", torch.as_tensor(default_joint_pos, dtype=torch.float32).clone())
        n = self.default_joint_pos.shape[0]
        self.step_dt = float(step_dt)
        self.gait_period_s = float(gait_period_s)
        self.use_gait = self.gait_period_s > 0.0
        self.joint_swing_scale = float(joint_swing_scale)
        offsets = torch.zeros(n) if joint_phase_offsets is None else torch.as_tensor(joint_phase_offsets)
        offsets = offsets.to(torch.float32)
        if offsets.shape != (n,):
            raise ValueError(f"joint_phase_offsets needs one entry per joint ({n}), got shape {tuple(offsets.shape)}")
        self.register_buffer("joint_phase_offsets", offsets.clone())
        self.use_clip = action_clip is not None
        self.action_clip = float(action_clip) if action_clip is not None else 0.0

    def forward(self, obs: torch.Tensor, step: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        if self.use_gait:
            # same float32 operations as the env's gait clock, so the phases agree to the last bit
            phase = torch.remainder(step * self.step_dt / self.gait_period_s, 1.0)
            angle = 2.0 * math.pi * phase
            obs = torch.cat([obs, torch.sin(angle), torch.cos(angle)], dim=1)
        actions = self.policy(obs)
        if self.use_clip:
            actions = torch.clamp(actions, -self.action_clip, self.action_clip)
        targets = self.default_joint_pos + self.action_scale * actions
        if self.use_gait and self.joint_swing_scale > 0.0:
            leg_phase = torch.remainder(step * self.step_dt / self.gait_period_s + self.joint_phase_offsets, 1.0)
            swing = torch.clamp(torch.sin(2.0 * math.pi * leg_phase), min=0.0)
            targets = targets + self.joint_swing_scale * swing * self.default_joint_pos
        return targets, actions
