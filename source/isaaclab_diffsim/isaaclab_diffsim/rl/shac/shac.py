"""SHAC, short-horizon actor-critic (Xu et al., ICLR 2022): networks, losses and updates.

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
"""

from __future__ import annotations

import copy
import math
import time
from typing import TYPE_CHECKING

import torch
import torch.nn as nn

from .. import distributed

if TYPE_CHECKING:
    from .shac_cfg import ShacActorCriticCfg, ShacAlgorithmCfg

ACTIVATIONS = {
    "elu": nn.ELU,
    "relu": nn.ReLU,
    "selu": nn.SELU,
    "tanh": nn.Tanh,
    "sigmoid": nn.Sigmoid,
    "leaky_relu": nn.LeakyReLU,
    "gelu": nn.GELU,
    "silu": nn.SiLU,
    "mish": nn.Mish,
    "identity": nn.Identity,
}


def build_mlp(in_dim: int, hidden_dims: list[int], out_dim: int, activation: str, layer_norm: bool) -> nn.Sequential:
    """A flat ``nn.Sequential``: Linear, activation[, LayerNorm] per hidden layer, then a Linear output.

    Flat so that ``mlp[0].in_features`` is the input size (isaaclab_rl's ONNX exporter relies on it).
    """
    try:
        act = ACTIVATIONS[activation.lower()]
    except KeyError:
        raise ValueError(f"Unknown activation {activation!r}; choose one of {sorted(ACTIVATIONS)}") from None
    layers: list[nn.Module] = []
    dims = [in_dim, *hidden_dims]
    for a, b in zip(dims[:-1], dims[1:]):
        layers += [nn.Linear(a, b), act()]
        if layer_norm:
            layers.append(nn.LayerNorm(b))
    layers.append(nn.Linear(dims[-1], out_dim))
    return nn.Sequential(*layers)


class RunningObsNormalizer(nn.Module):
    """Running mean and variance of observations (parallel Welford merge, float64 statistics).

    ``update`` takes detached data (rows with non-finite entries are ignored). Normalisation is
    ``(x - mean) / sqrt(var + eps)``, computed in float32 from a snapshot (:meth:`snapshot`) so that the
    statistics can change while a graph that used the old ones is still alive.
    """

    def __init__(self, num_obs: int, eps: float = 1e-5, clip: float | None = None, init_count: float = 1e-4):
        super().__init__()
        self.eps = float(eps)
        self.clip = None if clip is None else float(clip)
        self.register_buffer("mean", torch.zeros(num_obs, dtype=torch.float64))
        self.register_buffer("var", torch.ones(num_obs, dtype=torch.float64))
        self.register_buffer("count", torch.tensor(float(init_count), dtype=torch.float64))

    @torch.no_grad()
    def batch_moments(self, x: torch.Tensor) -> torch.Tensor:
        """``[n, mean..., var...]`` (float64, population variance) of the finite rows of ``x``; zeros if none."""
        x = x.detach().reshape(-1, self.mean.shape[0])
        x = x[torch.isfinite(x).all(dim=1)].to(torch.float64)
        n = x.shape[0]
        if n == 0:
            return torch.zeros(1 + 2 * self.mean.shape[0], dtype=torch.float64, device=self.mean.device)
        n_t = torch.full((1,), float(n), dtype=torch.float64, device=x.device)
        return torch.cat([n_t, x.mean(dim=0), x.var(dim=0, unbiased=False)])

    @torch.no_grad()
    def update(self, x: torch.Tensor) -> None:
        self.update_from_moments(self.batch_moments(x))

    @torch.no_grad()
    def update_from_moments(self, moments: torch.Tensor) -> None:
        """Merge a batch given by :meth:`batch_moments`; a (W, ...) stack (one row per rank) is first combined in
        row order into the moments of the union of the batches."""
        d = self.mean.shape[0]
        if moments.dim() == 2:
            counts, means, variances = moments[:, 0], moments[:, 1 : 1 + d], moments[:, 1 + d :]
            n = float(counts.sum())
            if n == 0:
                return
            w = (counts / n).unsqueeze(-1)
            mean = (w * means).sum(dim=0)
            var = (w * (variances + (means - mean).square())).sum(dim=0)
            moments = torch.cat([counts.sum().reshape(1), mean, var])
        n = float(moments[0])
        if n == 0:
            return
        batch_mean, batch_var = moments[1 : 1 + d], moments[1 + d :]
        delta = batch_mean - self.mean
        total = self.count + n
        m2 = self.var * self.count + batch_var * n + delta.square() * self.count * n / total
        self.mean.add_(delta * n / total)
        self.var.copy_(m2 / total)
        self.count.copy_(total)

    def snapshot(self) -> tuple[torch.Tensor, torch.Tensor]:
        """Float32 (mean, std) copies of the current statistics."""
        return self.mean.to(torch.float32).clone(), torch.sqrt(self.var + self.eps).to(torch.float32)

    def normalize(self, x: torch.Tensor, stats: tuple[torch.Tensor, torch.Tensor] | None = None) -> torch.Tensor:
        mean, std = self.snapshot() if stats is None else stats
        y = (x - mean) / std
        if self.clip is not None:
            y = y.clamp(-self.clip, self.clip)
        return y

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.normalize(x)


class FrozenObsNormalizer(nn.Module):
    """Export form of :class:`RunningObsNormalizer`: float32 ``(x - mean) / std`` (optionally clamped)."""

    def __init__(self, mean: torch.Tensor, std: torch.Tensor, clip: float | None = None):
        super().__init__()
        self.register_buffer("mean", mean.detach().clone().to(torch.float32))
        self.register_buffer("std", std.detach().clone().to(torch.float32))
        self.use_clip = clip is not None
        self.clip = float(clip) if clip is not None else 0.0

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = (x - self.mean) / self.std
        if self.use_clip:
            y = torch.clamp(y, -self.clip, self.clip)
        return y


class ShacActorCritic(nn.Module):
    """Gaussian policy with a learned state-independent log-std, and a state-value critic.

    ``actor`` maps (normalised) observations to the action mean, ``critic`` to a value; both are flat
    ``nn.Sequential`` MLPs. ``is_recurrent`` is False (isaaclab_rl's exporters read it).
    """

    is_recurrent: bool = False

    def __init__(self, num_obs: int, num_actions: int, cfg: ShacActorCriticCfg):
        super().__init__()
        self.cfg = cfg
        self.actor = build_mlp(num_obs, list(cfg.actor_hidden_dims), num_actions, cfg.activation, cfg.layer_norm)
        self.critic = build_mlp(num_obs, list(cfg.critic_hidden_dims), 1, cfg.activation, cfg.layer_norm)
        self.log_std = nn.Parameter(torch.full((num_actions,), float(cfg.init_log_std)))
        self.log_std_range = (float(cfg.log_std_range[0]), float(cfg.log_std_range[1]))
        self.squash_actions = bool(cfg.squash_actions)

    @property
    def std(self) -> torch.Tensor:
        return self.log_std.clamp(*self.log_std_range).exp()

    def actor_parameters(self) -> list[nn.Parameter]:
        return [*self.actor.parameters(), self.log_std]

    def act(self, obs_n: torch.Tensor, deterministic: bool = False) -> torch.Tensor:
        """Action for the env from normalised obs: squash(mean + std * eps) (reparameterised) or squash(mean)."""
        mu = self.actor(obs_n)
        a = mu if deterministic else mu + self.std * torch.randn_like(mu)
        return torch.tanh(a) if self.squash_actions else a

    def evaluate(self, obs_n: torch.Tensor) -> torch.Tensor:
        return self.critic(obs_n).squeeze(-1)


class ShacInferencePolicy(nn.Module):
    """Deterministic policy on raw observations: normaliser, actor mean, optional tanh. ONNX/JIT friendly."""

    is_recurrent: bool = False

    def __init__(self, policy: ShacActorCritic, normalizer: RunningObsNormalizer | None):
        super().__init__()
        layers = list(copy.deepcopy(policy.actor))
        if policy.squash_actions:
            layers.append(nn.Tanh())
        self.actor = nn.Sequential(*layers)
        if normalizer is not None:
            mean, std = normalizer.snapshot()
            self.normalizer = FrozenObsNormalizer(mean, std, normalizer.clip)
        else:
            self.normalizer = nn.Identity()

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        return self.actor(self.normalizer(obs))


def _is_finite(x: torch.Tensor) -> bool:
    return bool(torch.isfinite(x).all())


def _loss_or_nan(loss: torch.Tensor, finite: bool) -> torch.Tensor:
    """The detached loss as a 1-element tensor, NaN when it is not finite (what the ranks average to agree)."""
    return loss.detach().reshape(1) if finite else torch.full((1,), float("nan"), device=loss.device)


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

        self.policy = ShacActorCritic(num_obs, num_actions, policy_cfg).to(self.device)
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
        self.actor_optimizer = torch.optim.Adam(self.policy.actor_parameters(), lr=cfg.actor_learning_rate, betas=betas)
        self.critic_optimizer = torch.optim.Adam(
            self.policy.critic.parameters(), lr=cfg.critic_learning_rate, betas=betas
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
        self._step = 0
        self._actor_loss_sum: torch.Tensor | None = None
        self._norm_pending: list[torch.Tensor] = []
        self._update_norm = False
        self._warned_terminal_obs = False

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
        for g in self.critic_optimizer.param_groups:
            g["lr"] = self.critic_lr

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

    def act(self, obs: torch.Tensor, deterministic: bool = False) -> torch.Tensor:
        """Actions for the current step from raw ``obs`` (graph kept; reparameterised sample unless deterministic)."""
        obs_n = self.normalize(obs.to(self.device))
        with torch.no_grad():
            self.obs_buf[self._step] = obs_n
        return self.policy.act(obs_n, deterministic)

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
        obs_n = self.normalize(obs.to(self.device))

        # Target-critic value of the next state: 0 after a failure, V'(terminal_obs) after a time-out.
        next_v = self.target_critic(obs_n).squeeze(-1)
        if not self.cfg.value_gradient:
            next_v = next_v.detach()
        next_v = torch.where(terminated, torch.zeros_like(next_v), next_v)
        time_out = truncated & ~terminated
        if bool(time_out.any()):
            term_obs = extras.get("terminal_obs") if extras is not None else None
            idx = time_out.nonzero(as_tuple=False).squeeze(-1)
            if term_obs is None:
                if not self._warned_terminal_obs:
                    print("[SHAC] warning: env gives no extras['terminal_obs']; time-outs are not bootstrapped.")
                    self._warned_terminal_obs = True
                next_v = next_v.index_put((idx,), torch.zeros(idx.numel(), device=next_v.device))
            else:
                v_to = self.target_critic(self.normalize(term_obs.to(self.device)[idx])).squeeze(-1)
                if not self.cfg.value_gradient:
                    v_to = v_to.detach()
                next_v = next_v.index_put((idx,), v_to)

        rewards = rewards.to(self.device).reshape(self.num_envs)
        rew_acc = self._rew_acc + self._gamma_acc * rewards
        seg = -(rew_acc + self.gamma * self._gamma_acc * next_v)
        if last:
            self._actor_loss_sum = self._actor_loss_sum + seg.sum()
        else:
            self._actor_loss_sum = self._actor_loss_sum + torch.where(done, seg, torch.zeros_like(seg)).sum()
        self._rew_acc = torch.where(done, torch.zeros_like(rew_acc), rew_acc)
        self._gamma_acc = torch.where(done, torch.ones_like(self._gamma_acc), self._gamma_acc * self.gamma)

        with torch.no_grad():
            self.rew_buf[i] = rewards
            self.done_buf[i] = 1.0 if last else done.float()
            self.next_value_buf[i] = next_v
        self._step += 1

    def abort_horizon(self) -> None:
        """Drop the current horizon (its graph and partial data, pending normaliser data) without updating."""
        self._step = 0
        self._actor_loss_sum = None
        self._norm_pending = []

    def skip_iteration(self) -> dict[str, float]:
        """Count an iteration whose rollout failed (e.g. the env raised on a non-finite state) as non-finite."""
        self.abort_horizon()
        self.nonfinite_count += 1
        self.consecutive_nonfinite += 1
        nan = float("nan")
        return {
            "actor_loss": nan, "grad_norm": nan, "actor_skipped": 1.0, "critic_loss": nan, "critic_skipped": 1.0,
            "mean_step_reward": nan, "target_value_mean": nan, "nonfinite": 1.0,
            "nonfinite_count": float(self.nonfinite_count), "mean_std": float(self.policy.std.detach().mean()),
            "exploding_skipped": 0.0, "exploding_count": float(self.exploding_count), "backward_time": 0.0,
        }  # fmt: skip

    @property
    def actor_loss(self) -> torch.Tensor:
        """The horizon's actor loss so far, normalised by h * N."""
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
        ``consecutive_nonfinite``). An actor gradient norm above ``max_actor_grad_norm`` also skips the actor
        step, counted apart (``exploding_count``). Returns scalar statistics; ``backward_time`` is the seconds of
        the actor loss's backward (through the physics).
        """
        if self._step != self.horizon:
            raise RuntimeError(f"update() after {self._step} of {self.horizon} steps")
        stats: dict[str, float] = {}
        max_norm = float(self.cfg.max_grad_norm)

        # ---- actor
        loss = self.actor_loss
        self._actor_loss_sum = None
        actor_skipped = exploding = False
        backward_time = 0.0
        params = self.policy.actor_parameters()
        self.actor_optimizer.zero_grad(set_to_none=True)
        local_ok = _is_finite(loss.detach())
        if local_ok:
            if not loss.requires_grad:
                raise RuntimeError(
                    "SHAC actor loss has no gradient: the horizon was collected with grad disabled, or env.step's"
                    " rewards/observations are not differentiable functions of the actions."
                )
            sync_device(self.device)
            t0 = time.perf_counter()
            loss.backward()
            sync_device(self.device)
            backward_time = time.perf_counter() - t0
        # With several ranks: gradients and loss averaged (a non-finite loss on any rank makes the average non-finite,
        # so all ranks skip together), and every decision below is taken on the same numbers on every rank.
        loss_value = distributed.average_gradients(params, _loss_or_nan(loss, local_ok))
        stats["actor_loss"] = float(loss_value)
        if not _is_finite(loss_value):
            actor_skipped, grad_norm = True, float("nan")
            self.actor_optimizer.zero_grad(set_to_none=True)
        else:
            grad_norm_t = torch.nn.utils.clip_grad_norm_(params, max_norm)
            grad_norm = float(grad_norm_t)
            limit = self.cfg.max_actor_grad_norm
            if not math.isfinite(grad_norm):
                actor_skipped = True
                self.actor_optimizer.zero_grad(set_to_none=True)
            elif limit is not None and grad_norm > limit:
                exploding = True
                self.exploding_count += 1
                self.actor_optimizer.zero_grad(set_to_none=True)
            else:
                self.actor_optimizer.step()
        del loss
        stats["grad_norm"] = grad_norm
        stats["backward_time"] = backward_time
        stats["actor_skipped"] = float(actor_skipped)
        stats["exploding_skipped"] = float(exploding)
        stats["exploding_count"] = float(self.exploding_count)

        # ---- critic
        critic_skipped = False
        targets = self.compute_target_values()
        obs = self.obs_buf.reshape(-1, self.num_obs)
        tgt = targets.reshape(-1)
        data_bad = float(not (_is_finite(obs) and _is_finite(tgt)))
        if distributed.is_multi_process():  # averaged for the log; the critic data checked on every rank
            means = torch.stack([self.rew_buf.mean(), tgt.mean(), torch.tensor(data_bad, device=self.device)])
            mean_rew, mean_tgt, data_bad = distributed.mean_over_ranks(means).tolist()
        else:
            mean_rew, mean_tgt = float(self.rew_buf.mean()), float(tgt.mean())
        stats["mean_step_reward"] = mean_rew
        stats["target_value_mean"] = mean_tgt
        critic_loss_sum, n_batches, n_steps = 0.0, 0, 0
        if data_bad > 0:
            critic_skipped = True
            critic_loss = float("nan")
        else:
            critic_params = list(self.policy.critic.parameters())
            n = obs.shape[0]
            nmb = max(1, min(int(self.cfg.num_critic_minibatches), n))
            for epoch in range(int(self.cfg.critic_iterations)):
                perm = torch.randperm(n, device=self.device)
                last_epoch = epoch == int(self.cfg.critic_iterations) - 1
                for idx in perm.chunk(nmb):
                    pred = self.policy.critic(obs[idx]).squeeze(-1)
                    c_loss = (pred - tgt[idx]).square().mean()
                    self.critic_optimizer.zero_grad(set_to_none=True)
                    local_ok = _is_finite(c_loss.detach())
                    if local_ok:
                        c_loss.backward()
                    c_value = distributed.average_gradients(critic_params, _loss_or_nan(c_loss, local_ok))
                    if not _is_finite(c_value):
                        critic_skipped = True
                        self.critic_optimizer.zero_grad(set_to_none=True)
                        continue
                    gn = torch.nn.utils.clip_grad_norm_(self.policy.critic.parameters(), max_norm)
                    if not _is_finite(gn):
                        critic_skipped = True
                        self.critic_optimizer.zero_grad(set_to_none=True)
                        continue
                    self.critic_optimizer.step()
                    n_steps += 1
                    if last_epoch:
                        critic_loss_sum += float(c_value)
                        n_batches += 1
            critic_loss = critic_loss_sum / n_batches if n_batches else float("nan")
            if n_steps:
                with torch.no_grad():
                    a = float(self.cfg.target_critic_alpha)
                    for p, pt in zip(self.policy.critic.parameters(), self.target_critic.parameters()):
                        pt.mul_(a).add_(p, alpha=1.0 - a)
        stats["critic_loss"] = critic_loss
        stats["critic_skipped"] = float(critic_skipped)

        nonfinite = actor_skipped or critic_skipped
        stats["nonfinite"] = float(nonfinite)
        if nonfinite:
            self.nonfinite_count += 1
            self.consecutive_nonfinite += 1
        else:
            self.consecutive_nonfinite = 0
            self._merge_pending_observations()
        self._norm_pending = []
        stats["nonfinite_count"] = float(self.nonfinite_count)
        stats["mean_std"] = float(self.policy.std.detach().mean())
        self._step = 0
        return stats

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

    # ------------------------------------------------------------------ inference, state

    def get_inference_policy(self, device: str | torch.device | None = None) -> ShacInferencePolicy:
        """A deterministic copy of the policy on raw observations (normaliser and tanh folded in)."""
        pol = ShacInferencePolicy(self.policy, self.obs_normalizer).eval()
        return pol.to(device if device is not None else self.device)

    def state_dict(self) -> dict:
        return {
            "model_state_dict": self.policy.state_dict(),
            "target_critic_state_dict": self.target_critic.state_dict(),
            "obs_normalizer_state_dict": self.obs_normalizer.state_dict() if self.obs_normalizer is not None else None,
            "actor_optimizer_state_dict": self.actor_optimizer.state_dict(),
            "critic_optimizer_state_dict": self.critic_optimizer.state_dict(),
            "nonfinite_count": self.nonfinite_count,
            "consecutive_nonfinite": self.consecutive_nonfinite,
            "exploding_count": self.exploding_count,
        }

    def load_state_dict(self, state: dict, load_optimizer: bool = True) -> None:
        self.policy.load_state_dict(state["model_state_dict"])
        self.target_critic.load_state_dict(state["target_critic_state_dict"])
        if self.obs_normalizer is not None and state.get("obs_normalizer_state_dict") is not None:
            self.obs_normalizer.load_state_dict(state["obs_normalizer_state_dict"])
        if load_optimizer:
            self.actor_optimizer.load_state_dict(state["actor_optimizer_state_dict"])
            self.critic_optimizer.load_state_dict(state["critic_optimizer_state_dict"])
            self.nonfinite_count = int(state.get("nonfinite_count", 0))
            self.consecutive_nonfinite = int(state.get("consecutive_nonfinite", 0))
            self.exploding_count = int(state.get("exploding_count", 0))
