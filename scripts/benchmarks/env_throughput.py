"""Env-steps/s of DiffSim-Velocity-Flat-AnymalC-Direct: forward only (no_grad) and forward+backward over a
horizon, printed beside the bare solver's figure for the same 4 substeps, so the env's own overhead shows.

    .venv/bin/python scripts/benchmarks/env_throughput.py --envs 64,256 --horizon 32 --asset-sources urdf,isaaclab

``--asset-sources`` compares models: our URDF builder and the model Isaac Lab's scene and physics manager build.
"""

from __future__ import annotations

import argparse
import time

import torch
import warp as wp

from isaaclab_diffsim.tasks.direct.anymal_c import DiffVelocityEnv, DiffVelocityEnvCfg


def timed(fn, min_seconds: float = 2.0) -> float:
    """Best wall time of fn() over repetitions lasting at least min_seconds in total (at least 2 runs)."""
    best, total, runs = float("inf"), 0.0, 0
    while total < min_seconds or runs < 2:
        t0 = time.perf_counter()
        fn()
        dt = time.perf_counter() - t0
        best, total, runs = min(best, dt), total + dt, runs + 1
    return best


def bench(num_envs: int, horizon: int, contact_model: str, device: str, asset_source: str = "urdf") -> dict:
    cfg = DiffVelocityEnvCfg(num_envs=num_envs, device=device, asset_source=asset_source)
    cfg.solver_cfg.contact_model = contact_model
    env = DiffVelocityEnv(cfg)
    try:
        return _bench(env, num_envs, horizon, device)
    finally:
        env.close()


def _bench(env: DiffVelocityEnv, num_envs: int, horizon: int, device: str) -> dict:
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
    return {
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
    args = parser.parse_args()
    print(f"{'model':>9} {'envs':>6} {'fwd env-steps/s':>16} {'fwd+bwd env-steps/s':>20} "
          f"{'solver-only env-steps/s':>24} {'(f+b)/f':>8} {'env/solver time':>16}")
    for source in args.asset_sources.split(","):
        for n in (int(x) for x in args.envs.split(",")):
            r = bench(n, args.horizon, args.contact_model, args.device, source)
            print(f"{source:>9} {n:>6} {r['fwd']:>16.0f} {r['fwd_bwd']:>20.0f} {r['solver']:>24.0f} "
                  f"{r['ratio']:>8.2f} {r['overhead']:>16.2f}", flush=True)


if __name__ == "__main__":
    main()
