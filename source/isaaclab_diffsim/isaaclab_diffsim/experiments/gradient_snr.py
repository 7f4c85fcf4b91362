"""Signal and noise of the actor's first-layer gradient per input group, measured per env: how many envs a batch
needs before its gradient on a group of inputs (flat-MDP terms, height scan, ...) points the same way as another
independent batch's.

Envs do not interact, so the actor loss of a horizon is a mean over envs and its first-layer weight gradient is the
mean of per-env gradients ``G_n = sum_t delta_{t,n} x_{t,n}^T``, with ``x_{t,n}`` the layer's input (the normalised
observation) and ``delta_{t,n}`` the loss's gradient with respect to its output at step t (what every later step of
the horizon makes of it). One backward pass gives both factors, so the per-env statistics cost no extra backward:

- second moment ``E|G|^2 = 1/N sum_n |G_n|^2``, with ``|G_n|^2 = sum_{t,s} (delta_t . delta_s)(x_t . x_s)``;
- signal ``|E G|^2``, unbiased from the mean of the pairwise products ``G_n . G_m``, n != m:
  ``(|sum_n G_n|^2 - sum_n |G_n|^2) / (N (N - 1))``.

The mean gradient of a batch of M envs then has an expected squared error ``(E|G|^2 - |E G|^2) / M`` about
``E G``, and two independent such batches have an expected cosine of about ``s / (s + noise / M)`` (s the signal,
``noise = E|G|^2 - s``): a batch of ``noise / s`` envs reaches a cosine of 0.5. Adam scales each weight's step by its
own gradient's root mean square, so the same moments per weight (:func:`per_weight_moments`) say how many envs make
each weight's gradient keep its sign.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch


class LayerGradientCapture:
    """Records, for every forward call of ``layer`` (a ``torch.nn.Linear``) with grad enabled while the context is
    open, its input and (after the backward pass) the gradient with respect to its output."""

    def __init__(self, layer: torch.nn.Module):
        if not isinstance(layer, torch.nn.Linear):
            raise TypeError(f"LayerGradientCapture needs a torch.nn.Linear, got {type(layer).__name__}")
        self.layer = layer
        self.inputs: list[torch.Tensor] = []
        self._out_grads: dict[int, torch.Tensor] = {}
        self._handle = None

    def _forward_hook(self, _module, args, out):
        if not out.requires_grad:
            return
        i = len(self.inputs)
        self.inputs.append(args[0].detach())
        out.register_hook(lambda g, i=i: self._out_grads.__setitem__(i, g.detach()))

    def __enter__(self) -> LayerGradientCapture:
        self.inputs, self._out_grads = [], {}
        self._handle = self.layer.register_forward_hook(self._forward_hook)
        return self

    def __exit__(self, *exc) -> None:
        self._handle.remove()
        self._handle = None

    def factors(self) -> tuple[torch.Tensor, torch.Tensor]:
        """(inputs, output gradients), each stacked over the recorded calls: (T, N, in) and (T, N, out); a call whose
        output took no part in the backward pass has a zero gradient. ValueError before any call."""
        if not self.inputs:
            raise ValueError("LayerGradientCapture: the layer was not called with grad enabled")
        x = torch.stack(self.inputs)
        out = self.layer.out_features
        d = torch.stack([self._out_grads.get(i, x.new_zeros(x.shape[1], out)) for i in range(len(self.inputs))]).to(
            x.dtype
        )
        return x, d


def per_env_moments(x: torch.Tensor, delta: torch.Tensor, columns: slice) -> tuple[torch.Tensor, torch.Tensor]:
    """(sum over envs of G_n, and each env's |G_n|^2) for the weight columns ``columns``, from the stacked inputs
    ``x`` (T, N, in) and output gradients ``delta`` (T, N, out); G_n = sum_t delta_{t,n} x_{t,n}[columns]^T."""
    xc = x[..., columns].double()
    d = delta.double()
    total = torch.einsum("tno,tni->oi", d, xc)
    gram_d = torch.einsum("tno,sno->nts", d, d)
    gram_x = torch.einsum("tni,sni->nts", xc, xc)
    return total, (gram_d * gram_x).sum(dim=(1, 2))


@dataclass
class GradientSignal:
    """Per-env gradient moments of one input group, averaged over horizons: ``signal`` |E G|^2 and ``second_moment``
    E|G|^2 (per env, the batch's loss being their mean); ``signal_sem`` the standard error of ``signal`` over the
    horizons (0 with one)."""

    signal: float
    second_moment: float
    signal_sem: float = 0.0

    @property
    def noise(self) -> float:
        """E|G - E G|^2 of one env."""
        return self.second_moment - self.signal

    def cosine(self, envs: int) -> float:
        """Expected cosine between the mean gradients of two independent batches of ``envs`` envs (0 when the signal
        estimate is not positive)."""
        if self.signal <= 0.0:
            return 0.0
        return self.signal / (self.signal + self.noise / envs)

    def envs_for_cosine(self, cosine: float = 0.5) -> float:
        """Batch size whose independent mean gradients have ``cosine`` in expectation (inf when the signal estimate
        is not positive)."""
        if not 0.0 < cosine < 1.0:
            raise ValueError(f"cosine must be in (0, 1), got {cosine}")
        if self.signal <= 0.0:
            return math.inf
        return self.noise / self.signal * cosine / (1.0 - cosine)


def horizon_moments(
    x: torch.Tensor, delta: torch.Tensor, columns: slice, loss_envs: int | None = None
) -> tuple[float, float]:
    """(unbiased |E G|^2, E|G|^2) of one horizon's N envs for ``columns`` (N >= 2), from the factors of a loss that
    is the mean of ``loss_envs`` envs' losses (default N; more when ``x`` and ``delta`` hold a subset of the envs):
    G_n is env n's own loss gradient, ``loss_envs`` times its share of the batch's."""
    n = x.shape[1]
    if n < 2:
        raise ValueError(f"the signal estimate needs at least 2 envs, got {n}")
    scale = float(loss_envs if loss_envs is not None else n) ** 2
    total, sq = per_env_moments(x, delta, columns)
    total_sq, sq_sum = scale * float(total.square().sum()), scale * float(sq.sum())
    return (total_sq - sq_sum) / (n * (n - 1)), sq_sum / n


def largest_envs(x: torch.Tensor, delta: torch.Tensor, fraction: float) -> tuple[torch.Tensor, float]:
    """(indices of the ceil(``fraction`` N) envs whose own first-layer gradients, over all its columns, are the
    largest; their share of sum_n |G_n|^2)."""
    if not 0.0 < fraction < 1.0:
        raise ValueError(f"fraction must be in (0, 1), got {fraction}")
    _, sq = per_env_moments(x, delta, slice(None))
    k = math.ceil(fraction * sq.numel())
    top = sq.topk(k).indices
    return top, float(sq[top].sum() / sq.sum().clamp_min(1e-300))


def envs_share(x: torch.Tensor, delta: torch.Tensor, mask: torch.Tensor) -> float:
    """The share of sum_n |G_n|^2 (over all the layer's columns) held by the envs where ``mask`` (N,) is true."""
    _, sq = per_env_moments(x, delta, slice(None))
    return float(sq[mask.to(sq.device)].sum() / sq.sum().clamp_min(1e-300))


def combine_horizons(moments: list[tuple[float, float]]) -> GradientSignal:
    """The :class:`GradientSignal` of several horizons' :func:`horizon_moments` (their means)."""
    if not moments:
        raise ValueError("no horizons")
    sig = torch.tensor([m[0] for m in moments], dtype=torch.float64)
    sem = float(sig.std() / math.sqrt(len(moments))) if len(moments) > 1 else 0.0
    return GradientSignal(float(sig.mean()), sum(m[1] for m in moments) / len(moments), sem)


def per_weight_moments(
    x: torch.Tensor, delta: torch.Tensor, columns: slice, chunk: int = 64, generator: torch.Generator | None = None
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Per weight of the columns ``columns``, the unbiased E[G]^2 and E[G^2] over one horizon's N envs (N >= 2), G
    being an env's own gradient as in :func:`horizon_moments`: what Adam, which scales each weight's step by its own
    gradient's root mean square, sees. The third tensor is the same E[G]^2 estimate with each env's gradient
    multiplied by a random sign (from ``generator``), which has no mean: the estimate's spread where there is no
    signal. The envs' gradients are formed ``chunk`` envs at a time."""
    n = x.shape[1]
    if n < 2:
        raise ValueError(f"the signal estimate needs at least 2 envs, got {n}")
    xc, d = x[..., columns].double(), delta.double()
    signs = torch.randint(0, 2, (n,), generator=generator).double() * 2 - 1
    s1 = torch.zeros(d.shape[-1], xc.shape[-1], dtype=torch.float64)
    s2, s1_null = torch.zeros_like(s1), torch.zeros_like(s1)
    for start in range(0, n, chunk):
        g = n * torch.einsum("tco,tci->coi", d[:, start : start + chunk], xc[:, start : start + chunk])
        s1 += g.sum(0)
        s2 += g.square().sum(0)
        s1_null += torch.einsum("c,coi->oi", signs[start : start + chunk], g)
    norm = n * (n - 1)
    return (s1.square() - s2) / norm, s2 / n, (s1_null.square() - s2) / norm


def weight_envs_needed(signal: torch.Tensor, second_moment: torch.Tensor) -> torch.Tensor:
    """Per weight, the batch at which the batch-mean gradient's mean equals its standard deviation (noise over
    signal; inf where the signal estimate is not positive)."""
    noise = second_moment - signal
    return torch.where(signal > 0, noise / signal.clamp_min(1e-300), torch.full_like(signal, math.inf))
