"""Policy evaluation on a DiffVelocityEnv: return, velocity-tracking error and fall rate over a fixed set of episodes.

The set is fixed before anything is run: the first episode of each of ``num_episodes`` envs, counted from a
reset. Keeping instead the first ``num_episodes`` episodes that *finish* would over-sample short episodes (falls),
biasing the fall rate up and the return down by an amount that depends on the policy and on ``num_envs``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import torch

from ..envs.nonfinite import check_finite
from .speed_profile import DirectionProfile, SpeedProfile


@dataclass
class EvalResult:
    """Per-episode metrics of :func:`evaluate` (one entry per evaluated episode, in env order)."""

    returns: np.ndarray
    tracking_errors: np.ndarray
    falls: np.ndarray
    lengths: np.ndarray
    joint_trace: np.ndarray
    """Joint positions (steps, 12) of env 0 at the start of each step of its evaluated episode."""
    yaw_errors: np.ndarray
    """Mean over the episode's steps of |w_z,cmd - w_z| in the base frame [rad/s]."""
    speed_profile: list[dict] = field(default_factory=list)
    """The evaluated steps by command speed (:meth:`.speed_profile.SpeedProfile.rows`)."""
    direction_profile: list[dict] = field(default_factory=list)
    """The evaluated steps by command direction (:meth:`.speed_profile.DirectionProfile.rows`)."""

    def summary(self) -> str:
        return (
            f"episodes {len(self.returns)}: return {self.returns.mean():.2f} +- {self.returns.std():.2f}, "
            f"lin-vel tracking error {self.tracking_errors.mean():.3f} m/s, "
            f"yaw-rate error {self.yaw_errors.mean():.3f} rad/s, "
            f"fall rate {100.0 * self.falls.mean():.1f} %, length {self.lengths.mean():.1f} steps"
        )


@torch.no_grad()
def evaluate(
    env, policy, num_episodes: int, progress: bool = True, step_callback=None, profiles: tuple = ()
) -> EvalResult:
    """Run the deterministic ``policy(obs) -> actions`` on a fixed set of ``num_episodes`` full episodes.

    The env is reset, then stepped until each of its first ``min(num_episodes, num_envs)`` envs has finished its
    first episode; the other episodes (later ones, other envs) are ignored. When ``num_episodes > num_envs`` this
    is repeated after a new reset (rounds of ``num_envs`` episodes, the last round taking the first envs); give
    the env ``num_envs >= num_episodes`` for a single round. A round lasts until its slowest counted episode ends
    (at most ``max_episode_length`` steps).

    Return: sum of the rewards of the episode's steps. Tracking error: mean over the episode's steps of
    |v_xy,cmd - v_xy| in the base frame [m/s]; yaw error: of |w_z,cmd - w_z| [rad/s]. A fall is an episode that
    ended by termination (not by time-out). ``speed_profile`` and ``direction_profile``: the evaluated steps'
    tracking by command speed and by command direction.
    Raises FloatingPointError (env ids and step) if the policy returns a non-finite action.
    ``step_callback()``, if given, is called after every ``env.step`` (recording, visualizers). ``profiles``: more
    :mod:`.speed_profile` accumulators (an :class:`~.speed_profile.EnvGroupProfile`) that count the same steps.
    """
    if num_episodes < 1:
        raise ValueError(f"evaluate: num_episodes must be >= 1, got {num_episodes!r}")
    n = env.num_envs
    returns, errors, falls, lengths, trace, yaw = [], [], [], [], [], []
    profiles = (SpeedProfile(), DirectionProfile(), *profiles)
    for r in range(math.ceil(num_episodes / n)):
        k = min(n, num_episodes - r * n)
        res = _evaluate_round(env, policy, k, (r == 0), progress, step_callback, profiles)
        returns.append(res[0])
        errors.append(res[1])
        falls.append(res[2])
        lengths.append(res[3])
        yaw.append(res[5])
        if r == 0:
            trace = res[4]
    return EvalResult(
        np.concatenate(returns),
        np.concatenate(errors),
        np.concatenate(falls),
        np.concatenate(lengths),
        np.array(trace),
        np.concatenate(yaw),
        profiles[0].rows(),
        profiles[1].rows(),
    )


def _evaluate_round(env, policy, k: int, record_trace: bool, progress: bool, step_callback, profiles: tuple):
    """Metrics of the first episode of envs 0..k-1 after a reset (numpy arrays of length k) and env 0's trace; their
    steps are added to each of ``profiles``."""
    n, dev = env.num_envs, env.device
    obs = env.reset()
    ep_return = torch.zeros(n, device=dev)
    ep_err = torch.zeros(n, device=dev)
    ep_yaw_err = torch.zeros(n, device=dev)
    ep_len = torch.zeros(n, device=dev)
    finished = torch.zeros(n, dtype=torch.bool, device=dev)
    fell = torch.zeros(n, dtype=torch.bool, device=dev)
    counted = torch.arange(n, device=dev) < k
    trace = []
    steps = 0
    while not bool(finished[:k].all()):
        actions = policy(obs)
        check_finite({"actions from the policy": actions}, steps)
        if record_trace and not bool(finished[0]):
            trace.append(env.q[0, 7:].cpu().numpy().copy())
        cmd = env.commands[:, :3].clone()
        obs, rew, term, trunc, extras = env.step(actions)
        if step_callback is not None:
            step_callback()
        active = ~finished  # envs still in their first episode
        lin_b, yaw_rate = extras["terminal_obs"][:, 0:2], extras["terminal_obs"][:, 5]
        ep_err += torch.where(active, (cmd[:, :2] - lin_b).norm(dim=1), 0.0)
        for profile in profiles:
            profile.add(cmd[:, :2], lin_b, active & counted)
        ep_yaw_err += torch.where(active, (cmd[:, 2] - yaw_rate).abs(), 0.0)
        ep_return += torch.where(active, rew, 0.0)
        ep_len += active.float()
        done = (term | trunc) & active
        fell |= term & active
        finished |= done
        steps += 1
        if progress and steps % 250 == 0:
            print(f"[eval] {steps} steps, {int(finished[:k].sum())}/{k} episodes finished", flush=True)
    sel = slice(0, k)
    return (
        ep_return[sel].cpu().numpy(),
        (ep_err[sel] / ep_len[sel]).cpu().numpy(),
        fell[sel].cpu().numpy(),
        ep_len[sel].cpu().numpy().astype(np.int64),
        trace,
        (ep_yaw_err[sel] / ep_len[sel]).cpu().numpy(),
    )
