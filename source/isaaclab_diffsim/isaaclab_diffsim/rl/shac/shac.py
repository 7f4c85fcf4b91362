"""SHAC, short-horizon actor-critic (Xu et al., ICLR 2022): losses and updates (the networks are in :mod:`.modules`).

The split follows rsl_rl's PPO: the runner steps the environment and calls :meth:`SHAC.act` and
:meth:`SHAC.process_env_step` for every step of a horizon, then :meth:`SHAC.update` once. Unlike PPO the
actor loss is built *during* the rollout: rewards and the terminal critic values are differentiable
functions of the actions through the simulator, so the graph of the whole horizon is kept and
``update`` backpropagates the horizon's return into the policy.

Actor loss of one horizon of h steps over N envs (gamma^k restarts at every done)::

    L = -1/(h N) * sum_envs sum_segments [ sum_k gamma^k r_k + gamma^(k_end+1) V'(s_end) ]

where a segment ends at a done or at the horizon's end; V' is the target critic, taken as 0 after a
failure (terminated), V'(terminal_obs) after a time-out (truncated) and V'(s_h) at the horizon's end.
The critic is fit to TD(lambda) targets computed from the detached observations, rewards, dones and
those target values (SHAC's ``compute_target_values``), with a soft-updated target critic.

With ``concurrent_critic_fit`` the fit runs in a worker (:class:`~.critic_fit.CriticFitWorker`) during the actor
step, and with ``critic_fit_overlaps_rollout`` the fit of horizon k runs on beside horizon k+1's rollout. That
rollout cannot evaluate V' until the fit is in (the soft update follows it), so it keeps the inputs of V' and the
loss terms that do not depend on it, and :meth:`SHAC._finish_horizon` adds the segments once the fit has been
applied: the same operations on the same numbers, so the update is bitwise the sequential one.
"""

from __future__ import annotations

import math
import time

import torch

from .. import distributed
from .critic_fit import CriticFitWorker
from .likelihood_ratio import likelihood_ratio_loss
from .modules import RunningObsNormalizer, ShacInferencePolicy, build_mlp
from .resolve import resolve_class
from .shac_cfg import ShacActorCriticCfg, ShacAlgorithmCfg


def _is_finite(x: torch.Tensor) -> bool:
    return bool(torch.isfinite(x).all())


def _loss_or_nan(loss: torch.Tensor, finite: bool) -> torch.Tensor:
    """The detached loss as a 1-element tensor, NaN when it is not finite (what the ranks average to agree)."""
    return loss.detach().reshape(1) if finite else torch.full((1,), float("nan"), device=loss.device)


def clip_env_rows(grad: torch.Tensor, ratio: float) -> torch.Tensor:
    """``grad`` (envs x actions) with each row whose norm is above ``ratio`` times the median row norm scaled down to
    that norm; the other rows are unchanged (multiplied by exactly 1)."""
    norms = grad.norm(dim=1)
    limit = ratio * norms.median()
    scale = (limit / norms.clamp_min(torch.finfo(grad.dtype).tiny)).clamp(max=1.0)
    return grad * scale[:, None]


def sync_device(device: torch.device) -> None:
    """Wait for queued CUDA work (Warp runs on torch's stream), so that host timers measure it; no-op on CPU."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)


class SHAC:
    """Short-horizon actor-critic: actor loss through the differentiable rollout, TD(lambda) critic.

    Args:
        num_obs: Observation size.
        num_actions: Action size.
        num_envs: Number of parallel environments N.
        horizon: Steps per horizon h.
        cfg: Algorithm configuration.
        policy_cfg: Actor-critic configuration.
        max_iterations: Length of the linear learning-rate decay.
        device: Device of the networks and buffers.
    """

    def __init__(
        self,
        num_obs: int,
        num_actions: int,
        num_envs: int,
        horizon: int,
        cfg: ShacAlgorithmCfg,
        policy_cfg: ShacActorCriticCfg,
        max_iterations: int,
        device: str | torch.device = "cpu",
    ):
        self.cfg = cfg
        self.device = torch.device(device)
        self.num_obs, self.num_actions, self.num_envs, self.horizon = num_obs, num_actions, num_envs, int(horizon)
        self.max_iterations = int(max_iterations)
        self.gamma, self.lam = float(cfg.gamma), float(cfg.lam)

        policy_class = resolve_class(policy_cfg.class_name)
        self.policy = policy_class(num_obs, num_actions, policy_cfg).to(self.device)
        self.target_critic = build_mlp(
            num_obs, list(policy_cfg.critic_hidden_dims), 1, policy_cfg.activation, policy_cfg.layer_norm
        ).to(self.device)
        self.target_critic.load_state_dict(self.policy.critic.state_dict())
        self.target_critic.requires_grad_(False)
        self.obs_normalizer = (
            RunningObsNormalizer(num_obs, clip=policy_cfg.obs_norm_clip).to(self.device)
            if policy_cfg.obs_normalization
            else None
        )

        betas = tuple(float(b) for b in cfg.betas)
        # foreach: one multi-tensor op per Adam stage instead of a Python loop over the parameters (torch picks it
        # only on CUDA by default); bitwise the same update, and the critic fit's thread holds the GIL less
        self.actor_optimizer = torch.optim.Adam(
            self.policy.actor_parameters(), lr=cfg.actor_learning_rate, betas=betas, foreach=True
        )
        self.critic_optimizer = torch.optim.Adam(
            self.policy.critic.parameters(), lr=cfg.critic_learning_rate, betas=betas, foreach=True
        )
        self.actor_lr, self.critic_lr = float(cfg.actor_learning_rate), float(cfg.critic_learning_rate)

        # Robustness counters (saved in checkpoints).
        self.nonfinite_count = 0
        self.consecutive_nonfinite = 0
        self.exploding_count = 0

        # Critic data of one horizon (detached).
        h, n = self.horizon, num_envs
        self.obs_buf = torch.zeros(h, n, num_obs, device=self.device)
        self.rew_buf = torch.zeros(h, n, device=self.device)
        self.done_buf = torch.zeros(h, n, device=self.device)
        self.next_value_buf = torch.zeros(h, n, device=self.device)
        self.lr_coef = float(cfg.likelihood_ratio_coef)
        if self.lr_coef > 0 and not callable(getattr(self.policy, "sample", None)):
            raise ValueError(
                f"algorithm.likelihood_ratio_coef={self.lr_coef}: the policy class {policy_cfg.class_name} has no"
                " sample(obs) -> (action, noise) method"
            )
        self.noise_buf = torch.zeros(h, n, num_actions, device=self.device) if self.lr_coef > 0 else None
        self._step = 0
        self._actor_loss_sum: torch.Tensor | None = None
        self._norm_pending: list[torch.Tensor] = []
        self._update_norm = False
        self._warned_terminal_obs = False
        self.critic_fit = CriticFitWorker(self)
        """Where the critic fits run (the caller, a worker thread or process) and the fit left running beside the
        rollout (``critic_fit_overlaps_rollout``)."""
        self._fit_report: dict[str, float] | None = None
        """The statistics of the last applied critic fit, until an update reports them."""
        self._deferred: list | None = None
        """Per step of a horizon rolled out during a critic fit: V's inputs and the loss terms that wait for V'."""
        self._deferred_grad = True

    # ------------------------------------------------------------------ modes, schedule

    def train_mode(self) -> None:
        self.policy.train()

    def eval_mode(self) -> None:
        self.policy.eval()

    def update_learning_rate(self, iteration: int) -> None:
        """Set the learning rates for ``iteration`` (linear decay to ``min_learning_rate`` over max_iterations)."""
        a0, c0, lo = self.cfg.actor_learning_rate, self.cfg.critic_learning_rate, self.cfg.min_learning_rate
        if self.cfg.schedule == "linear":
            frac = min(max(iteration / max(self.max_iterations, 1), 0.0), 1.0)
            self.actor_lr = a0 + (lo - a0) * frac
            self.critic_lr = c0 + (lo - c0) * frac
        elif self.cfg.schedule == "constant":
            self.actor_lr, self.critic_lr = a0, c0
        else:
            raise ValueError(f"Unknown learning-rate schedule {self.cfg.schedule!r}")
        for g in self.actor_optimizer.param_groups:
            g["lr"] = self.actor_lr
        # the critic optimiser's rate is set when a fit starts: the previous fit may still be running in a thread

    # ------------------------------------------------------------------ rollout

    def normalize(self, obs: torch.Tensor) -> torch.Tensor:
        """Normalise with the statistics frozen at the start of the horizon."""
        if self.obs_normalizer is None:
            return obs
        return self.obs_normalizer.normalize(obs, self._norm_stats)

    def begin_horizon(self, obs: torch.Tensor, update_normalizer: bool = True) -> None:
        """Start a horizon from (detached) ``obs``: freeze normaliser stats, reset the loss accumulators.

        With ``update_normalizer`` the horizon's observations are kept and merged into the normaliser's statistics
        by :meth:`update` only if the iteration is not skipped (a skipped or aborted horizon leaves no trace)."""
        self._update_norm = update_normalizer and self.obs_normalizer is not None
        self._norm_stats = self.obs_normalizer.snapshot() if self.obs_normalizer is not None else None
        self._norm_pending = [obs.detach().clone()] if self._update_norm else []
        self._step = 0
        self._actor_loss_sum = torch.zeros((), device=self.device)
        self._rew_acc = torch.zeros(self.num_envs, device=self.device)
        self._gamma_acc = torch.ones(self.num_envs, device=self.device)
        # while a critic fit runs the target critic is not final: its values wait for the horizon's end
        self._deferred = [] if self.critic_fit.pending else None
        self._deferred_grad = torch.is_grad_enabled()

    def act(self, obs: torch.Tensor, deterministic: bool = False) -> torch.Tensor:
        """Actions for the current step from raw ``obs`` (graph kept; reparameterised sample unless deterministic)."""
        obs_n = self.normalize(obs.to(self.device))
        with torch.no_grad():
            self.obs_buf[self._step] = obs_n
        if self.noise_buf is not None and not deterministic:
            actions, noise = self.policy.sample(obs_n)
            self.noise_buf[self._step] = noise.detach()
        else:
            actions = self.policy.act(obs_n, deterministic)
        ratio = self.cfg.env_action_grad_clip
        if ratio is not None and actions.requires_grad:
            actions.register_hook(lambda g: clip_env_rows(g, float(ratio)))
        return actions

    def process_env_step(
        self,
        obs: torch.Tensor,
        rewards: torch.Tensor,
        terminated: torch.Tensor,
        truncated: torch.Tensor,
        extras: dict,
    ) -> None:
        """Add one step to the actor loss (graph kept) and store the detached critic data."""
        i, last = self._step, self._step == self.horizon - 1
        terminated, truncated = terminated.bool(), truncated.bool()
        done = terminated | truncated
        if self._update_norm:
            self._norm_pending.append(obs.detach().to(self.device).clone())
        value_inputs = self._value_inputs(self.normalize(obs.to(self.device)), terminated, truncated, extras)
        next_v = self._next_values(*value_inputs) if self._deferred is None else None

        rewards = rewards.to(self.device).reshape(self.num_envs)
        terms = (self._rew_acc + self._gamma_acc * rewards, self._gamma_acc, done, last)
        if next_v is None:
            self._deferred.append((value_inputs, terms))
        else:
            self._add_segments(i, terms, next_v)
        self._rew_acc = torch.where(done, torch.zeros_like(terms[0]), terms[0])
        self._gamma_acc = torch.where(done, torch.ones_like(self._gamma_acc), self._gamma_acc * self.gamma)

        with torch.no_grad():
            self.rew_buf[i] = rewards
            self.done_buf[i] = 1.0 if last else done.float()
        self._step += 1

    def _add_segments(self, i: int, terms: tuple, next_v: torch.Tensor) -> None:
        """Add step ``i``'s ended segments to the actor loss: ``terms`` are (discounted reward sum, gamma^k, done,
        last step) and ``next_v`` the target values of the next states."""
        rew_acc, gamma_acc, done, last = terms
        seg = -(rew_acc + self.gamma * gamma_acc * next_v)
        if last:
            self._actor_loss_sum = self._actor_loss_sum + seg.sum()
        else:
            self._actor_loss_sum = self._actor_loss_sum + torch.where(done, seg, torch.zeros_like(seg)).sum()
        with torch.no_grad():
            self.next_value_buf[i] = next_v

    def _value_inputs(
        self, obs_n: torch.Tensor, terminated: torch.Tensor, truncated: torch.Tensor, extras: dict | None
    ) -> tuple:
        """What :meth:`_next_values` evaluates: (normalised next observations, failures, indices of the time-outs or
        None, their normalised terminal observations or None)."""
        time_out = truncated & ~terminated
        if not bool(time_out.any()):
            return obs_n, terminated, None, None
        term_obs = extras.get("terminal_obs") if extras is not None else None
        idx = time_out.nonzero(as_tuple=False).squeeze(-1)
        if term_obs is None:
            if not self._warned_terminal_obs:
                print("[SHAC] warning: env gives no extras['terminal_obs']; time-outs are not bootstrapped.")
                self._warned_terminal_obs = True
            return obs_n, terminated, idx, None
        return obs_n, terminated, idx, self.normalize(term_obs.to(self.device)[idx])

    def _next_values(
        self, obs_n: torch.Tensor, terminated: torch.Tensor, idx: torch.Tensor | None, term_n: torch.Tensor | None
    ) -> torch.Tensor:
        """Target-critic value of the next state: 0 after a failure, V'(terminal_obs) after a time-out (0 when the
        env gives no terminal observation)."""
        next_v = self.target_critic(obs_n).squeeze(-1)
        if not self.cfg.value_gradient:
            next_v = next_v.detach()
        next_v = torch.where(terminated, torch.zeros_like(next_v), next_v)
        if idx is None:
            return next_v
        if term_n is None:
            return next_v.index_put((idx,), torch.zeros(idx.numel(), device=next_v.device))
        v_to = self.target_critic(term_n).squeeze(-1)
        if not self.cfg.value_gradient:
            v_to = v_to.detach()
        return next_v.index_put((idx,), v_to)

    def _finish_horizon(self) -> None:
        """For a horizon rolled out during a critic fit: wait for the fit, apply it, then add the segments that
        waited for the target critic's values, step by step as :meth:`process_env_step` would have."""
        if self._deferred is None:
            return
        self.finish_critic_fit()
        deferred, self._deferred = self._deferred, None
        with torch.set_grad_enabled(self._deferred_grad):
            for i, (value_inputs, terms) in enumerate(deferred):
                self._add_segments(i, terms, self._next_values(*value_inputs))

    def abort_horizon(self) -> None:
        """Drop the current horizon (its graph and partial data, pending normaliser data) without updating."""
        self._step = 0
        self._actor_loss_sum = None
        self._norm_pending = []
        self._deferred = None

    def skip_iteration(self) -> dict[str, float]:
        """Count an iteration whose rollout failed (e.g. the env raised on a non-finite state) as non-finite."""
        self.abort_horizon()
        self.nonfinite_count += 1
        self.consecutive_nonfinite += 1
        nan = float("nan")
        return {
            "actor_loss": nan,
            "grad_norm": nan,
            "actor_skipped": 1.0,
            "critic_loss": nan,
            "critic_skipped": 1.0,
            "mean_step_reward": nan,
            "target_value_mean": nan,
            "nonfinite": 1.0,
            "nonfinite_count": float(self.nonfinite_count),
            "mean_std": float(self.policy.std.detach().mean()),
            "exploding_skipped": 0.0,
            "exploding_count": float(self.exploding_count),
            "backward_time": 0.0,
        }

    @property
    def actor_loss(self) -> torch.Tensor:
        """The horizon's actor loss so far, normalised by h * N."""
        self._finish_horizon()
        return self._actor_loss_sum / (self.horizon * self.num_envs)

    # ------------------------------------------------------------------ update

    @torch.no_grad()
    def compute_target_values(self) -> torch.Tensor:
        """TD(lambda) targets, truncated at dones and the horizon's end (bootstrapped with the stored values)."""
        targets = torch.zeros_like(self.rew_buf)
        g_next = torch.zeros(self.num_envs, device=self.device)
        for i in reversed(range(self.horizon)):
            d = self.done_buf[i]
            # G_i = r_i + gamma * [ next_value_i                                 if done_i
            #                       (1 - lam) * next_value_i + lam * G_{i+1}     otherwise ]
            cont = (1.0 - self.lam) * self.next_value_buf[i] + self.lam * g_next
            g = self.rew_buf[i] + self.gamma * torch.where(d > 0, self.next_value_buf[i], cont)
            targets[i] = g
            g_next = g
        return targets

    def update(self) -> dict[str, float]:
        """Actor step on the horizon's loss, critic fit, target-critic soft update.

        A non-finite actor loss or gradient skips the actor step; non-finite critic data, loss or gradient
        skip the critic step(s). Either marks the iteration as non-finite (``nonfinite_count``,
        ``consecutive_nonfinite``). The horizon's observations enter the normaliser unless the actor step is
        skipped as non-finite or the critic data is not finite. An actor gradient norm above ``max_actor_grad_norm``
        also skips the actor step, counted apart (``exploding_count``). Returns scalar statistics; ``backward_time``
        is the seconds of the actor loss's backward (through the physics).

        With ``critic_fit_overlaps_rollout`` the critic fit is left running for the next rollout (applied by the next
        update, :meth:`finish_critic_fit` or a checkpoint), and ``critic_loss`` and ``critic_skipped`` are the
        previous fit's (``critic_loss`` None when no fit was reported since).
        """
        if self._step != self.horizon:
            raise RuntimeError(f"update() after {self._step} of {self.horizon} steps")
        self._finish_horizon()
        self.finish_critic_fit()
        obs, tgt, stats = self._critic_data()
        critic_fit = self._start_critic_fit(obs, tgt) if obs is not None else None
        stats.update(self._actor_step())
        if critic_fit is not None and self._overlaps_rollout():
            self.critic_fit.leave_running(critic_fit)
        elif critic_fit is not None:
            self._apply_fit(critic_fit)
        report, self._fit_report = self._fit_report, None
        stats["critic_loss"] = report["critic_loss"] if report is not None else None
        stats["critic_skipped"] = float(obs is None or (report is not None and bool(report["critic_skipped"])))
        if obs is None:
            stats["critic_loss"] = float("nan")

        nonfinite = bool(stats["actor_skipped"]) or bool(stats["critic_skipped"])
        stats["nonfinite"] = float(nonfinite)
        if nonfinite:
            self.nonfinite_count += 1
            self.consecutive_nonfinite += 1
        else:
            self.consecutive_nonfinite = 0
        if not stats["actor_skipped"] and obs is not None:
            self._merge_pending_observations()
        self._norm_pending = []
        stats["nonfinite_count"] = float(self.nonfinite_count)
        stats["mean_std"] = float(self.policy.std.detach().mean())
        self._step = 0
        return stats

    def _actor_step(self) -> dict[str, float]:
        """Backpropagate the horizon's actor loss and step the actor, unless the loss or the gradient is bad."""
        loss = self.actor_loss
        self._actor_loss_sum = None
        lr_loss = self.likelihood_ratio_term() if self.noise_buf is not None else None
        if lr_loss is not None:
            loss = loss + self.lr_coef * lr_loss
        params = self.policy.actor_parameters()
        self.actor_optimizer.zero_grad(set_to_none=True)
        local_ok = _is_finite(loss.detach())
        backward_time = self._timed_backward(loss) if local_ok else 0.0
        # With several ranks: gradients and loss averaged (a non-finite loss on any rank makes the average non-finite,
        # so all ranks skip together), and every decision below is taken on the same numbers on every rank.
        loss_value = distributed.average_gradients(params, _loss_or_nan(loss, local_ok))
        actor_loss = float(loss_value)
        grad_norm, actor_skipped, exploding = self._clip_and_step_actor(params, loss_value)
        extra = {"likelihood_ratio_loss": float(lr_loss.detach())} if lr_loss is not None else {}
        return {
            **extra,
            "actor_loss": actor_loss,
            "grad_norm": grad_norm,
            "backward_time": backward_time,
            "actor_skipped": float(actor_skipped),
            "exploding_skipped": float(exploding),
            "exploding_count": float(self.exploding_count),
        }

    def likelihood_ratio_term(self) -> torch.Tensor:
        """The rolled-out horizon's likelihood-ratio term (:mod:`.likelihood_ratio`, unweighted) on the stored
        normalised observations and noise (kept when ``likelihood_ratio_coef`` > 0), with the TD(lambda) advantages
        against the target critic; its graph reaches only the actor mean."""
        obs = self.obs_buf.reshape(-1, self.num_obs)
        with torch.no_grad():
            values = self.target_critic(obs).squeeze(-1).reshape(self.horizon, self.num_envs)
            adv = (self.compute_target_values() - values).reshape(-1)  # TD(lambda) advantages
        mean = self.policy.actor(obs)
        return likelihood_ratio_loss(mean, self.noise_buf.reshape(mean.shape), self.policy.std, adv)

    def _timed_backward(self, loss: torch.Tensor) -> float:
        """``loss.backward()`` (through the physics); returns its seconds."""
        if not loss.requires_grad:
            raise RuntimeError(
                "SHAC actor loss has no gradient: the horizon was collected with grad disabled, or env.step's"
                " rewards/observations are not differentiable functions of the actions."
            )
        sync_device(self.device)
        t0 = time.perf_counter()
        loss.backward()
        sync_device(self.device)
        return time.perf_counter() - t0

    def _clip_and_step_actor(self, params: list, loss_value: torch.Tensor) -> tuple[float, bool, bool]:
        """Clip the actor gradient and step, unless the averaged loss or the norm is not finite or the norm is
        above ``max_actor_grad_norm``; returns (norm before clipping, skipped as non-finite, skipped as exploding)."""
        if not _is_finite(loss_value):
            self.actor_optimizer.zero_grad(set_to_none=True)
            return float("nan"), True, False
        grad_norm = float(torch.nn.utils.clip_grad_norm_(params, float(self.cfg.max_grad_norm), foreach=True))
        limit = self.cfg.max_actor_grad_norm
        if not math.isfinite(grad_norm):
            self.actor_optimizer.zero_grad(set_to_none=True)
            return grad_norm, True, False
        if limit is not None and grad_norm > limit:
            self.exploding_count += 1
            self.actor_optimizer.zero_grad(set_to_none=True)
            return grad_norm, False, True
        self.actor_optimizer.step()
        return grad_norm, False, False

    def _concurrent_fit(self) -> bool:
        return bool(self.cfg.concurrent_critic_fit) and not distributed.is_multi_process()

    def _overlaps_rollout(self) -> bool:
        return self._concurrent_fit() and bool(self.cfg.critic_fit_overlaps_rollout)

    @property
    def critic_fit_pending(self) -> bool:
        """Whether a critic fit is running beside the rollout (the target critic is not yet the next horizon's)."""
        return self.critic_fit.pending

    @property
    def critic_fit_seconds(self) -> float:
        """Seconds spent fitting the critic so far (in whichever thread or process fits it)."""
        return self.critic_fit.seconds

    def finish_critic_fit(self) -> None:
        """Wait for a critic fit left running beside the rollout and apply it (target-critic soft update); its
        statistics go to the next update's. No-op without one."""
        wait = self.critic_fit.take_pending()
        if wait is not None:
            self._apply_fit(wait)

    def _apply_fit(self, wait) -> None:
        fit_stats, steps = wait()
        if steps:
            self._update_target()
        self._fit_report = fit_stats

    def _start_critic_fit(self, obs: torch.Tensor, tgt: torch.Tensor):
        """Begin :meth:`_fit_critic` and return the callable that waits for ``(statistics, optimiser steps)``: with
        ``concurrent_critic_fit`` and one process, in the worker that ``critic_fit_worker`` names (the caller's actor
        step, and with ``critic_fit_overlaps_rollout`` the next rollout, run meanwhile), else at once. The shuffles
        are drawn here, in the caller's thread, so the global RNG sees the same draws in the same order either way."""
        perms = [torch.randperm(obs.shape[0], device=self.device) for _ in range(int(self.cfg.critic_iterations))]
        for g in self.critic_optimizer.param_groups:  # a worker process sets its own copy's
            g["lr"] = self.critic_lr
        where = None
        if self._concurrent_fit():
            where = "process" if self.cfg.critic_fit_worker == "process" and self.device.type == "cpu" else "thread"
        return self.critic_fit.start(obs, tgt, perms, self.critic_lr, where)

    def close_critic_worker(self, keep_state: bool = True) -> None:
        """Stop the critic fit's worker process or thread, if any (the next concurrent fit starts a new one).
        ``keep_state``: first apply a fit still running and copy a worker process's critic optimiser state here (the
        next worker forks from it); else a running fit is dropped."""
        if keep_state:
            self.finish_critic_fit()
        self.critic_fit.close(keep_state)

    def _fit_critic(self, obs, tgt, perms) -> tuple[dict[str, float], int]:
        """Fit the critic to the horizon's TD(lambda) targets: one epoch of shuffled minibatches per permutation in
        ``perms`` (``critic_iterations`` of them).

        Returns the statistics and the number of optimiser steps taken; the reported loss is the mean over the last
        epoch's minibatches."""
        skipped, loss_sum, n_batches, n_steps = False, 0.0, 0, 0
        n = obs.shape[0]
        nmb = max(1, min(int(self.cfg.num_critic_minibatches), n))
        epochs = len(perms)
        for epoch, perm in enumerate(perms):
            for idx in perm.chunk(nmb):
                loss = self._critic_step(obs[idx], tgt[idx])
                if loss is None:
                    skipped = True
                    continue
                n_steps += 1
                if epoch == epochs - 1:
                    loss_sum += loss
                    n_batches += 1
        critic_loss = loss_sum / n_batches if n_batches else float("nan")
        return {"critic_loss": critic_loss, "critic_skipped": float(skipped)}, n_steps

    def _critic_data(self) -> tuple[torch.Tensor | None, torch.Tensor | None, dict[str, float]]:
        """(observations, targets) flattened over the horizon, or (None, None) when either is not finite (on any
        rank), and the mean step reward and mean target (averaged over the ranks)."""
        targets = self.compute_target_values()
        obs = self.obs_buf.reshape(-1, self.num_obs)
        tgt = targets.reshape(-1)
        data_bad = float(not (_is_finite(obs) and _is_finite(tgt)))
        if distributed.is_multi_process():
            means = torch.stack([self.rew_buf.mean(), tgt.mean(), torch.tensor(data_bad, device=self.device)])
            mean_rew, mean_tgt, data_bad = distributed.mean_over_ranks(means).tolist()
        else:
            mean_rew, mean_tgt = float(self.rew_buf.mean()), float(tgt.mean())
        stats = {"mean_step_reward": mean_rew, "target_value_mean": mean_tgt}
        return (None, None, stats) if data_bad > 0 else (obs, tgt, stats)

    def _critic_step(self, obs: torch.Tensor, tgt: torch.Tensor) -> float | None:
        """One clipped optimiser step on a minibatch's squared error; returns its loss (averaged over the ranks), or
        None when the loss or the gradient is not finite (step skipped)."""
        pred = self.policy.critic(obs).squeeze(-1)
        loss = (pred - tgt).square().mean()
        self.critic_optimizer.zero_grad(set_to_none=True)
        local_ok = _is_finite(loss.detach())
        if local_ok:
            loss.backward()
        value = distributed.average_gradients(list(self.policy.critic.parameters()), _loss_or_nan(loss, local_ok))
        if not _is_finite(value):
            self.critic_optimizer.zero_grad(set_to_none=True)
            return None
        grad_norm = torch.nn.utils.clip_grad_norm_(
            self.policy.critic.parameters(), float(self.cfg.max_grad_norm), foreach=True
        )
        if not _is_finite(grad_norm):
            self.critic_optimizer.zero_grad(set_to_none=True)
            return None
        self.critic_optimizer.step()
        return float(value)

    @torch.no_grad()
    def _update_target(self) -> None:
        """Soft update: ``target = alpha * target + (1 - alpha) * critic``."""
        a = float(self.cfg.target_critic_alpha)
        for p, pt in zip(self.policy.critic.parameters(), self.target_critic.parameters()):
            pt.mul_(a).add_(p, alpha=1.0 - a)

    def _merge_pending_observations(self) -> None:
        """Merge the horizon's observations into the normaliser, step by step as if merged during the rollout.

        With several ranks each step's batch is the union of all ranks' envs: the per-rank moments (count, mean,
        variance) are gathered and combined in rank order, so every rank ends with the same statistics."""
        if not self._norm_pending:
            return
        norm = self.obs_normalizer
        if not distributed.is_multi_process():
            for x in self._norm_pending:
                norm.update(x)
            return
        local = torch.stack([norm.batch_moments(x) for x in self._norm_pending])  # (steps, 1 + 2 d)
        per_rank = distributed.gather_rank_rows(local)  # (ranks, steps, 1 + 2 d)
        for step in range(per_rank.shape[1]):
            norm.update_from_moments(per_rank[:, step])

    def close(self) -> None:
        """Release the critic fit's worker, its optimiser state kept here (training may go on after it)."""
        self.close_critic_worker()

    # ------------------------------------------------------------------ inference, state

    def get_inference_policy(self, device: str | torch.device | None = None) -> ShacInferencePolicy:
        """A deterministic copy of the policy on raw observations (normaliser and tanh folded in)."""
        pol = ShacInferencePolicy(self.policy, self.obs_normalizer).eval()
        return pol.to(device if device is not None else self.device)

    def state_dict(self) -> dict:
        self.finish_critic_fit()
        worker_state = self.critic_fit.optimizer_state()  # a worker process owns the live critic optimiser
        if worker_state is not None:
            self.critic_optimizer.load_state_dict(worker_state)
        return {
            "model_state_dict": self.policy.state_dict(),
            "target_critic_state_dict": self.target_critic.state_dict(),
            "obs_normalizer_state_dict": self.obs_normalizer.state_dict() if self.obs_normalizer is not None else None,
            "actor_optimizer_state_dict": self.actor_optimizer.state_dict(),
            "critic_optimizer_state_dict": self.critic_optimizer.state_dict(),
            "nonfinite_count": self.nonfinite_count,
            "consecutive_nonfinite": self.consecutive_nonfinite,
            "exploding_count": self.exploding_count,
            "critic_fit_report": dict(self._fit_report) if self._fit_report is not None else None,
        }

    def load_state_dict(self, state: dict, load_optimizer: bool = True) -> None:
        self.finish_critic_fit()  # a running fit would write the critic after it is loaded
        self.policy.load_state_dict(state["model_state_dict"])
        self.target_critic.load_state_dict(state["target_critic_state_dict"])
        if self.obs_normalizer is not None and state.get("obs_normalizer_state_dict") is not None:
            self.obs_normalizer.load_state_dict(state["obs_normalizer_state_dict"])
        if load_optimizer:
            self.close_critic_worker(keep_state=False)  # the next fit's worker forks from the loaded optimiser
            self.actor_optimizer.load_state_dict(state["actor_optimizer_state_dict"])
            self.critic_optimizer.load_state_dict(state["critic_optimizer_state_dict"])
            self.nonfinite_count = int(state.get("nonfinite_count", 0))
            self.consecutive_nonfinite = int(state.get("consecutive_nonfinite", 0))
            self.exploding_count = int(state.get("exploding_count", 0))
            report = state.get("critic_fit_report")
            self._fit_report = dict(report) if report is not None else None
