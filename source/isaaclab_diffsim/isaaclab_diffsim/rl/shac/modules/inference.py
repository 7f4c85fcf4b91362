"""The deterministic SHAC policy on raw observations, as deployed and exported."""

from __future__ import annotations

import copy

import torch
import torch.nn as nn

from .actor_critic import ShacActorCritic
from .normalization import FrozenObsNormalizer, RunningObsNormalizer


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
