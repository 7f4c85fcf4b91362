"""Reading training checkpoints safely: ``weights_only`` loading and clear errors for bad files.

A checkpoint that is missing, truncated (a run killed while writing it), corrupt, or written by something else
(another algorithm, a bare state dict) raises :class:`CheckpointError` naming the file, what is wrong, and the
previous checkpoint of the same run, if there is one.
"""

from __future__ import annotations

import os
import re

import numpy as np
import torch

_NUMBERED = re.compile(r"model_(\d+)(_interrupted)?\.pt$")

# Checkpoints written before the RNG states were stored as tensors hold numpy's MT19937 state as an ndarray;
# these are the (data-only) numpy types needed to read them under weights_only.
_NUMPY_GLOBALS = [np.ndarray, np.dtype, type(np.dtype(np.uint32))]
try:
    from numpy._core.multiarray import _reconstruct
except ImportError:  # numpy < 2
    from numpy.core.multiarray import _reconstruct
_NUMPY_GLOBALS.append(_reconstruct)


class CheckpointError(ValueError):
    """A checkpoint file that cannot be used; the message names the file and suggests the previous one."""


def previous_checkpoint(path: str) -> str | None:
    """The checkpoint of the same run directory with the highest iteration below ``path``'s (None if none)."""
    d, name = os.path.split(os.path.abspath(path))
    m = _NUMBERED.match(name)
    if m is None or not os.path.isdir(d):
        return None
    it = int(m.group(1))
    found = []
    for f in os.listdir(d):
        mf = _NUMBERED.match(f)
        if mf is not None and int(mf.group(1)) < it:
            found.append((int(mf.group(1)), f))
    return os.path.join(d, max(found)[1]) if found else None


def latest_checkpoint(run_dir: str) -> str | None:
    """The checkpoint with the highest iteration in ``run_dir``: ``model_<it>.pt``, or ``model_<it>_interrupted.pt``
    (what an interrupt saves) when no regular one has as many iterations. None if there is none."""
    if not os.path.isdir(run_dir):
        return None
    found = []
    for f in os.listdir(run_dir):
        m = _NUMBERED.match(f)
        if m is not None:
            found.append((int(m.group(1)), m.group(2) is None, os.path.join(run_dir, f)))
    return max(found)[2] if found else None


def checkpoint_iteration(path: str) -> int:
    """The iteration in a checkpoint's file name (``model_<it>.pt`` or ``model_<it>_interrupted.pt``); ValueError
    for another name."""
    m = _NUMBERED.match(os.path.basename(path))
    if m is None:
        raise ValueError(f"{path}: not a checkpoint name (model_<iteration>.pt)")
    return int(m.group(1))


def periodic_checkpoints(run_dir: str) -> list[tuple[int, str]]:
    """The periodic checkpoints of ``run_dir`` (``model_<it>.pt``, not what an interrupt saved) as (iteration,
    path), by iteration; empty if there are none or no such directory."""
    if not os.path.isdir(run_dir):
        return []
    found = []
    for f in os.listdir(run_dir):
        m = _NUMBERED.match(f)
        if m is not None and m.group(2) is None:
            found.append((int(m.group(1)), os.path.join(run_dir, f)))
    return sorted(found)


def env_cfg_dict(env) -> dict | None:
    """The env's config as plain data (what checkpoints store, readable with ``weights_only=True``); None if the env
    has no configclass ``cfg``."""
    cfg = getattr(env, "cfg", None)
    return cfg.to_dict() if hasattr(cfg, "to_dict") else None


def checkpoint_error(path: str, problem: str) -> CheckpointError:
    prev = previous_checkpoint(path)
    hint = f"; the previous checkpoint of this run is {prev}" if prev else ""
    return CheckpointError(f"checkpoint {path}: {problem}{hint}")


def load_checkpoint(path: str, required_keys: tuple[str, ...], kind: str, map_location=None) -> dict:
    """``torch.load(path, weights_only=True)`` with clear errors; checks the file is a dict with ``required_keys``.

    ``kind`` names the expected writer in messages (e.g. "SHAC runner").
    """
    if not os.path.isfile(path):
        raise checkpoint_error(path, "no such file")
    if os.path.getsize(path) == 0:
        raise checkpoint_error(path, "the file is empty (a run stopped while writing it?)")
    try:
        with torch.serialization.safe_globals(_NUMPY_GLOBALS):
            state = torch.load(path, map_location=map_location, weights_only=True)
    except Exception as err:  # noqa: BLE001 - torch raises RuntimeError, UnpicklingError, EOFError, ... for bad files
        first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise checkpoint_error(
            path,
            f"cannot be read as a torch checkpoint ({type(err).__name__}: {first}); it is truncated, corrupt, or"
            " holds objects other than tensors and plain data",
        ) from err
    if not isinstance(state, dict):
        raise checkpoint_error(path, f"holds a {type(state).__name__}, not a {kind} checkpoint (a dict)")
    missing = [k for k in required_keys if k not in state]
    if missing:
        keys = sorted(state)[:8]
        raise checkpoint_error(path, f"not a {kind} checkpoint: missing {missing} (it has {keys}...)")
    return state
