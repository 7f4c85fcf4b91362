"""The SHAC actor-critic: a Gaussian policy with a learned state-independent log-std, and a state-value critic."""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch
import torch.nn as nn

from .mlp import build_mlp

if TYPE_CHECKING:
    from ..shac_cfg import ShacActorCriticCfg


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
        if not deterministic:
            return self.sample(obs_n)[0]
        mu = self.actor(obs_n)
        return torch.tanh(mu) if self.squash_actions else mu

    def sample(self, obs_n: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(squash(mean + std * eps), eps): a reparameterised action and the standard-normal noise it was drawn with."""
        mu = self.actor(obs_n)
        eps = torch.randn_like(mu)
        a = mu + self.std * eps
        return (torch.tanh(a) if self.squash_actions else a), eps

    def evaluate(self, obs_n: torch.Tensor) -> torch.Tensor:
        return self.critic(obs_n).squeeze(-1)
