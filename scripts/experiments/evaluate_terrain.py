"""Evaluate a rough-task checkpoint per terrain type and level: tracking error and fall rate, as JSON.

    .venv/bin/python scripts/experiments/evaluate_terrain.py --algo shac --checkpoint RUN/model_1000.pt \
        --num_envs 100 --out eval_terrain.json

The ``-Play`` configuration of the rough task (hard contact, forward commands, every level at startup); the
curriculum is off so each env keeps its (level, type) for the evaluated episode (``rl.evaluation.evaluate``).
"""

from __future__ import annotations

import argparse
import json
import os

import numpy as np
import torch
from policy_env import add_policy_arguments, make_policy_env

from isaaclab_diffsim.rl.evaluation import evaluate


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_policy_arguments(p, contact_models="hard", num_envs=100)
    p.set_defaults(task="DiffSim-Velocity-Rough-AnymalC-Direct-Play")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()

    def configure(env_cfg):
        env_cfg.seed = args.seed
        env_cfg.terrain.curriculum = False

    env, policy, _ = make_policy_env(args, configure)
    env.set_contact_model(args.contact_models.split(",")[0])
    torch.manual_seed(args.seed)
    env.reset(seed=args.seed)
    levels, types = env.terrain_level.cpu().numpy(), env.terrain_levels.types.cpu().numpy()
    result = evaluate(env, policy, env.num_envs, progress=False)
    print(f"[evaluate] all: {result.summary()}", flush=True)
    names = list(env.cfg.terrain.generator.sub_terrains)
    columns = _column_sub_terrains(env.cfg.terrain.generator)
    rows = {}
    for key, mask in [
        *((f"type {names[s]}", np.isin(types, np.nonzero(columns == s)[0])) for s in np.unique(columns)),
        *((f"level {lv}", levels == lv) for lv in np.unique(levels)),
    ]:
        rows[key] = {
            "episodes": int(mask.sum()),
            "tracking_error": float(result.tracking_errors[mask].mean()),
            "fall_rate": float(result.falls[mask].mean()),
        }
        print(f"[evaluate] {key:28s} {rows[key]}", flush=True)
    out = {"checkpoint": os.path.abspath(args.checkpoint), "summary": result.summary(), "groups": rows}
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(out, f, indent=1)


def _column_sub_terrains(gen) -> np.ndarray:
    """The sub-terrain index of each column: Isaac Lab's curriculum layout (proportions over the columns)."""
    proportions = np.array([c.proportion for c in gen.sub_terrains.values()], dtype=float)
    cumulative = np.cumsum(proportions / proportions.sum())
    return np.array([int(np.min(np.nonzero(c / gen.num_cols + 0.001 < cumulative)[0])) for c in range(gen.num_cols)])


if __name__ == "__main__":
    main()
