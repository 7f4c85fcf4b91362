"""The velocity env's observation and joint targets as a LEAPP export traces them (``env.leapp_node`` set, see
:mod:`isaaclab_diffsim.deploy.leapp_pipeline`): computed from the raw inputs a robot measures (base orientation and
velocities in the base frame, joint states, the command) and the pipeline's own state (last actions, the gait
clock's step count), so the exported graph holds the projected gravity, the default-pose offset, the gait clock and
the trajectory generator."""

from __future__ import annotations

import math

import torch

from .....deploy.leapp_pipeline.annotations import annotate_inputs, annotate_outputs
from .....envs.rotations import quat_rotate_inverse
from . import mdp


def traced_observations(env, q: torch.Tensor, qd: torch.Tensor, last_actions: torch.Tensor) -> torch.Tensor:
    """The observation of ``env._observations`` without noise, from annotated inputs; keeps the traced step count
    for :func:`traced_targets`."""
    cfg = env.cfg
    if cfg.height_scan is not None:
        raise NotImplementedError("a LEAPP export of a height-scan observation (cfg.height_scan) is not supported")
    if cfg.foot_heights is not None:
        raise NotImplementedError("a LEAPP export of the foot-height observation (cfg.foot_heights) is not supported")
    quat = q[:, 3:7]
    lin_b, ang_b = quat_rotate_inverse(quat, qd[:, 0:3]), quat_rotate_inverse(quat, qd[:, 3:6])
    step = env.episode_length_buf.float()[:, None]
    quat, lin_b, ang_b, commands, joint_pos, joint_vel, last_actions, step = annotate_inputs(
        env, quat, lin_b, ang_b, env.commands, q[:, 7:], qd[:, 6:], last_actions, step
    )
    proj_g = quat_rotate_inverse(quat, torch.zeros_like(lin_b) + lin_b.new_tensor([0.0, 0.0, -1.0]))
    base = (lin_b, ang_b, proj_g)
    obs = mdp.policy_observation(base, commands, joint_pos - env.default_leg, joint_vel, last_actions)
    if cfg.gait.period_s > 0:  # the clock of (N, 1) step counts
        angle = 2.0 * math.pi * torch.remainder(step * env.step_dt / cfg.gait.period_s, 1.0)
        obs = torch.cat([obs, torch.sin(angle), torch.cos(angle)], 1)
    env._leapp_step = step
    return obs


def traced_targets(env, actions: torch.Tensor) -> None:
    """The joint targets of ``env._pre_physics_step`` recomputed from the traced actions and gait clock, annotated
    as the export's output (the action delay is a randomisation of training: the export needs none)."""
    if env.action_queue.shape[1] > 0:
        raise ValueError("a LEAPP export needs events.action_delay_range (0, 0): the delay is not deployed")
    step, gait = env._leapp_step, env.cfg.gait
    targets = mdp.joint_targets(env.default_leg, env.cfg.action_scale, actions)
    if gait.joint_swing_scale > 0:
        swing = mdp.swing_profile(mdp.gait_phases(step * env.step_dt / gait.period_s, env.gait_offsets))
        targets = targets + mdp.trajectory_generator_offsets(
            swing, env.joint_legs, env.default_leg, gait.joint_swing_scale
        )
    annotate_outputs(env, actions, step, targets)
