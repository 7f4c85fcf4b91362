"""Reproducible draws from torch's global generator (which Isaac Lab's event and noise functions use)."""

from __future__ import annotations

import contextlib

import torch


@contextlib.contextmanager
def global_rng_seeded(device: torch.device, seed: int):
    """Within the block, torch's default generator of ``device`` starts from ``seed``; its state before the block is
    restored afterwards. Only that device's generator is seeded (``torch.manual_seed`` seeds every device, ~50x
    slower)."""
    device = torch.device(device)
    with torch.random.fork_rng(devices=[device] if device.type == "cuda" else []):
        if device.type == "cuda":
            index = device.index if device.index is not None else torch.cuda.current_device()
            torch.cuda.default_generators[index].manual_seed(int(seed))
        else:
            torch.random.default_generator.manual_seed(int(seed))
        yield
