"""``ShacRunner``: SHAC's rollout loop, checkpoints and policy export (like rsl_rl's OnPolicyRunner); the
logging is :class:`~.logger.ShacLogger`'s.

The environment interface the runner needs (a differentiable vectorised env)::

    env.num_envs, env.num_obs, env.num_actions, env.device, env.max_episode_length
    env.reset() -> obs                       # (num_envs, num_obs)
    env.get_observations() -> obs
    env.step(actions) -> (obs, reward, terminated, truncated, extras)
        # with grad enabled, obs and reward are differentiable in actions and in the previous state;
        # done envs are reset inside step (returned obs is post-reset, its graph cut there);
        # extras["terminal_obs"]: pre-reset obs (with graph), extras["time_outs"]: truncated,
        # extras["episode"]: dict of scalar episode statistics (optional)
    env.detach()                             # cut the graph of the env's internal state
    env.get_state() -> object, env.set_state(object)   # optional: saved in checkpoints (bit-for-bit resume)

Several processes (``torch.distributed`` initialised, e.g. by ``scripts/train.py --distributed`` under torchrun)
train one policy: each rank steps its own envs, rank 0's networks are broadcast at the start of :meth:`learn`,
gradients are averaged before every optimiser step, the normaliser merges all ranks' observations, and only rank 0
logs and writes checkpoints (give the other ranks ``log_dir=None``). See ``docs/distributed.md``.

The runner does not seed the global RNGs; callers do (``torch.manual_seed(cfg.seed)`` etc.). Checkpoints
store the RNG states, so a resumed run continues bit for bit when the env also provides
``get_state``/``set_state``. With a ``log_dir``, horizons with a bad actor gradient are captured for replay
(``cfg.capture_grad_norm``, :mod:`.capture`).
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from typing import Any

import torch

from .. import distributed
from ..checkpoints import checkpoint_error, env_cfg_dict, load_checkpoint
from ..interrupts import InterruptGuard, TrainingInterrupted
from .capture import HorizonCapture
from .export import export_policy
from .logger import ShacLogger
from .modules import ShacInferencePolicy
from .resolve import resolve_class
from .shac import SHAC, sync_device
from .shac_cfg import ShacRunnerCfg
from .state import detached, rng_states, set_rng_states, to_cpu, to_device
from .warm_start import first_observation_stats, source_observations, widened_state


class ShacRunner:
    """Trains a policy with :class:`SHAC` on a differentiable vectorised environment.

    Args:
        env: The environment (see the module docstring for the interface).
        cfg: Runner configuration (a :class:`ShacRunnerCfg`, or its ``to_dict()`` form).
        log_dir: Directory for TensorBoard logs and checkpoints; None disables both.
        device: Device of the networks; defaults to ``cfg.device``.
    """

    def __init__(
        self, env: Any, cfg: ShacRunnerCfg | dict, log_dir: str | None = None, device: str | torch.device | None = None
    ):
        if isinstance(cfg, dict):
            d, cfg = cfg, ShacRunnerCfg()
            cfg.from_dict(d)
        cfg.validate_values()
        self.env = env
        self.cfg = cfg
        self.device = torch.device(device if device is not None else cfg.device)
        self.log_dir = log_dir
        self.num_envs = int(env.num_envs)
        self.horizon = int(cfg.horizon)
        self.rank, self.world_size = distributed.rank(), distributed.world_size()
        if self.world_size > 1:
            if self.rank > 0 and log_dir is not None:
                raise ValueError(f"rank {self.rank}: only rank 0 logs and writes checkpoints; pass log_dir=None")
            counts = distributed.gather_rank_rows(torch.tensor([self.num_envs], device=self.device))
            if bool((counts != self.num_envs).any()):
                raise ValueError(f"every rank needs the same number of envs, got {counts.flatten().tolist()}")
        self._writes_checkpoints = distributed.broadcast_flag(log_dir is not None, device=self.device)
        """Whether checkpoints are saved (rank 0 has a log_dir); with several ranks, saving gathers every rank's
        state, so all ranks call :meth:`save` at the same points."""

        obs = self.env.reset()
        num_obs = self.num_obs = int(getattr(env, "num_obs", obs.shape[-1]))
        alg_class: type[SHAC] = resolve_class(cfg.algorithm.class_name)
        self.alg = alg_class(
            num_obs=num_obs,
            num_actions=int(env.num_actions),
            num_envs=self.num_envs,
            horizon=self.horizon,
            cfg=cfg.algorithm,
            policy_cfg=cfg.policy,
            max_iterations=cfg.max_iterations,
            device=self.device,
        )

        self.current_learning_iteration = 0
        self.total_samples = 0
        """Env steps (envs x steps) of the horizons that completed; ``aborted_samples`` counts those of the horizons
        the env aborted (non-finite state), which trained nothing."""
        self.aborted_samples = 0
        self.wall_time = 0.0
        self.last_checkpoint: str | None = None
        self.last_good_checkpoint: str | None = None
        self.interrupted = False
        self.interrupt_signal: int | None = None
        self.kappa: float | None = None
        """The kappa the last iteration ran with, when ``cfg.kappa_schedule`` is on."""
        self.last_stats: dict[str, float] = {}
        self.capture = HorizonCapture(cfg, None if log_dir is None else os.path.join(log_dir, "bad_horizons"))
        samples_per_iteration = self.horizon * self.num_envs * self.world_size
        self.logger = ShacLogger(log_dir, self.num_envs, samples_per_iteration, self.rank, self.device)

    # ------------------------------------------------------------------ training

    def learn(self, num_iterations: int | None = None) -> None:
        """Train up to iteration ``cfg.max_iterations`` (the default: a resumed run finishes the original one), or
        for ``num_iterations`` more iterations from ``current_learning_iteration``.

        Saves ``model_<it>.pt`` every ``save_interval`` iterations (skipped while updates are being skipped for
        non-finite values) and at the end (when ``log_dir`` is set).

        Ctrl-C (SIGINT) or SIGTERM (what cluster schedulers send): during a rollout, the rollout is abandoned and
        env, RNG and episode statistics are put back to the iteration's start; during the update, the iteration is
        finished first. Either way the last *completed* iteration is saved as ``model_<it>_interrupted.pt``
        (``self.interrupted`` and ``self.interrupt_signal`` are set) and learn() returns; resuming from that file
        continues bit for bit. A second signal during an update stops at once and saves nothing.

        A ``FloatingPointError`` raised by ``env.step`` (non-finite state) aborts the horizon and counts as a
        skipped iteration; a skipped iteration changes neither networks nor normaliser. Raises RuntimeError after
        ``max_consecutive_nonfinite`` consecutive iterations with a skipped update. Bad horizons are captured (see
        :class:`HorizonCapture`). Times per iteration: forward (rollout), backward (the actor loss's, through the
        physics) and the rest of the update.
        """
        self.logger.init_logging_writer()
        self.alg.train_mode()
        self._broadcast_from_rank0()
        start_it = self.current_learning_iteration
        if num_iterations is None:
            end_it = int(self.cfg.max_iterations)
        else:
            end_it = start_it + int(num_iterations)
        self.interrupted, self.interrupt_signal = False, None
        start_state, self._in_rollout = None, False
        try:
            with InterruptGuard() as guard:
                for it in range(start_it, end_it):
                    if self.world_size == 1:  # with several ranks a rollout is never interrupted (see _iteration)
                        start_state = self._rank_state()
                    self._iteration(it, end_it, guard)
                    self._agree_on_interrupt(guard)
                    guard.raise_if_pending()
                self.alg.finish_critic_fit()  # the networks learn() leaves are the last iteration's
                if self._writes_checkpoints:
                    path = os.path.join(self.log_dir or "", f"model_{self.current_learning_iteration}.pt")
                    if self.last_checkpoint != path:
                        self.save(path)
        except KeyboardInterrupt as exc:
            if not isinstance(exc, TrainingInterrupted):  # raised by other code (no handler installed): where?
                exc = TrainingInterrupted(signal.SIGINT, forced=not self._in_rollout)
            self._on_interrupt(exc, start_state if self._in_rollout else None)
        finally:
            self._in_rollout = False
            self.logger.flush()

    def _broadcast_from_rank0(self) -> None:
        """With several ranks: rank 0's networks and normaliser everywhere (the ranks were seeded differently)."""
        if self.world_size == 1:
            return
        distributed.broadcast_module(self.alg.policy)
        distributed.broadcast_module(self.alg.target_critic)
        if self.alg.obs_normalizer is not None:
            distributed.broadcast_module(self.alg.obs_normalizer)

    def _agree_on_interrupt(self, guard: InterruptGuard) -> None:
        """With several ranks, a signal held on any rank stops all of them after the same iteration."""
        if self.world_size > 1:
            signum = distributed.any_rank(guard.pending or 0, self.device)
            if signum and guard.pending is None:
                guard.pending = signum

    def _iteration(self, it: int, end_it: int, guard: InterruptGuard) -> None:
        """One iteration: rollout (interruptible), then update, logging and checkpoint (interrupts held)."""
        self.capture.begin(self)
        t0 = time.perf_counter()
        self.alg.update_learning_rate(it)
        self._apply_kappa_schedule(it)
        steps = [0]
        recording = self._horizon_recording(it)
        # With several ranks signals stay held during the rollout (ranks stop together, after an iteration).
        allowed = guard.allowed() if self.world_size == 1 else contextlib.nullcontext()
        try:
            with allowed:
                self._in_rollout = True
                self._rollout(update_normalizer=True, bookkeeping=True, steps=steps, recording=recording)
                self._in_rollout = False
            failed = None
        except FloatingPointError as err:  # the env refused a non-finite value: skip like a NaN loss
            self._in_rollout = False
            failed = err
        if distributed.any_rank(failed is not None, self.device) and failed is None:
            failed = "the rollout failed on another rank"  # every rank skips this iteration
        sync_device(self.device)
        t1 = time.perf_counter()
        if failed is None:
            stats = self.alg.update()
            self.total_samples += self.horizon * self.num_envs * self.world_size
        else:
            where = f" on rank {self.rank}" if self.world_size > 1 else ""
            print(f"[SHAC] rollout failed{where} at iteration {it + 1}, step {steps[0]} of the horizon: {failed}")
            stats = self.alg.skip_iteration()
            self.aborted_samples += steps[0] * self.num_envs  # this rank's
        sync_device(self.device)
        t2 = time.perf_counter()
        if recording is not None:
            recording.finish()
        stats["forward_time"] = t1 - t0
        stats["update_time"] = max(t2 - t1 - stats["backward_time"], 0.0)
        self.last_stats = stats

        self.current_learning_iteration = it + 1
        self.wall_time += t2 - t0
        self.logger.log(
            it,
            end_it,
            stats,
            t1 - t0,
            t2 - t1,
            self.alg,
            kappa=self.kappa,
            total_samples=self.total_samples,
            aborted_samples=self.aborted_samples,
            wall_time=self.wall_time,
        )
        self.capture.end(self, it + 1, stats, None if failed is None else str(failed))

        if self.alg.consecutive_nonfinite >= int(self.cfg.max_consecutive_nonfinite):
            where = self.last_good_checkpoint or "none saved yet in this run"
            raise RuntimeError(
                f"SHAC stopped at iteration {it}: {self.alg.consecutive_nonfinite} consecutive iterations with"
                f" a non-finite loss or gradient (updates skipped; {self.alg.nonfinite_count} in total)."
                f" Last good checkpoint: {where}"
            )
        # Periodic checkpoints only after a clean iteration, so "last good checkpoint" means what it says.
        save_due = (it + 1) % max(int(self.cfg.save_interval), 1) == 0
        if self._writes_checkpoints and save_due and self.alg.consecutive_nonfinite == 0:
            self.save(os.path.join(self.log_dir or "", f"model_{it + 1}.pt"))

    def _on_interrupt(self, intr: TrainingInterrupted, start_state: dict | None) -> None:
        self.interrupted, self.interrupt_signal = True, intr.signum
        self.alg.abort_horizon()
        if intr.forced:
            print(
                f"[SHAC] stopped by {intr} during an update: nothing saved (the iteration was not finished); last"
                f" checkpoint: {self.last_checkpoint or 'none'}",
                flush=True,
            )
            return
        if start_state is not None:  # interrupted inside a rollout: undo it
            set_rng_states(start_state["rng_state"])
            self.logger.set_episode_state(start_state["episode_stats"])
            if "env_state" in start_state:
                self.env.set_state(start_state["env_state"])
        if not self._writes_checkpoints:
            print(
                f"[SHAC] interrupted ({intr}) after iteration {self.current_learning_iteration}; no log_dir, nothing"
                " saved",
                flush=True,
            )
            return
        path = os.path.join(self.log_dir or "", f"model_{self.current_learning_iteration}_interrupted.pt")
        self.save(path)
        if self.rank == 0:
            it = self.current_learning_iteration
            print(f"[SHAC] interrupted ({intr}): saved iteration {it} to {path}", flush=True)

    def _apply_kappa_schedule(self, it: int) -> None:
        """Set iteration ``it``'s kappa in the env's solver (``cfg.kappa_schedule``; nothing without one)."""
        schedule = self.cfg.kappa_schedule
        if not schedule.enabled:
            return
        if not hasattr(self.env, "set_kappa"):
            name = type(self.env).__name__
            raise TypeError(f"agent.kappa_schedule needs an env with set_kappa(value); {name} has none")
        self.kappa = schedule.value(it)
        self.env.set_kappa(self.kappa)

    def _horizon_recording(self, it: int):
        """A recording of iteration ``it``'s horizon when ``cfg.record_interval`` says so (and there is a log_dir)."""
        interval = int(self.cfg.record_interval)
        if interval <= 0 or self.log_dir is None or it % interval != 0:
            return None
        from isaaclab_diffsim.recording import HorizonRecording

        os.makedirs(os.path.join(self.log_dir, "recordings"), exist_ok=True)
        path = os.path.join(self.log_dir, "recordings", f"horizon_{it}.usd")
        return HorizonRecording(self.env, path, self.cfg.record_envs)

    def _rollout(
        self,
        update_normalizer: bool,
        bookkeeping: bool,
        obs: torch.Tensor | None = None,
        steps: list | None = None,
        recording=None,
    ) -> None:
        """One horizon from the env's current state, graph kept (when grad is enabled); ``obs`` replaces the env's
        observation of that state (a captured horizon's). ``steps[0]`` counts the steps taken; ``recording``
        records each step."""
        self.env.detach()
        obs = (self.env.get_observations() if obs is None else obs).detach().to(self.device)
        self.alg.begin_horizon(obs, update_normalizer=update_normalizer)
        for _ in range(self.horizon):
            actions = self.alg.act(obs)
            obs, rew, terminated, truncated, extras = self.env.step(actions.to(self.env.device))
            if recording is not None:
                recording.step(actions)
            if steps is not None:
                steps[0] += 1
            obs = obs.to(self.device)
            self.alg.process_env_step(obs, rew, terminated.to(self.device), truncated.to(self.device), extras)
            if bookkeeping:
                self.logger.process_env_step(rew, terminated, truncated, extras)

    def compute_actor_loss(self) -> float:
        """The SHAC actor loss of one horizon from the env's current state, without any update.

        Runs under ``torch.no_grad`` with the current policy (stochastic, drawing from the global RNG) and
        frozen normaliser statistics; for comparing the loss on a fixed batch (restore env state and RNG).
        """
        with torch.no_grad():
            self._rollout(update_normalizer=False, bookkeeping=False)
            loss = float(self.alg.actor_loss)
        self.alg.abort_horizon()
        return loss

    def actor_gradient(self, obs: torch.Tensor | None = None) -> tuple[float, float]:
        """(actor loss, actor gradient norm before clipping, as :meth:`SHAC.update` measures it) of one horizon
        from the env's current state, without any update; normaliser frozen, the global RNG drawn from.
        ``obs`` replaces the env's observation of that state (see :meth:`_rollout`)."""
        try:
            self._rollout(update_normalizer=False, bookkeeping=False, obs=obs)
            loss = self.alg.actor_loss
            grads = torch.autograd.grad(loss, self.alg.policy.actor_parameters(), allow_unused=True)
        finally:
            self.alg.abort_horizon()
        norm = torch.nn.utils.get_total_norm([g for g in grads if g is not None])
        return float(loss.detach()), float(norm)

    # ------------------------------------------------------------------ checkpoints

    CHECKPOINT_KEYS = (
        "model_state_dict",
        "target_critic_state_dict",
        "actor_optimizer_state_dict",
        "critic_optimizer_state_dict",
        "iter",
    )
    """Keys every SHAC checkpoint has (a file without them was written by something else)."""

    def save(self, path: str, infos: dict | None = None) -> None:
        """Save models, optimisers, normaliser, counters, RNG states, the env cfg (``env_cfg``, a plain dict) and the
        env state if the env provides it.

        The file holds tensors and plain data only (``torch.load(..., weights_only=True)`` reads it, if ``infos``
        is plain data too) and is written to ``<path>.tmp`` first, then renamed, so it is never seen half written.

        With several ranks every rank must call it (collective): rank 0 writes the file, with the networks (the
        same on all ranks), its own RNG/env/episode state at the top level as in a single-process checkpoint, and
        every rank's RNG/env/episode state in ``rank_states`` (a list in rank order); the other ranks write nothing.
        """
        own = self._rank_state()
        rank_states = distributed.gather_objects_to_rank0(to_cpu(own)) if self.world_size > 1 else None
        self.last_checkpoint = path
        if self.alg.consecutive_nonfinite == 0:
            self.last_good_checkpoint = path
        if self.rank > 0:
            return
        state = self.alg.state_dict()
        state.update(
            iter=self.current_learning_iteration,
            total_samples=self.total_samples,
            aborted_samples=self.aborted_samples,
            wall_time=self.wall_time,
            kappa=self.kappa,
            cfg=self.cfg.to_dict(),
            env_cfg=env_cfg_dict(self.env),
            infos=infos,
            **own,
        )
        if rank_states is not None:
            state["rank_states"] = rank_states
        d = os.path.dirname(os.path.abspath(path))
        os.makedirs(d, exist_ok=True)
        tmp = path + ".tmp"
        torch.save(state, tmp)
        os.replace(tmp, path)

    def _rank_state(self) -> dict:
        """What differs between ranks and what a rollout changes outside the networks (undone when one is interrupted):
        RNG states, episode statistics, and the env state if the env provides it."""
        own = {"rng_state": rng_states(), "episode_stats": self.logger.episode_state()}
        if hasattr(self.env, "get_state") and hasattr(self.env, "set_state"):
            self.env.detach()
            own["env_state"] = detached(self.env.get_state())
        return own

    def load(self, path: str, load_optimizer: bool = True, restore_rng: bool = True, restore_env: bool = True) -> dict:
        """Load a checkpoint written by :meth:`save`; returns its ``infos``.

        With the defaults, the next :meth:`learn` iteration reproduces the saved run bit for bit (given the
        same cfg, env and device, and an env with ``get_state``/``set_state``).

        With several ranks every rank loads the file. If it holds ``rank_states`` for this number of ranks, each
        rank restores its own RNG, env and episode state (a distributed run resumes bit for bit); otherwise rank 0
        restores the top-level state and the other ranks keep their own (freshly seeded RNG, freshly reset envs).

        A missing, truncated, corrupt or foreign file, or one saved with other network sizes, raises
        :class:`~isaaclab_diffsim.rl.checkpoints.CheckpointError` naming the file and the previous checkpoint.
        """
        state = load_checkpoint(path, self.CHECKPOINT_KEYS, "SHAC runner", map_location=self.device)
        try:
            self.alg.load_state_dict(state, load_optimizer=load_optimizer)
        except (RuntimeError, KeyError, ValueError) as err:
            first = str(err).strip().splitlines()[0]
            raise checkpoint_error(
                path,
                f"does not fit this runner's networks (saved with another policy cfg or observation size?): {first}",
            ) from err
        if load_optimizer:
            self.current_learning_iteration = int(state["iter"])
            self.total_samples = int(state.get("total_samples", 0))
            self.aborted_samples = int(state.get("aborted_samples", 0))
            self.wall_time = float(state.get("wall_time", 0.0))
            self.kappa = state.get("kappa")
            if self.kappa is not None and hasattr(self.env, "set_kappa"):
                self.env.set_kappa(float(self.kappa))  # the next iteration sets its own from the schedule
        own = state
        ranks = state.get("rank_states")
        if self.world_size > 1:
            if ranks is not None and len(ranks) == self.world_size:
                own = ranks[self.rank]
            elif self.rank > 0:
                own = {}
                print(
                    f"[SHAC] rank {self.rank}: {path} holds no state for rank {self.rank} of {self.world_size}"
                    " (saved with another number of ranks): keeping this rank's seeded RNG and envs",
                    flush=True,
                )
        if load_optimizer and own.get("episode_stats") is not None:
            self.logger.set_episode_state(to_device(own["episode_stats"], self.device))
        if restore_rng and "rng_state" in own:
            set_rng_states(own["rng_state"])
        if restore_env and "env_state" in own and hasattr(self.env, "set_state"):
            self.env.set_state(to_device(own["env_state"], self.env.device))
        self.last_checkpoint = self.last_good_checkpoint = path
        return state.get("infos")

    def warm_start(self, path: str) -> None:
        """Start this (fresh) run's actor, critic and normaliser from checkpoint ``path`` of a task whose observation
        is the first part of this one's (:mod:`.warm_start`: extra inputs get zero weights; their normaliser entries as
        ``cfg.warm_start_obs_stats`` says). Optimisers, iteration count, RNG and env state stay this run's. Raises
        CheckpointError naming the file if it does not fit."""
        state = load_checkpoint(path, self.CHECKPOINT_KEYS, "SHAC runner", map_location=self.device)
        own = self.alg.state_dict()
        try:
            source_obs = source_observations(state, own, self.num_obs)
            widened = widened_state(state, own, source_obs, self.num_obs)
        except ValueError as err:
            raise checkpoint_error(path, str(err)) from err
        norm = widened.get("obs_normalizer_state_dict")
        first_obs = self.cfg.warm_start_obs_stats == "first_obs" and norm is not None and source_obs < self.num_obs
        if first_obs:
            obs = self.env.get_observations().detach().to(self.device)
            widened["obs_normalizer_state_dict"] = first_observation_stats(norm, obs, source_obs)
        self.alg.load_state_dict(widened, load_optimizer=False)
        print(f"[SHAC] warm start from {path}: {source_obs} of {self.num_obs} observations, the rest at zero weight")
        if first_obs:
            print("[SHAC] warm start: the normaliser's entries for the rest start at their first observation's moments")

    # ------------------------------------------------------------------ inference, export

    def get_inference_policy(self, device: str | torch.device | None = None) -> ShacInferencePolicy:
        """Deterministic policy on raw observations (normaliser, mean action, tanh if configured)."""
        self.alg.eval_mode()
        pol = self.alg.get_inference_policy(device)
        self.alg.train_mode()
        return pol

    def export(self, out_dir: str, onnx_filename: str = "policy.onnx", jit_filename: str = "policy.pt") -> dict:
        """Export the deterministic policy (normaliser folded in) to ONNX and TorchScript (see
        :func:`~isaaclab_diffsim.rl.shac.export.export_policy`). Returns ``{"onnx": path, "jit": path}``."""
        return export_policy(self.get_inference_policy("cpu"), out_dir, onnx_filename, jit_filename)

    def close(self) -> None:
        self.alg.close()
        self.logger.close()
