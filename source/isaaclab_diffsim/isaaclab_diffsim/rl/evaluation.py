"""Policy evaluation on a DiffVelocityEnv: return, velocity-tracking error and fall rate over M episodes."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch


@dataclass
class EvalResult:
    returns: np.ndarray
    tracking_errors: np.ndarray
    falls: np.ndarray
    joint_trace: np.ndarray

    def summary(self) -> str:
        return (
            f"episodes {len(self.returns)}: return {self.returns.mean():.2f} +- {self.returns.std():.2f}, "
            f"lin-vel tracking error {self.tracking_errors.mean():.3f} m/s, "
            f"fall rate {100.0 * self.falls.mean():.1f} %"
        )


@torch.no_grad()
def evaluate(env, policy, num_episodes: int, progress: bool = True, step_callback=None) -> EvalResult:
    """Run the deterministic ``policy(obs) -> actions`` until ``num_episodes`` episodes have finished.

    ``step_callback()``, if given, is called after every ``env.step`` (recording, visualizers).

    Tracking error: per episode, the mean over its steps of |v_xy,cmd - v_xy| in the base frame [m/s].
    A fall is an episode that ended by termination (not by time-out).
    """
    n = env.num_envs
    obs = env.reset()
    ep_return = torch.zeros(n, device=env.device)
    ep_err = torch.zeros(n, device=env.device)
    ep_len = torch.zeros(n, device=env.device)
    returns, errors, falls, trace = [], [], [], []
    steps = 0
    while len(returns) < num_episodes:
        actions = policy(obs)
        cmd = env.commands[:, :2].clone()
        obs_next, rew, term, trunc, extras = env.step(actions)
        if step_callback is not None:
            step_callback()
        lin_b = extras["terminal_obs"][:, 0:2]
        ep_err += (cmd - lin_b).norm(dim=1)
        ep_return += rew
        ep_len += 1
        if len(trace) < env.max_episode_length:
            trace.append(env.q[0, 7:].cpu().numpy().copy())
        done = term | trunc
        for i in torch.nonzero(done).flatten().tolist():
            if len(returns) < num_episodes:
                returns.append(ep_return[i].item())
                errors.append((ep_err[i] / ep_len[i]).item())
                falls.append(bool(term[i]))
        ep_return[done] = 0.0
        ep_err[done] = 0.0
        ep_len[done] = 0.0
        obs = obs_next
        steps += 1
        if progress and steps % 250 == 0:
            print(f"[eval] {steps} steps, {len(returns)}/{num_episodes} episodes finished", flush=True)
    return EvalResult(np.array(returns), np.array(errors), np.array(falls), np.array(trace))
