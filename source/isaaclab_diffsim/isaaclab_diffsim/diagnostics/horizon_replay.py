"""Recompute a SHAC horizon's actor gradient from a snapshot (a captured horizon or a checkpoint's state), with the
per-substep traces of :func:`~isaaclab_diffsim.bridge.physics_step.probe_substeps`."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import gymnasium as gym
import numpy as np

from ..bridge.physics_step import StepTrace, probe_substeps
from ..rl.shac import ShacRunner
from ..rl.shac.capture import restore_snapshot
from ..tasks.task_cfgs import apply_overrides, load_task_cfgs


@dataclass
class HorizonResult:
    """Actor loss and gradient norm of one replayed horizon, and the traces of its physics steps."""

    loss: float
    grad_norm: float
    steps: list[StepTrace] = field(default_factory=list)
    error: str | None = None
    seconds: float = 0.0

    def series(self, name: str) -> np.ndarray:
        """A trace field over all substeps of the horizon, in time order (e.g. "adjoint_qd", "residual")."""
        parts = [getattr(s, name) for s in self.steps]
        return np.concatenate(parts) if parts else np.zeros(0)


def update_cfg(cfg, values: dict, path: str = "") -> None:
    """Set a configclass's fields from its ``to_dict()`` form (lists back to tuples, None-typed fields too, which
    ``from_dict`` refuses); fields the cfg no longer has are reported and skipped."""
    for key, value in values.items():
        if not hasattr(cfg, key):
            print(f"[replay] ignoring unknown cfg field {path}{key}")
            continue
        current = getattr(cfg, key)
        if isinstance(value, dict) and hasattr(current, "to_dict"):
            update_cfg(current, value, f"{path}{key}.")
        else:
            setattr(cfg, key, tuple(value) if isinstance(value, list) and isinstance(current, tuple) else value)


def build_runner(
    task: str,
    env_cfg: dict | None = None,
    agent_cfg: dict | None = None,
    overrides=(),
    num_envs: int | None = None,
    device: str | None = None,
) -> ShacRunner:
    """A SHAC runner (no log dir, no capture) on a fresh env of ``task``: the task's cfgs updated from the given
    ``to_dict()`` forms, then ``num_envs``, ``device`` and ``env.x=...``/``agent.x=...`` overrides."""
    env_obj, agent_obj = load_task_cfgs(task, "shac_cfg_entry_point")
    update_cfg(env_obj, env_cfg or {})
    update_cfg(agent_obj, agent_cfg or {})
    if num_envs is not None:
        env_obj.num_envs = int(num_envs)
    if device is not None:
        env_obj.device = agent_obj.device = device
    agent_obj.capture_grad_norm = None
    apply_overrides(list(overrides), env=env_obj, agent=agent_obj)
    env_obj.validate_values()
    env = gym.make(task, cfg=env_obj).unwrapped
    return ShacRunner(env, agent_obj, log_dir=None, device=agent_obj.device)


def replay(runner: ShacRunner, snapshot: dict) -> HorizonResult:
    """Restore ``snapshot`` (see :mod:`~isaaclab_diffsim.rl.shac.capture`), roll the horizon out and differentiate
    its actor loss. A rollout stopped by a non-finite state gives NaN with the error. The env is left at the
    horizon's end, the RNGs advanced as in training."""
    obs = restore_snapshot(runner, snapshot)
    t0 = time.perf_counter()
    with probe_substeps() as probe:
        try:
            loss, norm = runner.actor_gradient(obs)
            error = None
        except FloatingPointError as err:
            loss = norm = float("nan")
            error = str(err)
    return HorizonResult(loss, norm, probe.steps, error, time.perf_counter() - t0)
