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

import torch
from policy_env import add_policy_arguments, contact_models, make_policy_env

from isaaclab_diffsim.rl.evaluation import evaluate


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_policy_arguments(p, contact_models="soft,hard,smoothed", num_envs=64)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    models = contact_models(args)

    def seeded(env_cfg):
        env_cfg.seed = args.seed

    env, policy, _ = make_policy_env(args, seeded)
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
