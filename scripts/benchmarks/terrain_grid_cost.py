"""What a rough-terrain grid costs the differentiable rough task: triangles, generation and rasterisation time, env
build time and memory, and the CPU time of a policy step, grid against grid in one run.

    .venv/bin/python scripts/benchmarks/terrain_grid_cost.py [--grids 5x10,10x20] [--envs 1024] [--steps 20]

Each grid is measured in its own process (peak resident memory is per process): Isaac Lab's rough terrain generator
on ``rows x cols`` sub-terrains with seed 1, its heightfield at the task's resolution, then
``DiffSim-Velocity-Rough-AnymalC-Direct`` with ``--envs`` envs on that grid and ``--steps`` zero-action policy steps
after 5 warm-up steps. Times are process CPU seconds (Warp's CPU kernels run in the calling thread), so they hold on a
shared machine; the last column is the ratio to the first grid.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

TASK = "DiffSim-Velocity-Rough-AnymalC-Direct"


def measure(rows: int, cols: int, envs: int, steps: int) -> dict:
    """One grid's figures (run in a fresh process)."""
    import resource
    import time

    import gymnasium as gym
    import torch

    import isaaclab_diffsim.tasks  # noqa: F401
    from isaaclab_diffsim.tasks.task_cfgs import load_task_cfgs
    from isaaclab_diffsim.terrains import generate_terrain, rough_terrains_cfg
    from isaaclab_diffsim.terrains.heightmap import HeightMap

    torch.set_num_threads(1)
    cfg, _ = load_task_cfgs(TASK, "shac_cfg_entry_point")
    gen = rough_terrains_cfg(rows, cols)
    c0 = time.process_time()
    terrain = generate_terrain(gen, 1, True)
    c1 = time.process_time()
    hm = HeightMap.from_mesh(terrain.vertices, terrain.triangles, cfg.terrain.heightmap_resolution, "cpu")
    c2 = time.process_time()
    cells, triangles = hm.nx * hm.ny, len(terrain.triangles)
    del hm, terrain
    cfg.num_envs, cfg.seed = envs, 1
    cfg.terrain.generator.num_rows, cfg.terrain.generator.num_cols = rows, cols
    w0, c3 = time.perf_counter(), time.process_time()
    env = gym.make(TASK, cfg=cfg).unwrapped
    build_wall, build_cpu = time.perf_counter() - w0, time.process_time() - c3
    env.reset()
    actions = torch.zeros(envs, env.cfg.action_space)
    with torch.no_grad():
        for _ in range(5):
            env.step(actions)
        c4 = time.process_time()
        for _ in range(steps):
            env.step(actions)
        step_cpu = (time.process_time() - c4) / steps
    return {
        "grid": f"{rows}x{cols}",
        "triangles": int(triangles),
        "generation_cpu_s": c1 - c0,
        "heightfield_cells": cells,
        "heightfield_cpu_s": c2 - c1,
        "build_wall_s": build_wall,
        "build_cpu_s": build_cpu,
        "peak_rss_gb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6,
        "step_cpu_ms": 1e3 * step_cpu,
    }


def parse_grid(text: str) -> tuple[int, int]:
    try:
        rows, cols = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"a grid is ROWSxCOLS, got {text!r}") from None
    if rows < 1 or cols < 1:
        raise argparse.ArgumentTypeError(f"a grid needs at least one row and column, got {text!r}")
    return rows, cols


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--grids", default="5x10,10x20", help="comma-separated ROWSxCOLS")
    p.add_argument("--envs", type=int, default=1024)
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--_one", default=None, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args._one is not None:
        rows, cols = parse_grid(args._one)
        print(json.dumps(measure(rows, cols, args.envs, args.steps)))
        return
    grids = [parse_grid(g) for g in args.grids.split(",")]
    rows_out = []
    for rows, cols in grids:
        cmd = [sys.executable, os.path.abspath(__file__), f"--_one={rows}x{cols}", f"--envs={args.envs}"]
        out = subprocess.run(cmd + [f"--steps={args.steps}"], capture_output=True, text=True)
        if out.returncode != 0:
            sys.exit(f"grid {rows}x{cols} failed:\n{out.stderr[-2000:]}")
        rows_out.append(json.loads(out.stdout.strip().splitlines()[-1]))
        print(f"[terrain_grid_cost] {rows}x{cols} done", flush=True)
    first = rows_out[0]
    print(f"\n{args.envs} envs, seed 1; CPU times of this process; ratio: step CPU against {first['grid']}")
    print(
        "| grid | triangles | generation [CPU s] | heightfield [cells, CPU s] | env build [s, CPU s] | peak RSS [GB] "
        "| policy step [CPU ms] | ratio |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in rows_out:
        print(
            f"| {r['grid']} | {r['triangles']:,} | {r['generation_cpu_s']:.1f} | {r['heightfield_cells'] / 1e6:.1f} M, "
            f"{r['heightfield_cpu_s']:.1f} | {r['build_wall_s']:.1f}, {r['build_cpu_s']:.1f} | {r['peak_rss_gb']:.2f} "
            f"| {r['step_cpu_ms']:.0f} | {r['step_cpu_ms'] / first['step_cpu_ms']:.2f} |"
        )


if __name__ == "__main__":
    main()
