"""Run state as tensors and plain data: tensors nested in containers (detached or moved), and the global RNG states."""

from __future__ import annotations

import random
from collections.abc import Callable

import numpy as np
import torch


def map_tensors(x, fn: Callable[[torch.Tensor], torch.Tensor]):
    """``fn`` applied to the tensors nested in dicts, lists, tuples and named tuples (other values as they are)."""
    if isinstance(x, torch.Tensor):
        return fn(x)
    if isinstance(x, dict):
        return {k: map_tensors(v, fn) for k, v in x.items()}
    if isinstance(x, tuple) and hasattr(x, "_fields"):
        return type(x)(*(map_tensors(v, fn) for v in x))
    if isinstance(x, (list, tuple)):
        return type(x)(map_tensors(v, fn) for v in x)
    return x


def detached(x):
    """Detached copy of the tensors nested in ``x`` (see :func:`map_tensors`)."""
    return map_tensors(x, lambda t: t.detach().clone())


def to_cpu(x):
    """The tensors nested in ``x`` moved to the CPU (what is gathered between ranks)."""
    return map_tensors(x, lambda t: t.cpu())


def to_device(x, device: str | torch.device):
    """The tensors nested in ``x`` moved to ``device``."""
    return map_tensors(x, lambda t: t.to(device))


def rng_states() -> dict:
    """Torch (and CUDA when in use), numpy and python RNG states, as tensors and plain data (``weights_only``
    loadable: numpy's key array is stored as an int64 tensor)."""
    kind, key, pos, has_gauss, gauss = np.random.get_state()
    numpy_state = (kind, torch.from_numpy(key.astype(np.int64)), int(pos), int(has_gauss), float(gauss))
    rng = {"torch": torch.get_rng_state(), "numpy": numpy_state, "python": random.getstate()}
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        rng["cuda"] = torch.cuda.get_rng_state_all()
    return rng


def set_rng_states(rng: dict) -> None:
    """Restore :func:`rng_states` (numpy's key array may also be an ndarray, as older checkpoints hold it)."""
    torch.set_rng_state(rng["torch"].cpu())
    kind, key, *rest = rng["numpy"]
    key = key.cpu().numpy() if isinstance(key, torch.Tensor) else np.asarray(key)
    np.random.set_state((kind, key.astype(np.uint32), *rest))
    random.setstate(rng["python"])
    if "cuda" in rng and torch.cuda.is_available() and len(rng["cuda"]) == torch.cuda.device_count():
        torch.cuda.set_rng_state_all([s.cpu() for s in rng["cuda"]])
