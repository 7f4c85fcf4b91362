"""What a SHAC horizon's actor gradient asks of the robot: the gradient of the actor loss with respect to each step's
actions, and the first-order change it makes to the feet and the base.

A horizon is rolled out from a snapshot with the graph kept; ``g_t = d loss / d a_t`` for every step's action
(the action is a node of the graph, so ``g_t`` holds what later steps, the policy's reaction to later observations
included, make of it). The horizon is then replayed from the same snapshot (same RNG draws) with each action moved
along the loss's descent, ``a_t - eps g_t / rms(g)`` (``eps`` is the root-mean-square shift of one action entry),
and the measures of the two rollouts are compared: ``(m(eps) - m(0)) / eps`` is the directional derivative of a
measure ``m`` along the steepest descent, for small ``eps``. The loss's own change is the finite-difference check:
to first order ``(loss(eps) - loss(0)) / eps = -||g||^2 / rms(g)``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from ..rl.shac.capture import restore_snapshot, take_snapshot
from ..tasks.direct.locomotion.velocity.mdp.observations import base_frame

MEASURES = ("foot_height_mean", "foot_height_max", "feet_airborne", "base_height", "forward_velocity")
"""Per-horizon measures (means over the horizon's steps and the envs): foot height above the ground [m] averaged
over the feet and the highest foot's, the number of feet above ``airborne_height``, the base height above the ground
[m] and the base's forward velocity (x in the base frame, as the tracking terms) [m/s]."""


@dataclass
class DirectionResult:
    """One horizon: the actor loss, ``||g||`` over all its actions, the loss change along ``-g`` per ``eps``
    measured by the replay and predicted by ``g`` (``-||g||^2 / rms(g)``), and each measure's value and change per
    ``eps``."""

    loss: float
    grad_norm: float
    loss_slope: float
    predicted_loss_slope: float
    measures: dict[str, float]
    slopes: dict[str, float]


def _measures(env, airborne_height: float) -> dict[str, torch.Tensor]:
    """The measures of the env's current state, per env."""
    with torch.no_grad():
        feet = env.foot_heights(env.body_q)
        q, qd = env.q, env.qd
        base_h = env.height_above_ground(q[:, None, :3])[:, 0]
        return {
            "foot_height_mean": feet.mean(1),
            "foot_height_max": feet.max(1).values,
            "feet_airborne": (feet > airborne_height).float().sum(1),
            "base_height": base_h,
            "forward_velocity": base_frame(q, qd)[0][:, 0],
        }


def _rollout(runner, obs: torch.Tensor, shifts: list[torch.Tensor] | None, airborne_height: float):
    """One horizon from ``obs`` (the env at the snapshot), each action plus ``shifts[t]``; returns (loss, the action
    nodes, the measures averaged over steps)."""
    alg, env = runner.alg, runner.env
    alg.begin_horizon(obs, update_normalizer=False)
    actions, sums = [], None
    for t in range(runner.horizon):
        a = alg.act(obs)
        if shifts is not None:
            a = a + shifts[t]
        actions.append(a)
        obs, rew, term, trunc, extras = env.step(a.to(env.device))
        obs = obs.to(runner.device)
        alg.process_env_step(obs, rew, term.to(runner.device), trunc.to(runner.device), extras)
        m = _measures(env, airborne_height)
        sums = m if sums is None else {k: sums[k] + m[k] for k in m}
    return alg.actor_loss, actions, {k: float(v.detach().mean()) / runner.horizon for k, v in sums.items()}


def gradient_direction(runner, eps: float, airborne_height: float = 0.02) -> DirectionResult:
    """The horizon from the runner's env state: its actor-loss gradient with respect to the actions and the
    measures' change per ``eps`` along the steepest descent. The env is left where the unperturbed horizon ends
    (as a training iteration would leave it, without an update)."""
    if eps <= 0.0:
        raise ValueError(f"eps must be positive, got {eps}")
    runner.env.detach()
    snap = take_snapshot(runner)
    obs = restore_snapshot(runner, snap)
    try:
        loss, actions, _ = _rollout(runner, obs, None, airborne_height)
        grads = torch.autograd.grad(loss, actions)
    finally:
        runner.alg.abort_horizon()
    norm = float(torch.sqrt(sum((g.double() ** 2).sum() for g in grads)))
    if not (norm > 0.0 and math.isfinite(norm)):
        raise FloatingPointError(f"the actor loss's action gradient has norm {norm}")
    rms = norm / sum(g.numel() for g in grads) ** 0.5
    results = {}
    for scale in (eps, 0.0):  # the unperturbed replay last: it leaves the env where training would
        shifts = [-scale * g / rms for g in grads]
        runner.env.detach()
        obs = restore_snapshot(runner, snap)
        with torch.no_grad():
            try:
                loss_s, _, measures = _rollout(runner, obs, shifts, airborne_height)
                results[scale] = (float(loss_s), measures)
            finally:
                runner.alg.abort_horizon()
    (l0, m0), (l1, m1) = results[0.0], results[eps]
    return DirectionResult(
        loss=l0,
        grad_norm=norm,
        loss_slope=(l1 - l0) / eps,
        predicted_loss_slope=-norm * norm / rms,
        measures=m0,
        slopes={k: (m1[k] - m0[k]) / eps for k in MEASURES},
    )
