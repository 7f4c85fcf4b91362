"""Cost of recording a rollout (USD) against the rollout itself, measured in the same process step by step.

    .venv/bin/python scripts/benchmarks/recording_overhead.py --checkpoint RUN/model_1000.pt --num_envs 16 --steps 1000

Per policy step: the time of policy + ``env.step`` and the time of ``RolloutRecorder.add_step`` (forward kinematics,
the solver's contact report, USD writes for ``--record_envs`` robots), each summed over the run, and the time of
``save``. Interleaving the two in one loop keeps the comparison fair on a shared machine.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

import gymnasium as gym
import torch

from isaaclab_diffsim.recording import RolloutRecorder
from isaaclab_diffsim.rl.shac import ShacRunner
from isaaclab_diffsim.tasks.task_cfgs import load_task_cfgs


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--task", default="DiffSim-Velocity-Flat-AnymalC-Direct-Play")
    parser.add_argument("--checkpoint", required=True)
    parser.add_argument("--num_envs", type=int, default=16)
    parser.add_argument("--record_envs", type=int, default=4)
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--contact_model", default="hard")
    args = parser.parse_args()
    torch.set_num_threads(1)
    env_cfg, agent_cfg = load_task_cfgs(args.task, "shac_cfg_entry_point")
    env_cfg.num_envs, env_cfg.solver_cfg.contact_model = args.num_envs, args.contact_model
    env = gym.make(args.task, cfg=env_cfg).unwrapped
    runner = ShacRunner(env, agent_cfg, log_dir=None, device="cpu")
    runner.load(args.checkpoint, load_optimizer=False, restore_rng=False, restore_env=False)
    policy = runner.get_inference_policy()
    path = os.path.join(tempfile.mkdtemp(), "overhead.usd")
    recorder = RolloutRecorder(env, path, args.record_envs)
    obs = env.reset()
    t_step = t_rec = 0.0
    with torch.no_grad():
        for _ in range(args.steps):
            t0 = time.perf_counter()
            obs, *_ = env.step(policy(obs))
            t1 = time.perf_counter()
            recorder.add_step()
            t2 = time.perf_counter()
            t_step, t_rec = t_step + t1 - t0, t_rec + t2 - t1
    t0 = time.perf_counter()
    recorder.save()
    t_save = time.perf_counter() - t0
    size = os.path.getsize(path) / 1e6
    print(
        f"[overhead] {args.steps} steps, {args.num_envs} envs, {args.record_envs} recorded: policy+env.step "
        f"{1e3 * t_step / args.steps:.2f} ms/step, add_step {1e3 * t_rec / args.steps:.2f} ms/step "
        f"({100 * t_rec / t_step:.0f} %), save {t_save:.2f} s, file {size:.1f} MB"
    )
    env.close()


if __name__ == "__main__":
    main()
