"""Env-steps/s of DiffSim-Velocity-Flat-AnymalC-Direct: forward only (no_grad) and forward+backward over a
horizon, printed beside the bare solver's figure for the same 4 substeps, so the env's own overhead shows.

    .venv/bin/python scripts/benchmarks/env_throughput.py --envs 64,256 --horizon 32 --asset-sources urdf,isaaclab

``--asset-sources`` compares models: our URDF builder and the model Isaac Lab's scene and physics manager build.

Every row is followed by where one forward env step's time goes (solver = the solver's substeps: its kernel
launches, or their captured-graph replay; bridge = DiffSimulator's glue around them: torch<->warp views, input
copies, output clones; MDP = the env's torch ops: targets, rewards, observations, resets, events) and the same
for the backward of a forward+backward step. ``--profile`` adds the time per Warp kernel and the top torch ops.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch
import warp as wp
from step_profile import StageProfile, format_kernels, format_stages, format_torch_ops, kernel_launches

from isaaclab_diffsim.tasks.direct.locomotion.velocity import DiffVelocityEnv, DiffVelocityEnvCfg


def timed(fn, min_seconds: float = 2.0) -> float:
    """Best wall time of fn() over repetitions lasting at least min_seconds in total (at least 2 runs)."""
    best, total, runs = float("inf"), 0.0, 0
    while total < min_seconds or runs < 2:
        t0 = time.perf_counter()
        fn()
        dt = time.perf_counter() - t0
        best, total, runs = min(best, dt), total + dt, runs + 1
    return best


def interleaved(fn, set_mode, repeats: int = 7) -> tuple[float, float]:
    """Median wall times of fn() with set_mode(True) and set_mode(False), alternating (drift hits both alike)."""
    times = {True: [], False: []}
    for _ in range(repeats):
        for mode in (True, False):
            set_mode(mode)
            t0 = time.perf_counter()
            fn()
            times[mode].append(time.perf_counter() - t0)
    set_mode(True)
    return float(np.median(times[True])), float(np.median(times[False]))


def bench(
    num_envs: int, horizon: int, contact_model: str, device: str, asset_source: str = "urdf", profile: bool = False
) -> dict:
    cfg = DiffVelocityEnvCfg(num_envs=num_envs, device=device, asset_source=asset_source)
    cfg.solver_cfg.contact_model = contact_model
    env = DiffVelocityEnv(cfg)
    try:
        return _bench(env, num_envs, horizon, device, profile)
    finally:
        env.close()


def stage_breakdown(env: DiffVelocityEnv, num_envs: int, horizon: int, device: str, detail: bool) -> str:
    """Time the stages of ``horizon`` forward env steps and of one forward+backward horizon (see the module doc)."""
    sim = env.sim
    prof = StageProfile(device)
    prof.wrap(env, "step", "env.step")
    prof.wrap(sim, "step", "DiffSimulator.step")
    prof.wrap(sim.solver, "step", "solver")
    prof.wrap(wp, "capture_launch", "solver")
    zeros = torch.zeros(num_envs, 12, device=device)
    try:
        env.reset()
        with torch.no_grad():
            env.step(zeros)  # a graph (if any) is captured outside the timed steps
            prof.reset()
            for _ in range(horizon):
                env.step(zeros)
        s = dict(prof.seconds)  # exclusive times
        rows = [
            ("solver (kernel launches / graph replay)", s.get("solver", 0.0)),
            ("bridge glue (views, copies, clones)", s["DiffSimulator.step"]),
            ("env MDP torch ops (targets, rewards, obs, resets)", s["env.step"]),
        ]
        out = [f"  forward env step, {num_envs} envs:", format_stages(rows, sum(r[1] for r in rows), horizon, "    ")]
        env.detach()
        prof.reset()
        actions = torch.zeros(horizon, num_envs, 12, device=device, requires_grad=True)
        prof.sync()
        t0 = time.perf_counter()
        total = sum(env.step(actions[t])[1].sum() for t in range(horizon))
        prof.sync()
        t1 = time.perf_counter()
        total.backward()
        prof.sync()
        t2 = time.perf_counter()
        s = dict(prof.seconds)
        rows = [
            ("forward: solver with tape", s.get("solver", 0.0)),
            ("forward: bridge glue (tape, states, views)", s["DiffSimulator.step"]),
            ("forward: env MDP torch ops", (t1 - t0) - s.get("solver", 0.0) - s["DiffSimulator.step"]),
            ("backward (tape replays + torch autograd)", t2 - t1),
        ]
        out += [f"  forward+backward env step, {num_envs} envs:", format_stages(rows, t2 - t0, horizon, "    ")]
    finally:
        prof.restore()
    if detail:
        with torch.no_grad(), kernel_launches(device) as kernels:
            for _ in range(horizon):
                env.step(zeros)
        out += [f"  forward, per Warp launch ({num_envs} envs):", format_kernels(kernels, horizon, indent="    ")]
        with torch.no_grad(), torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as tp:
            for _ in range(horizon):
                env.step(zeros)
        out += [f"  forward, torch ops ({num_envs} envs):", format_torch_ops(tp, horizon, indent="    ")]
    return "\n".join(out)


def _bench(env: DiffVelocityEnv, num_envs: int, horizon: int, device: str, profile: bool = False) -> dict:
    env.reset()
    zeros = torch.zeros(num_envs, 12, device=device)

    def forward():
        with torch.no_grad():
            for _ in range(horizon):
                env.step(zeros)

    def forward_backward():
        env.detach()
        actions = torch.zeros(horizon, num_envs, 12, device=device, requires_grad=True)
        total = 0.0
        for t in range(horizon):
            _, rew, _, _, _ = env.step(actions[t])
            total = total + rew.sum()
        total.backward()
        if not torch.isfinite(actions.grad).all():
            raise FloatingPointError("non-finite gradient in the benchmark rollout")

    sim, model = env.sim, env.model
    s0, s1 = model.state(requires_grad=False), model.state(requires_grad=False)

    def solver_only():
        nonlocal s0, s1
        for _ in range(horizon * env.cfg.decimation):
            sim.solver.step(s0, s1, None, None, env.cfg.sim_dt)
            s0, s1 = s1, s0
        wp.synchronize_device(model.device)

    forward()  # warm-up: compiles kernels
    forward_backward()
    t_fwd, t_fb, t_solver = timed(forward), timed(forward_backward), timed(solver_only)
    steps = horizon * num_envs
    breakdown = stage_breakdown(env, num_envs, horizon, device, profile)
    stepper = getattr(sim, "forward", None)  # DiffSimulator's graph-replaying forward (absent in older versions)
    if stepper is not None and hasattr(stepper, "capture"):
        t_graph, t_eager = interleaved(forward, lambda on: setattr(stepper, "capture", on))
        breakdown += (
            f"\n  forward, captured graph vs eager launches, interleaved horizons (median of 7): "
            f"{steps / t_graph:.0f} vs {steps / t_eager:.0f} env-steps/s ({t_eager / t_graph:.2f}x)"
        )
    return {
        "breakdown": breakdown,
        "fwd": steps / t_fwd,
        "fwd_bwd": steps / t_fb,
        "solver": steps / t_solver,
        "ratio": t_fb / t_fwd,
        "overhead": t_fwd / t_solver,
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--envs", default="64,256")
    parser.add_argument("--horizon", type=int, default=32)
    parser.add_argument("--contact-model", default="smoothed")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--asset-sources", default="urdf", help="comma list of urdf, usd, isaaclab")
    parser.add_argument("--profile", action="store_true", help="add time per Warp kernel and the top torch ops")
    args = parser.parse_args()
    print(
        f"{'model':>9} {'envs':>6} {'fwd env-steps/s':>16} {'fwd+bwd env-steps/s':>20} "
        f"{'solver-only env-steps/s':>24} {'(f+b)/f':>8} {'env/solver time':>16}"
    )
    breakdowns = []
    for source in args.asset_sources.split(","):
        for n in (int(x) for x in args.envs.split(",")):
            r = bench(n, args.horizon, args.contact_model, args.device, source, args.profile)
            breakdowns.append(r["breakdown"])
            print(
                f"{source:>9} {n:>6} {r['fwd']:>16.0f} {r['fwd_bwd']:>20.0f} {r['solver']:>24.0f} "
                f"{r['ratio']:>8.2f} {r['overhead']:>16.2f}",
                flush=True,
            )
    print("\nWhere one env step's time goes (perf_counter around each stage, device synchronized):")
    print("\n".join(breakdowns))


if __name__ == "__main__":
    main()
