"""Activation functions of the SHAC networks, by the names ``ShacActorCriticCfg.activation`` takes."""

from __future__ import annotations

import torch.nn as nn

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
