"""Evaluate one checkpoint in several contact models and write the metrics as JSON (used by the experiments).

    .venv/bin/python scripts/experiments/evaluate_checkpoint.py --algo shac --checkpoint RUN/model_500.pt \
        --contact_models soft,hard,smoothed --num_envs 64 --out eval.json

The play configuration of the task (forward commands, no pushes); each contact model gets a fresh reset with the
same seed, and ``num_envs`` episodes (see ``rl.evaluation.evaluate``).
"""

from __future__ import annotations

import argparse
import json
import os
import time

import gymnasium as gym
import torch

from isaaclab_diffsim.rl.evaluation import evaluate
from isaaclab_diffsim.rl.policy_loading import ALGOS, load_policy
from isaaclab_diffsim.solver import CONTACT_MODELS
from isaaclab_diffsim.utils.cli import apply_overrides, load_task_cfgs

ENTRY = {"shac": "shac_cfg_entry_point", "ppo": "rsl_rl_cfg_entry_point"}


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--task", default="DiffSim-Velocity-Flat-AnymalC-Direct-Play")
    p.add_argument("--algo", choices=ALGOS, required=True)
    p.add_argument("--checkpoint", required=True)
    p.add_argument("--contact_models", default="soft,hard,smoothed")
    p.add_argument("--num_envs", type=int, default=64)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--device", default="cpu")
    p.add_argument("--out", required=True)
    p.add_argument("overrides", nargs="*")
    args = p.parse_args()
    models = [m.strip() for m in args.contact_models.split(",") if m.strip()]
    bad = [m for m in models if m not in CONTACT_MODELS]
    if bad:
        raise SystemExit(f"unknown contact model(s) {bad}; known: {sorted(CONTACT_MODELS)}")
    if not os.path.isfile(args.checkpoint):
        raise SystemExit(f"checkpoint not found: {args.checkpoint}")
    torch.set_num_threads(1)
    env_cfg, agent_cfg = load_task_cfgs(args.task, ENTRY[args.algo])
    env_cfg.device = agent_cfg.device = args.device
    env_cfg.num_envs = args.num_envs
    env_cfg.seed = args.seed
    apply_overrides(args.overrides, env=env_cfg, agent=agent_cfg)
    env = gym.make(args.task, cfg=env_cfg).unwrapped
    policy = load_policy(args.algo, env, agent_cfg, args.checkpoint, args.device)
    out = {"checkpoint": os.path.abspath(args.checkpoint), "algo": args.algo, "num_envs": args.num_envs, "models": {}}
    for model in models:
        t0 = time.time()
        env.set_contact_model(model)
        torch.manual_seed(args.seed)
        env.reset(seed=args.seed)  # the same initial states in every contact model
        result = evaluate(env, policy, args.num_envs, progress=False)
        print(f"[evaluate] {model}: {result.summary()} ({time.time() - t0:.0f} s)", flush=True)
        out["models"][model] = {
            "returns": result.returns.tolist(),
            "tracking_errors": result.tracking_errors.tolist(),
            "falls": result.falls.astype(float).tolist(),
        }
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(out, f)
    print(f"[evaluate] wrote {args.out}", flush=True)


if __name__ == "__main__":
    main()
