"""Capture of bad SHAC horizons: what a horizon starts from, written when its actor gradient is bad, and restored
to recompute it (``scripts/tools/replay_horizon.py``).

A snapshot is taken at every horizon start while capture is on (state dicts and the env state are small), so the
file holds the networks and normaliser statistics the rollout used, not the ones after the update (the rollout
normalises with the statistics frozen at its start; its observations enter them only after a valid update). While
a critic fit runs beside the rollout, the critic's weights in the snapshot may be mid-fit (a rollout never reads
them) and the target critic is taken at the horizon's end, once the fit the horizon waited for is applied. The
observation is stored too: the env may change its state after computing it (interval pushes, command resampling), so
``env.set_state`` could recompute a different one.
"""

from __future__ import annotations

import math
import os

import torch

from .state import detached, rng_states, set_rng_states


def take_snapshot(runner) -> dict:
    """Everything the next horizon depends on: env state and observation, networks, normaliser, RNG states."""
    env, alg = runner.env, runner.alg
    env.detach()
    norm = alg.obs_normalizer
    return {
        "env_state": detached(env.get_state()),
        "obs": env.get_observations().detach().clone(),
        "model_state_dict": detached(alg.policy.state_dict()),
        # with a critic fit still running, the horizon's target critic is known only once it is applied (see end)
        "target_critic_state_dict": None if alg.critic_fit_pending else detached(alg.target_critic.state_dict()),
        "obs_normalizer_state_dict": detached(norm.state_dict()) if norm is not None else None,
        "rng_state": rng_states(),
    }


def restore_snapshot(runner, snap: dict) -> torch.Tensor:
    """Put networks, normaliser, env and RNGs back to a snapshot; returns the horizon's first observation."""
    alg = runner.alg
    alg.policy.load_state_dict(snap["model_state_dict"])
    alg.target_critic.load_state_dict(snap["target_critic_state_dict"])
    if alg.obs_normalizer is not None and snap.get("obs_normalizer_state_dict") is not None:
        alg.obs_normalizer.load_state_dict(snap["obs_normalizer_state_dict"])
    runner.env.set_state(snap["env_state"])
    set_rng_states(snap["rng_state"])
    return snap["obs"].to(runner.device)


def load_capture(path: str) -> dict:
    """A file written by :class:`HorizonCapture` (tensors on the CPU)."""
    return torch.load(path, map_location="cpu", weights_only=False)


class HorizonCapture:
    """Writes ``<directory>/horizon_<iteration>.pt`` for horizons whose actor gradient norm is not finite or above
    ``cfg.capture_grad_norm``, at most ``cfg.max_captures`` per instance; inactive without a directory.

    Call :meth:`begin` at the horizon's start and :meth:`end` with the update's statistics.
    """

    def __init__(self, cfg, directory: str | None):
        self.cfg, self.directory = cfg, directory
        self.paths: list[str] = []
        self._snapshot: dict | None = None

    @property
    def active(self) -> bool:
        return (
            self.directory is not None
            and self.cfg.capture_grad_norm is not None
            and len(self.paths) < int(self.cfg.max_captures)
        )

    def is_bad(self, grad_norm: float) -> bool:
        return not math.isfinite(grad_norm) or grad_norm > float(self.cfg.capture_grad_norm)

    def begin(self, runner) -> None:
        self._snapshot = take_snapshot(runner) if self.active and hasattr(runner.env, "get_state") else None

    def end(self, runner, iteration: int, stats: dict, error: str | None = None) -> str | None:
        """Write the snapshot if the horizon was bad; returns the file's path (None if nothing was written)."""
        snap, self._snapshot = self._snapshot, None
        if snap is None or not self.is_bad(float(stats["grad_norm"])):
            return None
        if snap["target_critic_state_dict"] is None:
            if error is not None:  # the rollout failed before its update applied the fit it waited for
                runner.alg.finish_critic_fit()
            snap["target_critic_state_dict"] = detached(runner.alg.target_critic.state_dict())
        env = runner.env
        env_cfg = getattr(env, "cfg", None)
        spec = getattr(env, "spec", None)
        snap.update(
            iteration=iteration,
            grad_norm=float(stats["grad_norm"]),
            stats=dict(stats),
            error=error,
            agent_cfg=runner.cfg.to_dict(),
            env_cfg=env_cfg.to_dict() if hasattr(env_cfg, "to_dict") else None,
            task=getattr(spec, "id", None),
            num_envs=runner.num_envs,
        )
        os.makedirs(self.directory, exist_ok=True)
        path = os.path.join(self.directory, f"horizon_{iteration}.pt")
        torch.save(snap, path + ".tmp")
        os.replace(path + ".tmp", path)
        self.paths.append(path)
        print(f"[SHAC] captured horizon of iteration {iteration} (actor gradient norm {snap['grad_norm']:.3g}): {path}")
        return path
