"""A likelihood-ratio (score-function) policy-gradient term that SHAC can add to its reparameterised actor loss.

The reparameterised gradient only sees what the smoothed dynamics differentiate; a fall off a step edge a few steps
after the foot is placed is a discontinuity it cannot see. The score-function estimator sees any change of the
return (Williams 1992; Suh et al., ICML 2022, mix it with the first-order one). For the Gaussian policy
``a = mu_theta(s) + sigma * eps`` with the states and samples held fixed, its loss over one horizon is

    L_LR = -1/(h N) * sum_t sum_envs A_t * log N(a_t; mu_theta(s_t), sigma)

whose gradient in ``mu`` is ``-A_t * eps_t / sigma / (h N)``; ``A_t`` is the TD(lambda) advantage, the critic's
target minus the target critic's value of ``s_t``, so that the term estimates the same horizon objective's gradient
as SHAC's loss (both carry the 1/(h N)). ``sigma`` is held fixed: the exploration noise stays SHAC's.
"""

from __future__ import annotations

import torch


def likelihood_ratio_loss(
    mean: torch.Tensor, noise: torch.Tensor, std: torch.Tensor, advantages: torch.Tensor
) -> torch.Tensor:
    """``L_LR`` above for action means ``mean`` (samples x actions, differentiable), the standard-normal ``noise`` the
    actions were drawn with (samples x actions), the policy's ``std`` (actions) and the ``advantages`` (samples);
    ``noise``, ``std`` and ``advantages`` are held constant."""
    if mean.shape != noise.shape or advantages.shape != mean.shape[:1]:
        raise ValueError(
            f"likelihood_ratio_loss: mean {tuple(mean.shape)}, noise {tuple(noise.shape)} and advantages"
            f" {tuple(advantages.shape)} do not match"
        )
    std = std.detach()
    sample = mean.detach() + std * noise.detach()
    log_prob = -(((sample - mean) / std).square() * 0.5).sum(-1)  # log N up to terms constant in mean
    return -(advantages.detach() * log_prob).mean()
