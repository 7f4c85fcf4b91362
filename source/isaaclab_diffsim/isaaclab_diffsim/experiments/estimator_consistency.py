"""Two estimators of one policy gradient compared over consecutive horizons: how large each is, how well each keeps
its direction from one horizon to the next (a gradient that is mostly signal does; pure noise does not), and how
they agree.

For H horizons with gradients g_1..g_H of one estimator, ``consistency`` is the mean cosine over the pairs of
horizons, and ``sum_ratio`` is ||sum_h g_h|| / sqrt(sum_h ||g_h||^2): about 1 for independent zero-mean gradients
(their norms add in quadrature), sqrt(H) for gradients that keep one direction.
"""

from __future__ import annotations

import itertools
import math

import torch


def _cosine(a: torch.Tensor, b: torch.Tensor) -> float:
    den = float(a.norm() * b.norm())
    return float(a @ b) / den if den > 0 else 0.0


def estimator_summary(grads: list[torch.Tensor]) -> dict:
    """``mean_norm``, ``consistency`` (mean pairwise cosine; 0 for one horizon) and ``sum_ratio`` of one estimator's
    per-horizon gradients (flattened)."""
    if not grads:
        raise ValueError("estimator_summary: no horizons")
    g = [x.double().flatten() for x in grads]
    pairs = list(itertools.combinations(g, 2))
    quad = math.sqrt(sum(float(x @ x) for x in g))
    return {
        "mean_norm": sum(float(x.norm()) for x in g) / len(g),
        "consistency": sum(_cosine(a, b) for a, b in pairs) / len(pairs) if pairs else 0.0,
        "sum_ratio": float(sum(g).norm()) / quad if quad > 0 else 0.0,
    }


def compare_estimators(first: list[torch.Tensor], second: list[torch.Tensor]) -> dict:
    """:func:`estimator_summary` of each, ``norm_ratio`` (second's mean norm over first's), ``cosine_per_horizon``
    (the two estimators' cosine within each horizon) and ``cosine_of_sums`` (over the summed horizons)."""
    if len(first) != len(second):
        raise ValueError(f"compare_estimators: {len(first)} and {len(second)} horizons")
    a, b = estimator_summary(first), estimator_summary(second)
    per = [_cosine(x.double().flatten(), y.double().flatten()) for x, y in zip(first, second)]
    sums = (sum(x.double().flatten() for x in first), sum(y.double().flatten() for y in second))
    return {
        "first": a,
        "second": b,
        "norm_ratio": b["mean_norm"] / a["mean_norm"] if a["mean_norm"] > 0 else math.inf,
        "cosine_per_horizon": per,
        "cosine_of_sums": _cosine(*sums),
    }
