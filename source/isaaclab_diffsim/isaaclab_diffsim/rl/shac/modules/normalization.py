"""Observation normalisers: the running one used in training and the frozen one of exported policies."""

from __future__ import annotations

import torch
import torch.nn as nn


@torch.no_grad()
def batch_moments(x: torch.Tensor, num_obs: int, device=None) -> torch.Tensor:
    """``[n, mean..., var...]`` (float64, population variance) of the finite rows of ``x`` (``num_obs`` columns);
    zeros on ``device`` if none."""
    x = x.detach().reshape(-1, num_obs)
    x = x[torch.isfinite(x).all(dim=1)].to(torch.float64)
    n = x.shape[0]
    if n == 0:
        return torch.zeros(1 + 2 * num_obs, dtype=torch.float64, device=device)
    n_t = torch.full((1,), float(n), dtype=torch.float64, device=x.device)
    return torch.cat([n_t, x.mean(dim=0), x.var(dim=0, unbiased=False)])


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
        """:func:`batch_moments` of ``x`` for this normaliser's observations."""
        return batch_moments(x, self.mean.shape[0], self.mean.device)

    @torch.no_grad()
    def update(self, x: torch.Tensor) -> None:
        self.update_from_moments(self.batch_moments(x))

    @torch.no_grad()
    def update_from_moments(self, moments: torch.Tensor) -> None:
        """Merge a batch given by :meth:`batch_moments`; a (W, ...) stack (one row per rank) is first combined in
        row order into the moments of the union of the batches."""
        if moments.dim() == 2:
            moments = self._union_moments(moments)
            if moments is None:
                return
        d = self.mean.shape[0]
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

    def _union_moments(self, moments: torch.Tensor) -> torch.Tensor | None:
        """The moments of the union of the (W, 1 + 2 d) stack's batches, in row order; None if all are empty."""
        d = self.mean.shape[0]
        counts, means, variances = moments[:, 0], moments[:, 1 : 1 + d], moments[:, 1 + d :]
        n = float(counts.sum())
        if n == 0:
            return None
        w = (counts / n).unsqueeze(-1)
        mean = (w * means).sum(dim=0)
        var = (w * (variances + (means - mean).square())).sum(dim=0)
        return torch.cat([counts.sum().reshape(1), mean, var])

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
