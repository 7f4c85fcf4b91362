"""How a rough-task checkpoint falls, per terrain type: the base's tilt, the command and the feet before each fall.

    .venv/bin/python scripts/experiments/fall_causes.py --algo shac --checkpoint RUN/model_500.pt \
        --num_envs 120 --seed 71 --out fall_causes.json

The episodes of ``evaluate_terrain.py`` (same task, terrain, seed and resets, so the same falls). For each fall, from
the last step before it: whether the base rolled (tilted more about its x axis than its y axis), whether the command
was sideways (|vy| > 0.5 m/s) or backwards (vx < -0.3 m/s), and whether a foot hung in the 0.5 s before it: in the
air for more than ``--hang_air_s`` and more than ``--hang_height`` above the ground below it. The envs that did not
fall give the base rate: the share of their 0.5 s windows with a hanging foot.
"""

from __future__ import annotations

import argparse
import json
import os

import numpy as np
import torch
from policy_env import add_policy_arguments, make_policy_env

from isaaclab_diffsim.experiments.fall_causes import fall_causes
from isaaclab_diffsim.rl.evaluation import evaluate
from isaaclab_diffsim.tasks.direct.locomotion.velocity.mdp import base_frame
from isaaclab_diffsim.terrains.grid_groups import column_sub_terrains


class StepRecorder:
    """After every ``env.step``: projected gravity, commands, hanging feet, and the step that ended each env's
    first episode."""

    def __init__(self, env, hang_air_s: float, hang_height: float):
        self.env, self.hang_air_s, self.hang_height = env, hang_air_s, hang_height
        self.gravity, self.commands, self.hanging = [], [], []
        self.end_step = torch.full((env.num_envs,), -1, dtype=torch.long)

    def __call__(self):
        env, t = self.env, len(self.gravity)
        self.gravity.append(base_frame(env.q, env.qd)[2].cpu().numpy())  # projected gravity
        self.commands.append(env.commands[:, :3].cpu().numpy().copy())
        hang = (env.feet_air_time > self.hang_air_s) & (env.foot_heights(env.body_q) > self.hang_height)
        self.hanging.append(hang.any(1).cpu().numpy())
        done = (env.reset_terminated | env.reset_time_outs).cpu() & (self.end_step < 0)
        self.end_step[done] = t


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_policy_arguments(p, contact_models="hard", num_envs=120)
    p.set_defaults(task="DiffSim-Velocity-Rough-AnymalC-Direct-Play")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--hang_air_s", type=float, default=0.3)
    p.add_argument("--hang_height", type=float, default=0.05)
    p.add_argument("--window_s", type=float, default=0.5)
    args = p.parse_args()
    if not args.window_s > 0:
        raise SystemExit(f"--window_s must be > 0 [s], got {args.window_s}")
    if args.hang_air_s < 0:
        raise SystemExit(f"--hang_air_s must be >= 0 [s], got {args.hang_air_s}")

    def configure(env_cfg):
        if getattr(env_cfg, "terrain", None) is None:
            raise SystemExit(f"{args.task} has no generated terrain (env.terrain): fall_causes.py needs a rough task")
        env_cfg.seed = args.seed

    env, policy, _ = make_policy_env(args, configure)
    env.set_contact_model(args.contact_models.split(",")[0])
    torch.manual_seed(args.seed)
    env.reset(seed=args.seed)
    gen = env.cfg.terrain.generator
    names, sub = list(gen.sub_terrains), column_sub_terrains(gen)
    types = np.array([names[sub[c]] for c in env.terrain_levels.types.cpu().numpy()])
    with torch.no_grad():
        rec = StepRecorder(env, args.hang_air_s, args.hang_height)
        result = evaluate(env, policy, env.num_envs, progress=False, step_callback=rec)
    groups = {"all": np.ones(env.num_envs, dtype=bool)}
    groups.update({f"type {name}": types == name for name in names if (types == name).any()})
    rows = fall_causes(
        groups,
        np.asarray(result.falls, dtype=bool),
        rec.end_step.numpy(),
        np.stack(rec.gravity),
        np.stack(rec.commands),
        np.stack(rec.hanging),
        window=max(int(round(args.window_s / env.step_dt)), 1),
    )
    for key, row in rows.items():
        print(f"[fall_causes] {key:28s} {row}", flush=True)
    out = {"checkpoint": os.path.abspath(args.checkpoint), "seed": args.seed, "groups": rows}
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
