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

import gymnasium as gym
import numpy as np
import torch

from isaaclab_diffsim.rl.policy_loading import ALGOS, load_policy
from isaaclab_diffsim.solver import CONTACT_MODELS
from isaaclab_diffsim.utils.cli import apply_overrides, load_task_cfgs

ENTRY = {"shac": "shac_cfg_entry_point", "ppo": "rsl_rl_cfg_entry_point"}


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
    p.add_argument("--task", default="DiffSim-Velocity-Flat-AnymalC-Direct-Play")
    p.add_argument("--algo", choices=ALGOS, required=True)
    p.add_argument("--checkpoint", required=True)
    p.add_argument("--contact_models", default="smoothed,hard")
    p.add_argument("--command", type=float, default=0.6, help="forward velocity command [m/s]")
    p.add_argument("--num_envs", type=int, default=8)
    p.add_argument("--reset_seed", type=int, default=0)
    p.add_argument("--duration", type=float, default=10.0, help="[s]")
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
    env_cfg.commands.lin_vel_x = (args.command, args.command)
    env_cfg.commands.resampling_time_s = 2.0 * args.duration
    env_cfg.events.push_velocity = 0.0
    apply_overrides(args.overrides, env=env_cfg, agent=agent_cfg)
    if env_cfg.episode_length_s < args.duration:
        raise SystemExit(f"--duration {args.duration} s is longer than an episode ({env_cfg.episode_length_s} s)")
    env = gym.make(args.task, cfg=env_cfg).unwrapped
    policy = load_policy(args.algo, env, agent_cfg, args.checkpoint, args.device)
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
        args.out, models=np.array(models), joint_names=np.array(env.info["joint_names"]), dt=env.step_dt,
        gait_period=env_cfg.gait.period_s, command=args.command,
        **{k: np.array(v) for k, v in out.items()},
    )  # fmt: skip
    print(f"[gait] wrote {args.out}", flush=True)


if __name__ == "__main__":
    main()
