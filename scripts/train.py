"""Train a policy on a DiffSim task with SHAC (analytic gradients) or rsl_rl's PPO, export it, evaluate it.

    .venv/bin/python scripts/train.py --task DiffSim-Velocity-Flat-AnymalC-Direct --algo shac \
        --num_envs 64 --max_iterations 200 agent.horizon=12 env.contact_model=smoothed

Overrides are ``env.<field>=value`` / ``agent.<field>=value`` (nested fields with dots). After training the
policy is exported (ONNX + TorchScript) into ``<log_dir>/exported`` and, unless ``--eval_episodes 0``,
evaluated in hard contact with forward-velocity commands (the play configuration).
"""

from __future__ import annotations

import argparse
import importlib.metadata
import os
import time

import gymnasium as gym
import torch

from isaaclab_diffsim.utils.cli import apply_overrides, load_task_cfgs
from isaaclab_diffsim.utils.run_dir import new_run_dir

ENTRY = {"shac": "shac_cfg_entry_point", "ppo": "rsl_rl_cfg_entry_point"}


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--task", default="DiffSim-Velocity-Flat-AnymalC-Direct")
    parser.add_argument("--algo", choices=sorted(ENTRY), default="shac")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--num_envs", type=int, default=None)
    parser.add_argument("--max_iterations", type=int, default=None)
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--resume", default=None, help="checkpoint file to resume from")
    parser.add_argument("--log_root", default="logs")
    parser.add_argument("--log_dir", default=None, help="exact run directory (default: <log_root>/<algo>/<experiment>/<time>)")
    parser.add_argument("--eval_episodes", type=int, default=64)
    parser.add_argument("--torch_threads", type=int, default=1, help="Warp's CPU kernels run on one thread")
    parser.add_argument("overrides", nargs="*", help="env.<field>=value / agent.<field>=value")
    return parser.parse_args()


def configure(args):
    env_cfg, agent_cfg = load_task_cfgs(args.task, ENTRY[args.algo])
    env_cfg.device = agent_cfg.device = args.device
    if args.num_envs is not None:
        env_cfg.num_envs = args.num_envs
    if args.max_iterations is not None:
        agent_cfg.max_iterations = args.max_iterations
    if args.seed is not None:
        env_cfg.seed = agent_cfg.seed = args.seed
    apply_overrides(args.overrides, env=env_cfg, agent=agent_cfg)
    env_cfg.validate_values()
    return env_cfg, agent_cfg


def train_shac(env, agent_cfg, log_dir, args):
    from isaaclab_diffsim.rl.shac import ShacRunner

    runner = ShacRunner(env, agent_cfg, log_dir=log_dir, device=args.device)
    if args.resume:
        runner.load(args.resume)
        print(f"[train] resumed from {args.resume}")
    runner.learn(agent_cfg.max_iterations)
    runner.export(os.path.join(log_dir, "exported"))
    return runner.get_inference_policy()


def train_ppo(env, agent_cfg, log_dir, args):
    from isaaclab.utils import to_dict
    from isaaclab_rl.rsl_rl import handle_deprecated_rsl_rl_cfg
    from rsl_rl.runners import OnPolicyRunner

    from isaaclab_diffsim.envs import DiffEnvRslRlWrapper

    agent_cfg = handle_deprecated_rsl_rl_cfg(agent_cfg, importlib.metadata.version("rsl-rl-lib"))
    runner = OnPolicyRunner(DiffEnvRslRlWrapper(env), to_dict(agent_cfg), log_dir=log_dir, device=args.device)
    runner.logger.git_status_repos = []
    if args.resume:
        runner.load(args.resume)
        print(f"[train] resumed from {args.resume}")
    runner.learn(num_learning_iterations=agent_cfg.max_iterations, init_at_random_ep_len=True)
    export_dir = os.path.join(log_dir, "exported")
    runner.export_policy_to_jit(export_dir)
    runner.export_policy_to_onnx(export_dir)
    policy = runner.get_inference_policy(device=args.device)
    return lambda obs: policy({"policy": obs})


def main():
    args = parse_args()
    env_cfg, agent_cfg = configure(args)
    torch.manual_seed(env_cfg.seed)
    torch.set_num_threads(args.torch_threads)
    if args.log_dir:
        log_dir = os.path.abspath(args.log_dir)
        os.makedirs(log_dir, exist_ok=True)
    else:
        log_dir = new_run_dir(os.path.join(args.log_root, args.algo, agent_cfg.experiment_name))
    print(f"[train] task {args.task}, algo {args.algo}, {env_cfg.num_envs} envs, contact {env_cfg.contact_model}, "
          f"{agent_cfg.max_iterations} iterations, logs in {log_dir}", flush=True)
    env = gym.make(args.task, cfg=env_cfg).unwrapped
    t0 = time.time()
    train = train_shac if args.algo == "shac" else train_ppo
    policy = train(env, agent_cfg, log_dir, args)
    print(f"[train] done in {time.time() - t0:.0f} s; exported policy to {os.path.join(log_dir, 'exported')}", flush=True)
    if args.eval_episodes > 0:
        from isaaclab_diffsim.rl.evaluation import evaluate

        env.set_contact_model("hard")
        env.cfg.commands.lin_vel_y = (0.0, 0.0)
        env.cfg.commands.ang_vel_z = (0.0, 0.0)
        env.cfg.events.push_velocity = 0.0
        result = evaluate(env, policy, args.eval_episodes)
        print(f"[eval] hard contact, forward commands in {env.cfg.commands.lin_vel_x} m/s: {result.summary()}", flush=True)


if __name__ == "__main__":
    main()
