"""rsl_rl models shaped like SHAC's actor and critic, so that rsl_rl's PPO can continue from a SHAC checkpoint.

SHAC's networks differ from rsl_rl's ``MLPModel`` in three ways, each reproduced here with rsl_rl's own extension
points (a model and a distribution class named by ``class_name`` in the agent cfg):

- a LayerNorm follows each hidden activation (:func:`~isaaclab_diffsim.rl.shac.modules.mlp.build_mlp`);
- observations are normalised by SHAC's statistics, ``(x - mean) / sqrt(var + eps)``; here they are frozen buffers
  (:class:`~isaaclab_diffsim.rl.shac.modules.normalization.FrozenObsNormalizer`), loaded with the weights;
- actions are ``tanh`` of a Gaussian sample. :class:`SquashedGaussianDistribution` samples ``tanh(u)``,
  ``u ~ N(mu, sigma)``, and scores an action ``a`` by the Gaussian density of ``u = atanh(a)``. The Jacobian term
  ``-log(1 - a^2)`` of the squashed density does not depend on the parameters, so PPO's likelihood ratios and the
  KL between two parameter sets are the exact ones of the squashed policy. Its entropy (PPO's ``entropy_coef``
  term) is the pre-squash Gaussian's.
"""

from __future__ import annotations

import torch
import torch.nn as nn
from rsl_rl.models import MLPModel
from rsl_rl.modules.distribution import GaussianDistribution

from .shac.modules.mlp import build_mlp
from .shac.modules.normalization import FrozenObsNormalizer

ATANH_LIMIT = 1.0 - 1e-6
"""Actions are clamped to +-this before ``atanh``: float32 ``tanh`` reaches 1 at ``|u|`` near 9, where the
pre-squash sample cannot be recovered (it is then scored as ``|u| = atanh(ATANH_LIMIT)``, about 7.25)."""


class SquashedGaussianDistribution(GaussianDistribution):
    """rsl_rl's state-independent Gaussian, its samples and deterministic output squashed by ``tanh``."""

    def sample(self) -> torch.Tensor:
        return torch.tanh(super().sample())

    def deterministic_output(self, mlp_output: torch.Tensor) -> torch.Tensor:
        return torch.tanh(mlp_output)

    def as_deterministic_output_module(self) -> nn.Module:
        return nn.Tanh()

    def log_prob(self, outputs: torch.Tensor) -> torch.Tensor:
        pre = torch.atanh(outputs.clamp(-ATANH_LIMIT, ATANH_LIMIT))
        return super().log_prob(pre)


class ShacShapedMLPModel(MLPModel):
    """rsl_rl's ``MLPModel`` with SHAC's MLP (LayerNorm after each hidden activation) and, with
    ``obs_normalization``, SHAC's normaliser frozen (its statistics are buffers of this model, not updated)."""

    def __init__(
        self,
        obs,
        obs_groups: dict[str, list[str]],
        obs_set: str,
        output_dim: int,
        hidden_dims: tuple[int, ...] | list[int] = (256, 128, 64),
        activation: str = "elu",
        obs_normalization: bool = False,
        distribution_cfg: dict | None = None,
    ) -> None:
        super().__init__(obs, obs_groups, obs_set, output_dim, hidden_dims, activation, False, distribution_cfg)
        out = output_dim if self.distribution is None else self.distribution.input_dim
        self.mlp = build_mlp(self.obs_dim, list(hidden_dims), out, activation, layer_norm=True)
        self.obs_normalization = obs_normalization
        if obs_normalization:
            self.obs_normalizer = FrozenObsNormalizer(torch.zeros(self.obs_dim), torch.ones(self.obs_dim))

    def update_normalization(self, obs) -> None:
        """The statistics are SHAC's, frozen: nothing to update."""
