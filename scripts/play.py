"""Evaluate a trained checkpoint (SHAC or PPO) for M episodes under a chosen contact model.

    .venv/bin/python scripts/play.py --algo shac --checkpoint logs/shac/.../model_200.pt \
        --contact_model hard --episodes 64 --plot joints.png

Prints mean return +- std, mean linear-velocity tracking error and fall rate over the first episode of each env
(see :func:`~isaaclab_diffsim.rl.evaluation.evaluate`). Uses the task's -Play
configuration (forward-velocity commands in [-1, 1] m/s, no pushes); overrides as in train.py.
"""

from __future__ import annotations

import argparse
import os

import gymnasium as gym
import torch

from isaaclab_diffsim.rl.evaluation import evaluate
from isaaclab_diffsim.rl.policy_loading import load_policy
from isaaclab_diffsim.utils.cli import resolve_task_cfgs

ENTRY = {"shac": "shac_cfg_entry_point", "ppo": "rsl_rl_cfg_entry_point"}


def joint_rows_by_leg(joint_names: list[str]) -> dict[str, list[tuple[int, str]]]:
    """Columns of the joint trace grouped by leg: {"LF": [(column, "HAA"), ...], ...}, in the model's joint order
    (``env.info["joint_names"]``, e.g. ``LF_HAA``; the legs' order differs between asset sources)."""
    legs: dict[str, list[tuple[int, str]]] = {}
    for col, name in enumerate(joint_names):
        leg, _, joint = name.partition("_")
        legs.setdefault(leg, []).append((col, joint))
    return legs


def plot_joints(trace, joint_names, step_dt, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    legs = joint_rows_by_leg(joint_names)
    t = [i * step_dt for i in range(len(trace))]
    fig, axes = plt.subplots(len(legs), 1, sharex=True, figsize=(9, 8))
    for ax, (leg, joints) in zip(axes, legs.items()):
        for col, joint in joints:
            ax.plot(t, trace[:, col], label=joint)
        ax.set_ylabel(f"{leg} [rad]")
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
    parser.add_argument("--num_envs", type=int, default=None, help="default: --episodes (one round of episodes)")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--plot", default=None, help="PNG path for a joint-trajectory plot")
    parser.add_argument("overrides", nargs="*")
    args = parser.parse_args()
    torch.set_num_threads(1)
    env_cfg, agent_cfg = resolve_task_cfgs(args.task, ENTRY[args.algo], args.overrides)
    env_cfg.device = agent_cfg.device = args.device
    env_cfg.num_envs = args.episodes if args.num_envs is None else args.num_envs
    env_cfg.contact_model = args.contact_model
    env = gym.make(args.task, cfg=env_cfg).unwrapped
    policy = load_policy(args.algo, env, agent_cfg, args.checkpoint, args.device)
    result = evaluate(env, policy, args.episodes)
    print(f"[play] {args.algo} {os.path.basename(args.checkpoint)}, {args.contact_model} contact: {result.summary()}")
    if args.plot:
        plot_joints(result.joint_trace, env.info["joint_names"], env.step_dt, args.plot)


if __name__ == "__main__":
    main()
