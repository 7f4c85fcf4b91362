"""Deterministic inference policies from SHAC or rsl_rl PPO checkpoints, for a DiffVelocityEnv."""

from __future__ import annotations

import os

ALGOS = ("shac", "ppo")
# the gym registry key of each algorithm's agent config
AGENT_ENTRY = {"shac": "shac_cfg_entry_point", "ppo": "rsl_rl_cfg_entry_point"}
ALGO_NAMES = {"shac": "SHAC", "ppo": "rsl_rl PPO"}


def checkpoint_algorithm(path: str) -> tuple[str, dict]:
    """Which runner wrote ``path`` (``"shac"`` or ``"ppo"``), and the loaded checkpoint (CheckpointError if
    neither, or if the file cannot be read)."""
    from .checkpoints import checkpoint_error, load_checkpoint
    from .ppo_runner import DiffOnPolicyRunner
    from .shac import ShacRunner

    state = load_checkpoint(path, (), "SHAC or rsl_rl PPO", map_location="cpu")
    for algo, keys in (("shac", ShacRunner.CHECKPOINT_KEYS), ("ppo", DiffOnPolicyRunner.CHECKPOINT_KEYS)):
        if all(k in state for k in keys):
            return algo, state
    raise checkpoint_error(path, f"neither a SHAC nor an rsl_rl PPO checkpoint (it has {sorted(state)[:8]}...)")


def load_policy(algo: str, env, agent_cfg, checkpoint: str, device: str):
    """Return ``policy(obs) -> actions`` (no exploration noise) from ``checkpoint`` trained with ``algo``."""
    if algo not in ALGOS:
        raise ValueError(f"algo must be one of {ALGOS}, got {algo!r}")
    if not os.path.isfile(checkpoint):
        raise FileNotFoundError(f"checkpoint not found: {checkpoint}")
    if algo == "shac":
        from .shac import resolve_class

        runner = resolve_class(agent_cfg.class_name)(env, agent_cfg, log_dir=None, device=device)
        runner.load(checkpoint, load_optimizer=False, restore_rng=False, restore_env=False)
        return runner.get_inference_policy()
    from .ppo_runner import load_ppo_runner

    return load_ppo_runner(env, agent_cfg, checkpoint, device).act_policy(device)
