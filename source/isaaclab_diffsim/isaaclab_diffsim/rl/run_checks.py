"""Checks a training command passes before any env is built: the run folder, the checkpoint it resumes and the
device. Each failure is a :class:`RunError` whose message says what is wrong and what to do."""

from __future__ import annotations

import os

import torch

from .checkpoints import CheckpointError, latest_checkpoint
from .policy_loading import ALGO_NAMES, checkpoint_algorithm


class RunError(ValueError):
    """A training, playing or export command that cannot run as given."""


def check_device(device: str) -> None:
    """Refuse a CUDA device torch cannot see (before torch fails on it with a driver message)."""
    if device.startswith("cuda"):
        if not torch.cuda.is_available():
            raise RunError(f"--device {device}: torch sees no CUDA GPU on this machine; use --device cpu")
        index = device.partition(":")[2]
        if index and (not index.isdigit() or int(index) >= torch.cuda.device_count()):
            raise RunError(f"--device {device}: this machine has {torch.cuda.device_count()} CUDA device(s)")
    elif device != "cpu":
        raise RunError(f"--device must be cpu, cuda or cuda:<i>, got {device!r}")


def resolve_resume(resume: str | None, log_dir: str | None) -> str | None:
    """``--resume``: a checkpoint file, or ``auto`` (the latest checkpoint of ``--log_dir``)."""
    if resume != "auto":
        return resume
    if not log_dir:
        raise RunError("--resume auto needs --log_dir (the run folder whose latest checkpoint to continue)")
    found = latest_checkpoint(os.path.abspath(log_dir))
    if found is None:
        raise RunError(f"--resume auto: {log_dir} holds no checkpoint (model_<it>.pt); start without --resume")
    return found


def refuse_overwrite(log_dir: str, resume: str | None) -> None:
    """A ``--log_dir`` that already holds checkpoints is only used to resume: never written over."""
    if resume is None and latest_checkpoint(os.path.abspath(log_dir)) is not None:
        raise RunError(
            f"--log_dir {log_dir} already holds checkpoints of a run; continue it with --resume auto, or "
            "choose a new folder"
        )


def _flat(d: dict, prefix: str = "") -> dict:
    out = {}
    for k, v in d.items():
        if isinstance(v, dict):
            out.update(_flat(v, f"{prefix}{k}."))
        else:
            out[f"{prefix}{k}"] = v
    return out


def settings_diff(saved: dict | None, current: dict, prefix: str) -> list[str]:
    """``prefix.key: saved -> current`` for every leaf that differs between two cfg dicts."""
    if not saved:
        return []
    a, b = _flat(saved), _flat(current)
    return [f"{prefix}.{k}: {a.get(k)!r} -> {b.get(k)!r}" for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)]


def check_resume(path: str, algo: str, env_cfg, agent_cfg) -> list[str]:
    """Refuse a checkpoint that is unreadable, written by the other algorithm, or for another number of envs;
    return the settings that differ from the checkpoint's (printed, not refused: resuming may change them)."""
    try:
        written_by, state = checkpoint_algorithm(path)
    except CheckpointError as err:
        raise RunError(str(err)) from err
    if written_by != algo:
        raise RunError(
            f"checkpoint {path} was written by {ALGO_NAMES[written_by]}, not {ALGO_NAMES[algo]}: "
            f"resume it with --algo {written_by}"
        )
    saved_env = state.get("env_cfg") or {}
    saved_envs = saved_env.get("num_envs")
    if saved_envs is not None and saved_envs != env_cfg.num_envs:
        raise RunError(
            f"checkpoint {path} was trained with {saved_envs} envs, this command asks for "
            f"{env_cfg.num_envs}: resume with --num_envs {saved_envs} (the env state is per env)"
        )
    diff = settings_diff(saved_env, env_cfg.to_dict(), "env")
    saved_agent = state.get("cfg")
    if isinstance(saved_agent, dict):
        diff += settings_diff(saved_agent, agent_cfg.to_dict(), "agent")
    return [d for d in diff if not d.startswith(("env.seed", "agent.seed", "env.device", "agent.device"))]
