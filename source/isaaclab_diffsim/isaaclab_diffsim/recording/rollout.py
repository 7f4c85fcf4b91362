"""Recorded rollouts with gradients: a differentiated rollout for ``play.py`` and one SHAC horizon for the runner.

The gradient magnitude recorded per step t and robot is |dJ/da_t|, the norm of the gradient of the horizon's
objective J with respect to that step's action (what reaches the actor's output at step t, through the physics
and the later observations). For ``play.py``, J is the sum of the horizon's rewards; for a SHAC horizon, J is the
actor loss the runner backpropagates (rewards plus the critic's terminal value).
"""

from __future__ import annotations

import numpy as np
import torch

from .usd_recorder import RolloutRecorder


def _action_grad_norms(actions: list[torch.Tensor], grads: list[torch.Tensor | None], k: int) -> np.ndarray:
    rows = []
    for _a, g in zip(actions, grads):
        if g is None:  # the objective does not depend on this action (e.g. no step after it): gradient zero
            rows.append(np.zeros(k))
        else:
            rows.append(g[:k].detach().norm(dim=1).cpu().numpy())
    return np.stack(rows)


def record_differentiated_rollout(env, policy, recorder: RolloutRecorder, steps: int, horizon: int) -> np.ndarray:
    """Run ``steps`` policy steps in horizons of ``horizon`` steps with the graph kept, record each step, and write
    |dJ/da_t| per step, J the sum over the horizon's steps and all envs of the rewards. The env's state is cut
    (``env.detach()``) at every horizon start, as in SHAC. Returns the norms (steps, record_envs)."""
    if steps < 1 or horizon < 1:
        raise ValueError(f"steps and horizon must be >= 1, got {steps}, {horizon}")
    out, done = [], 0
    obs = env.get_observations()
    while done < steps:
        h = min(horizon, steps - done)
        env.detach()
        obs = obs.detach()
        first = recorder.frames
        actions, objective = [], 0.0
        with torch.enable_grad():
            for _ in range(h):
                a = policy(obs)
                if not a.requires_grad:  # the horizon's first action: make it a leaf so it gets a gradient
                    a = a.detach().requires_grad_(True)
                obs, rew, _, _, _ = env.step(a)
                objective = objective + rew.sum()
                actions.append(a)
                recorder.add_step()
            grads = torch.autograd.grad(objective, actions, allow_unused=True)
        norms = _action_grad_norms(actions, list(grads), recorder.record_envs)
        recorder.set_grad_norms(first, norms)
        out.append(norms)
        done += h
    env.detach()
    return np.concatenate(out)


class HorizonRecording:
    """One SHAC horizon: call :meth:`step` with each step's actions (after ``env.step``), then :meth:`finish`
    after the actor loss's backward; the actions' retained gradients give |dL/da_t|."""

    def __init__(self, env, path: str, record_envs: int):
        self.recorder = RolloutRecorder(env, path, record_envs=min(int(record_envs), env.num_envs))
        self.actions: list[torch.Tensor] = []

    def step(self, actions: torch.Tensor) -> None:
        if actions.requires_grad:
            actions.retain_grad()
        self.actions.append(actions)
        self.recorder.add_step()

    def finish(self) -> str:
        """Write the gradient norms (NaN where the update produced none, e.g. a skipped iteration) and save."""
        if any(a.grad is not None for a in self.actions):
            grads = [a.grad for a in self.actions]
            norms = _action_grad_norms(self.actions, grads, self.recorder.record_envs)
            self.recorder.set_grad_norms(0, norms)
        self.actions = []
        return self.recorder.save()
