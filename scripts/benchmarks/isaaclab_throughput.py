"""Env-steps/s of Isaac Lab's manager-based DiffSim-Velocity-Flat-AnymalC on the DiffSim backend against the same
task, same asset and same env counts on Isaac Lab's ``newton_mjwarp`` preset, side by side, with the ratio.

    .venv/bin/python scripts/benchmarks/isaaclab_throughput.py --envs 16,64,256 --device cpu

Each (preset, env count) runs in its own process (one Isaac Lab simulation context per process). Actions are
uniform in [-1, 1]; the figure is env-steps (policy steps x envs) per wall second over ``--steps`` steps after
``--warmup`` steps (kernel compilation excluded), resets included as they happen.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

PRESETS = ("diffsim_smoothed", "diffsim_hard", "newton_mjwarp")


def run_one(preset: str, num_envs: int, device: str, steps: int, warmup: int) -> dict:
    """Build the task with ``physics=<preset>`` and time it (runs in the child process)."""
    import gymnasium as gym
    import torch
    from isaaclab_tasks.utils.hydra import resolve_presets

    from isaaclab_diffsim.utils.cli import load_task_cfgs

    env_cfg, _ = load_task_cfgs("DiffSim-Velocity-Flat-AnymalC", "rsl_rl_cfg_entry_point")
    env_cfg = resolve_presets(env_cfg, (preset,))
    env_cfg.scene.num_envs = num_envs
    env_cfg.sim.device = device
    env = gym.make("DiffSim-Velocity-Flat-AnymalC", cfg=env_cfg).unwrapped
    try:
        env.reset()
        gen = torch.Generator(device=device).manual_seed(0)
        shape = (num_envs, env.action_manager.total_action_dim)

        def act():
            return 2.0 * torch.rand(shape, generator=gen, device=device) - 1.0

        with torch.inference_mode():
            for _ in range(warmup):
                env.step(act())
            t0 = time.perf_counter()
            resets = 0
            for _ in range(steps):
                _, _, term, trunc, _ = env.step(act())
                resets += int((term | trunc).sum())
            wall = time.perf_counter() - t0
    finally:
        env.close()
    return {"preset": preset, "num_envs": num_envs, "env_steps_per_s": steps * num_envs / wall, "resets": resets}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--envs", default="16,64,256")
    parser.add_argument("--presets", default=",".join(PRESETS))
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--child", nargs=2, metavar=("PRESET", "NUM_ENVS"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        result = run_one(args.child[0], int(args.child[1]), args.device, args.steps, args.warmup)
        print("RESULT " + json.dumps(result), flush=True)
        return

    presets = [p for p in args.presets.split(",") if p]
    unknown = set(presets) - set(PRESETS)
    if unknown:
        raise SystemExit(f"unknown presets {sorted(unknown)}; choose from {PRESETS}")
    counts = [int(n) for n in args.envs.split(",")]
    table: dict[tuple[str, int], float] = {}
    for n in counts:
        for preset in presets:
            cmd = [sys.executable, __file__, "--child", preset, str(n), "--device", args.device,
                   "--steps", str(args.steps), "--warmup", str(args.warmup)]  # fmt: skip
            print(f"[bench] {preset} x {n} envs ...", flush=True)
            proc = subprocess.run(cmd, capture_output=True, text=True, env=os.environ.copy())
            lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
            if proc.returncode != 0 or not lines:
                sys.stderr.write(proc.stdout[-3000:] + proc.stderr[-3000:])
                raise SystemExit(f"benchmark child {preset} x {n} failed (exit {proc.returncode})")
            result = json.loads(lines[-1][len("RESULT "):])
            table[(preset, n)] = result["env_steps_per_s"]
            print(f"[bench] {preset} x {n} envs: {result['env_steps_per_s']:.1f} env-steps/s "
                  f"({result['resets']} resets)", flush=True)  # fmt: skip

    peer = "newton_mjwarp"
    print(f"\nDiffSim-Velocity-Flat-AnymalC, device {args.device}, {args.steps} steps after {args.warmup} warm-up "
          "(env-steps/s)")  # fmt: skip
    header = f"{'envs':>6} " + " ".join(f"{p:>18}" for p in presets)
    if peer in presets:
        header += " " + " ".join(f"{p + '/' + peer:>34}" for p in presets if p != peer)
    print(header)
    for n in counts:
        row = f"{n:>6} " + " ".join(f"{table[(p, n)]:>18.1f}" for p in presets)
        if peer in presets:
            row += " " + " ".join(f"{table[(p, n)] / table[(peer, n)]:>34.2f}" for p in presets if p != peer)
        print(row)


if __name__ == "__main__":
    main()
