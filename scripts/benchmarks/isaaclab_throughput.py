"""Env-steps/s of Isaac Lab's manager-based DiffSim-Velocity-Flat-AnymalC (or ``--task``, e.g. the rough
DiffSim-Velocity-Rough-AnymalC) on the DiffSim backend against the same task, same asset and same env counts on
Isaac Lab's ``newton_mjwarp`` preset, side by side, with the ratio.

    .venv/bin/python scripts/benchmarks/isaaclab_throughput.py --envs 16,64,256 --device cpu
    .venv/bin/python scripts/benchmarks/isaaclab_throughput.py --task DiffSim-Velocity-Rough-AnymalC --envs 64

Each (preset, env count) runs in its own process (one Isaac Lab simulation context per process). Actions are
uniform in [-1, 1]; the figure is env-steps (policy steps x envs) per wall second over ``--steps`` steps after
``--warmup`` steps (kernel compilation excluded), resets included as they happen.

After the timed steps, each child times the stages of ``--steps`` more env steps (perf_counter around each, the
device synchronized): the solver (its launches or captured-graph replay), the rest of the physics step (the
NewtonManager step around the solver: contact reporting and sensors, state swaps, the simulation context), and
Isaac Lab's own parts (action, scene write/update, MDP managers, resets). ``--profile`` adds the time per Warp
kernel and the top torch ops.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

PRESETS = ("diffsim_smoothed", "diffsim_hard", "newton_mjwarp")
TASK = "DiffSim-Velocity-Flat-AnymalC"


def run_one(
    preset: str, num_envs: int, device: str, steps: int, warmup: int, profile: bool = False, task: str = TASK
) -> dict:
    """Build the task with ``physics=<preset>`` and time it (runs in the child process)."""
    import gymnasium as gym
    import torch
    from isaaclab_tasks.utils.hydra import resolve_presets

    from isaaclab_diffsim.tasks.task_cfgs import load_task_cfgs

    env_cfg, _ = load_task_cfgs(task, "rsl_rl_cfg_entry_point")
    env_cfg = resolve_presets(env_cfg, (preset,))
    env_cfg.scene.num_envs = num_envs
    env_cfg.sim.device = device
    env = gym.make(task, cfg=env_cfg).unwrapped
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
            breakdown = stage_breakdown(env, act, steps, device, profile)
            breakdown += graph_ab(env, act, num_envs)
    finally:
        env.close()
    return {
        "preset": preset,
        "num_envs": num_envs,
        "env_steps_per_s": steps * num_envs / wall,
        "resets": resets,
        "breakdown": breakdown,
    }


def stage_breakdown(env, act, steps: int, device: str, detail: bool) -> str:
    """Where ``steps`` env steps of the manager-based task spend their time (see the module doc)."""
    from step_profile import StageProfile, format_kernels, format_stages, format_torch_ops, kernel_launches

    manager = env.sim.physics_manager
    manager = manager._resolve() if hasattr(manager, "_resolve") else manager  # Isaac Lab's lazily resolved class
    prof = StageProfile(device)
    prof.wrap(env, "step", "env.step")
    prof.wrap(manager._solver, "step", "solver")
    prof.wrap(__import__("warp"), "capture_launch", "solver")
    prof.wrap(manager, "_update_sensors", "sensors")
    prof.wrap(env.sim, "step", "sim.step")
    isaac = {
        "action manager (process + apply)": [
            (env.action_manager, "process_action"),
            (env.action_manager, "apply_action"),
        ],
        "scene write_data_to_sim": [(env.scene, "write_data_to_sim")],
        "scene update (asset data, sensors)": [(env.scene, "update")],
        "termination + reward managers": [(env.termination_manager, "compute"), (env.reward_manager, "compute")],
        "observation manager": [(env.observation_manager, "compute")],
        "command + event managers": [(env.command_manager, "compute"), (env.event_manager, "apply")],
        "resets (_reset_idx)": [(env, "_reset_idx")],
    }
    for name, targets in isaac.items():
        for owner, attr in targets:
            prof.wrap(owner, attr, name)
    try:
        for _ in range(steps):
            env.step(act())
    finally:
        prof.restore()
    s = prof.seconds  # exclusive times: a stage timed inside another (reset events, sensors) counts once
    rows = [
        ("solver, or CPU graph replay (+ actuators, sensors)", s.get("solver", 0.0)),
        ("contact report + Newton sensors (_update_sensors)", s.get("sensors", 0.0)),
        ("physics step glue (manager step, sim context)", s["sim.step"]),
    ]
    rows += [(f"Isaac Lab: {name}", s.get(name, 0.0)) for name in isaac]
    rows.append(("Isaac Lab: rest of env.step", s["env.step"]))
    total = sum(r[1] for r in rows)
    physics_steps = prof.calls["sim.step"] // steps
    out = [
        f"  {env.num_envs} envs, {physics_steps} physics steps per env step:",
        format_stages(rows, total, steps, "    "),
    ]
    if detail:
        with kernel_launches(device) as kernels:
            for _ in range(steps):
                env.step(act())
        out += ["  per Warp launch:", format_kernels(kernels, steps, top=20, indent="    ")]
        with torch_profiler() as tp:
            for _ in range(steps):
                env.step(act())
        out += ["  torch ops:", format_torch_ops(tp, steps, top=15, indent="    ")]
    return "\n".join(out)


def graph_ab(env, act, num_envs: int, block: int = 10, repeats: int = 7) -> str:
    """On DiffSim's manager: env-steps/s with the CPU graph on and off, alternating blocks (medians)."""
    import numpy as np
    from isaaclab.physics import PhysicsManager

    solver_cfg = getattr(PhysicsManager._cfg, "solver_cfg", None)
    if not hasattr(solver_cfg, "use_cpu_graph") or not str(env.device).startswith("cpu"):
        return ""
    times = {True: [], False: []}
    for _ in range(repeats):
        for mode in (True, False):
            solver_cfg.use_cpu_graph = mode
            t0 = time.perf_counter()
            for _ in range(block):
                env.step(act())
            times[mode].append(time.perf_counter() - t0)
    solver_cfg.use_cpu_graph = True
    on, off = (block * num_envs / float(np.median(times[m])) for m in (True, False))
    return (
        f"\n  physics step from the CPU graph vs eager, alternating {block}-step blocks (median of {repeats}): "
        f"{on:.0f} vs {off:.0f} env-steps/s ({on / off:.2f}x)"
    )


def torch_profiler():
    import torch

    return torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU])


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--task", default=TASK, help="a manager-based DiffSim task id (e.g. DiffSim-Velocity-Rough-AnymalC)"
    )
    parser.add_argument("--envs", default="16,64,256")
    parser.add_argument("--presets", default=",".join(PRESETS))
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--profile", action="store_true", help="add time per Warp kernel and the top torch ops")
    parser.add_argument(
        "--torch-threads",
        type=int,
        default=0,
        help="torch intra-op threads in each child (0: torch's default); on a busy 2-core machine "
        "1 avoids OpenMP waits in Isaac Lab's contact-sensor reductions",
    )
    parser.add_argument("--child", nargs=2, metavar=("PRESET", "NUM_ENVS"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        if args.torch_threads > 0:
            import torch

            torch.set_num_threads(args.torch_threads)
        result = run_one(
            args.child[0], int(args.child[1]), args.device, args.steps, args.warmup, args.profile, args.task
        )
        print("RESULT " + json.dumps(result), flush=True)
        return

    presets = [p for p in args.presets.split(",") if p]
    unknown = set(presets) - set(PRESETS)
    if unknown:
        raise SystemExit(f"unknown presets {sorted(unknown)}; choose from {PRESETS}")
    counts = [int(n) for n in args.envs.split(",")]
    table: dict[tuple[str, int], float] = {}
    breakdowns = []
    for n in counts:
        for preset in presets:
            cmd = [
                sys.executable,
                __file__,
                "--child",
                preset,
                str(n),
                "--device",
                args.device,
                "--steps",
                str(args.steps),
                "--warmup",
                str(args.warmup),
                "--torch-threads",
                str(args.torch_threads),
                "--task",
                args.task,
            ] + ["--profile"] * args.profile
            print(f"[bench] {preset} x {n} envs ...", flush=True)
            proc = subprocess.run(cmd, capture_output=True, text=True, env=os.environ.copy())
            lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
            if proc.returncode != 0 or not lines:
                sys.stderr.write(proc.stdout[-3000:] + proc.stderr[-3000:])
                raise SystemExit(f"benchmark child {preset} x {n} failed (exit {proc.returncode})")
            result = json.loads(lines[-1][len("RESULT ") :])
            table[(preset, n)] = result["env_steps_per_s"]
            breakdowns.append(f"{preset}:\n{result['breakdown']}")
            print(
                f"[bench] {preset} x {n} envs: {result['env_steps_per_s']:.1f} env-steps/s ({result['resets']} resets)",
                flush=True,
            )

    peer = "newton_mjwarp"
    print(f"\n{args.task}, device {args.device}, {args.steps} steps after {args.warmup} warm-up (env-steps/s)")
    header = f"{'envs':>6} " + " ".join(f"{p:>18}" for p in presets)
    if peer in presets:
        header += " " + " ".join(f"{p + '/' + peer:>34}" for p in presets if p != peer)
    print(header)
    for n in counts:
        row = f"{n:>6} " + " ".join(f"{table[(p, n)]:>18.1f}" for p in presets)
        if peer in presets:
            row += " " + " ".join(f"{table[(p, n)] / table[(peer, n)]:>34.2f}" for p in presets if p != peer)
        print(row)
    print("\nWhere one env step's time goes (perf_counter around each stage, device synchronized):")
    print("\n".join(breakdowns))


if __name__ == "__main__":
    main()
