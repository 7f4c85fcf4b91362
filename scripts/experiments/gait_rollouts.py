"""Roll one checkpoint out from the same initial states in one or more contact models; save joint and base traces.

    .venv/bin/python scripts/experiments/gait_rollouts.py --algo shac --checkpoint RUN/model_500.pt \
        --contact_models smoothed,hard --command 0.6 --num_envs 8 --duration 10 --out traces.npz

The play configuration of the task with a fixed forward command and no pushes. The initial state (after a reset
with ``--reset_seed``) is stored and restored for every contact model, so the rollouts differ only by the contact
model. Writes ``joint_pos`` (model, time, env, joint), ``base_pos`` (model, time, env, 3), ``fell`` (model, env:
the first step of a termination, -1 if none), the joint names and dt.
"""

from __future__ import annotations

import argparse
import os

import numpy as np
import torch
from policy_env import add_policy_arguments, contact_models, make_policy_env


@torch.no_grad()
def rollout(env, policy, initial: dict, steps: int):
    env.set_state(initial)
    obs = env.get_observations()
    joints, base, fell = [], [], np.full(env.num_envs, -1)
    for t in range(steps):
        obs, _, term, _, _ = env.step(policy(obs))
        joints.append(env.q[:, 7:].cpu().numpy().copy())
        base.append(env.q[:, :3].cpu().numpy().copy())
        newly = term.cpu().numpy() & (fell < 0)
        fell[newly] = t
    return np.array(joints), np.array(base), fell


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_policy_arguments(p, contact_models="smoothed,hard", num_envs=8)
    p.add_argument("--command", type=float, default=0.6, help="forward velocity command [m/s]")
    p.add_argument("--reset_seed", type=int, default=0)
    p.add_argument("--duration", type=float, default=10.0, help="[s]")
    args = p.parse_args()
    models = contact_models(args)

    def fixed_command(env_cfg):
        env_cfg.commands.lin_vel_x = (args.command, args.command)
        env_cfg.commands.resampling_time_s = 2.0 * args.duration
        env_cfg.events.push_velocity = 0.0
        if env_cfg.episode_length_s < args.duration:
            raise SystemExit(f"--duration {args.duration} s is longer than an episode ({env_cfg.episode_length_s} s)")

    env, policy, env_cfg = make_policy_env(args, fixed_command)
    env.reset(seed=args.reset_seed)
    initial = env.get_state()
    steps = int(round(args.duration / env.step_dt))
    out = {"joint_pos": [], "base_pos": [], "fell": []}
    for model in models:
        env.set_contact_model(model)
        j, b, f = rollout(env, policy, initial, steps)
        out["joint_pos"].append(j)
        out["base_pos"].append(b)
        out["fell"].append(f)
        print(f"[gait] {model}: {steps} steps, {int((f >= 0).sum())}/{args.num_envs} envs fell", flush=True)
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    np.savez(
        args.out,
        models=np.array(models),
        joint_names=np.array(env.layout.joint_names),
        dt=env.step_dt,
        gait_period=env_cfg.gait.period_s,
        command=args.command,
        **{k: np.array(v) for k, v in out.items()},
    )
    print(f"[gait] wrote {args.out}", flush=True)


if __name__ == "__main__":
    main()
