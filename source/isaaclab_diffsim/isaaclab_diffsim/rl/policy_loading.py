"""Deterministic inference policies from SHAC or rsl_rl PPO checkpoints, for a DiffVelocityEnv."""

from __future__ import annotations

import importlib.metadata
import os

ALGOS = ("shac", "ppo")


def load_policy(algo: str, env, agent_cfg, checkpoint: str, device: str):
    """Return ``policy(obs) -> actions`` (no exploration noise) from ``checkpoint`` trained with ``algo``."""
    if algo not in ALGOS:
        raise ValueError(f"algo must be one of {ALGOS}, got {algo!r}")
    if not os.path.isfile(checkpoint):
        raise FileNotFoundError(f"checkpoint not found: {checkpoint}")
    if algo == "shac":
        from .shac import ShacRunner

        runner = ShacRunner(env, agent_cfg, log_dir=None, device=device)
        runner.load(checkpoint, load_optimizer=False, restore_rng=False, restore_env=False)
        return runner.get_inference_policy()
    from isaaclab.utils import to_dict
    from isaaclab_rl.rsl_rl import handle_deprecated_rsl_rl_cfg
    from rsl_rl.runners import OnPolicyRunner

    from ..envs import DiffEnvRslRlWrapper

    agent_cfg = handle_deprecated_rsl_rl_cfg(agent_cfg, importlib.metadata.version("rsl-rl-lib"))
    runner = OnPolicyRunner(DiffEnvRslRlWrapper(env), to_dict(agent_cfg), log_dir=None, device=device)
    runner.load(checkpoint, map_location=device)
    policy = runner.get_inference_policy(device=device)
    return lambda obs: policy({"policy": obs})
