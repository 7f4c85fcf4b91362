"""Evaluate a trained checkpoint (SHAC or PPO) for M episodes under a chosen contact model.

    .venv/bin/python scripts/play.py --algo shac --checkpoint logs/shac/.../model_200.pt \
        --contact_model hard --episodes 64 --plot joints.png

Prints mean return +- std, mean linear-velocity tracking error and fall rate. Uses the task's -Play
configuration (forward-velocity commands in [-1, 1] m/s, no pushes); overrides as in train.py.
"""

from __future__ import annotations

import argparse
import os

import gymnasium as gym
import torch

from isaaclab_diffsim.rl.evaluation import evaluate
from isaaclab_diffsim.rl.policy_loading import load_policy
from isaaclab_diffsim.utils.cli import apply_overrides, load_task_cfgs

ENTRY = {"shac": "shac_cfg_entry_point", "ppo": "rsl_rl_cfg_entry_point"}


def plot_joints(trace, step_dt, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    t = [i * step_dt for i in range(len(trace))]
    fig, axes = plt.subplots(4, 1, sharex=True, figsize=(9, 8))
    for leg, ax in enumerate(axes):
        for j, name in enumerate(("HAA", "HFE", "KFE")):
            ax.plot(t, trace[:, 3 * leg + j], label=name)
        ax.set_ylabel(("LF", "RF", "LH", "RH")[leg] + " [rad]")
        ax.legend(loc="upper right", fontsize=7)
    axes[-1].set_xlabel("time [s]")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    print(f"[play] joint trajectories of env 0 written to {path}")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--task", default="DiffSim-Velocity-Flat-AnymalC-Direct-Play")
    parser.add_argument("--algo", choices=sorted(ENTRY), default="shac")
    parser.add_argument("--checkpoint", required=True)
    parser.add_argument("--contact_model", choices=("hard", "smoothed", "soft"), default="hard")
    parser.add_argument("--episodes", type=int, default=64)
    parser.add_argument("--num_envs", type=int, default=64)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--plot", default=None, help="PNG path for a joint-trajectory plot")
    parser.add_argument("overrides", nargs="*")
    args = parser.parse_args()
    torch.set_num_threads(1)
    env_cfg, agent_cfg = load_task_cfgs(args.task, ENTRY[args.algo])
    env_cfg.device = agent_cfg.device = args.device
    env_cfg.num_envs = args.num_envs
    env_cfg.contact_model = args.contact_model
    apply_overrides(args.overrides, env=env_cfg, agent=agent_cfg)
    env = gym.make(args.task, cfg=env_cfg).unwrapped
    try:
        policy = load_policy(args.algo, env, agent_cfg, args.checkpoint, args.device)
    except FileNotFoundError as err:
        raise SystemExit(str(err)) from err
    result = evaluate(env, policy, args.episodes)
    print(f"[play] {args.algo} {os.path.basename(args.checkpoint)}, {args.contact_model} contact: {result.summary()}")
    if args.plot:
        plot_joints(result.joint_trace, env.step_dt, args.plot)


if __name__ == "__main__":
    main()
