"""The command line shared by the experiment scripts that roll a trained checkpoint out (evaluation, gait traces)."""

from __future__ import annotations

import argparse
import os

from isaaclab_diffsim.rl.policy_loading import AGENT_ENTRY, ALGOS, load_policy
from isaaclab_diffsim.solver import CONTACT_MODELS


def add_policy_arguments(parser: argparse.ArgumentParser, contact_models: str, num_envs: int) -> None:
    """--task (the play configuration), --algo, --checkpoint, --contact_models, --num_envs, --device, --out and
    Isaac Lab-style overrides."""
    parser.add_argument("--task", default="DiffSim-Velocity-Flat-AnymalC-Direct-Play")
    parser.add_argument("--algo", choices=ALGOS, required=True)
    parser.add_argument("--checkpoint", required=True)
    parser.add_argument("--contact_models", default=contact_models, help="comma-separated")
    parser.add_argument("--num_envs", type=int, default=num_envs)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--out", required=True)
    parser.add_argument("overrides", nargs="*", help="env.<field>=value / agent.<field>=value")


def contact_models(args) -> list[str]:
    models = [m.strip() for m in args.contact_models.split(",") if m.strip()]
    bad = [m for m in models if m not in CONTACT_MODELS]
    if bad or not models:
        raise SystemExit(f"unknown contact model(s) {bad or args.contact_models!r}; known: {sorted(CONTACT_MODELS)}")
    return models


def make_policy_env(args, configure=None):
    """(env, policy, env_cfg) for the parsed arguments; ``configure(env_cfg)`` edits the config before the env is
    built."""
    import gymnasium as gym
    import torch

    from isaaclab_diffsim.tasks.task_cfgs import resolve_task_cfgs

    if not os.path.isfile(args.checkpoint):
        raise SystemExit(f"checkpoint not found: {args.checkpoint}")
    torch.set_num_threads(1)
    env_cfg, agent_cfg = resolve_task_cfgs(args.task, AGENT_ENTRY[args.algo], args.overrides)
    env_cfg.device = agent_cfg.device = args.device
    env_cfg.num_envs = args.num_envs
    if configure is not None:
        configure(env_cfg)
    env = gym.make(args.task, cfg=env_cfg).unwrapped
    return env, load_policy(args.algo, env, agent_cfg, args.checkpoint, args.device), env_cfg
