"""The MLPs of the SHAC actor and critic."""

from __future__ import annotations

import torch.nn as nn

from ..activations import ACTIVATIONS


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
