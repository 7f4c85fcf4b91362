"""CPU-time throughput of SolverMoreauGS on ANYmal C: solver steps x worlds per CPU second, forward and
forward+backward (tape), for comparing two versions of the solver on a shared machine.

Warp's CPU kernels run in the calling thread, so the process's CPU time counts the solver's work and not the
time the process waits for a core; back-to-back runs of two versions compare well even under load, where wall
time (solver_throughput.py) varies by 2x. Each figure is the best of ``--reps`` repetitions after a warm-up.
To compare another checkout, point PYTHONPATH at its package, alternating the two:

    PYTHONPATH=<checkout>/source/isaaclab_diffsim .venv/bin/python scripts/benchmarks/solver_cpu_time.py --label A
"""

from __future__ import annotations

import argparse
import time

import warp as wp

from isaaclab_diffsim.assets.anymal_c import build_anymal_c_model
from isaaclab_diffsim.solver import SolverMoreauGS

BASE_HEIGHT = 0.55  # feet touching the ground, as in solver_throughput.py
DT = 0.005


def forward_rate(solver, model, control, worlds: int, steps: int, reps: int) -> float:
    s0, s1 = model.state(), model.state()
    for _ in range(20):
        solver.step(s0, s1, control, None, DT)
        s0, s1 = s1, s0
    best = float("inf")
    for _ in range(reps):
        c0 = time.process_time()
        for _ in range(steps):
            solver.step(s0, s1, control, None, DT)
            s0, s1 = s1, s0
        wp.synchronize()
        best = min(best, time.process_time() - c0)
    return steps * worlds / best


def gradient_rate(solver, model, control, worlds: int, horizon: int, reps: int) -> float:
    states = [model.state(requires_grad=True) for _ in range(horizon + 1)]
    best = float("inf")
    for rep in range(reps + 1):
        tape = wp.Tape()
        c0 = time.process_time()
        with tape:
            for i in range(horizon):
                solver.step(states[i], states[i + 1], control, None, DT)
        states[-1].joint_q.grad.fill_(1.0)
        tape.backward()
        wp.synchronize()
        if rep > 0:  # the first horizon compiles and allocates
            best = min(best, time.process_time() - c0)
        tape.zero()
    return horizon * worlds / best


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--label", default="", help="printed first on the line (e.g. which checkout)")
    p.add_argument("--worlds", type=int, default=64)
    p.add_argument("--models", default="smoothed,hard")
    p.add_argument("--steps", type=int, default=100, help="forward steps per repetition")
    p.add_argument("--horizon", type=int, default=16, help="steps per forward+backward repetition")
    p.add_argument("--reps", type=int, default=5)
    args = p.parse_args()
    figures = []
    for contact_model in args.models.split(","):
        model, _ = build_anymal_c_model(args.worlds, device="cpu", base_height=BASE_HEIGHT)
        solver = SolverMoreauGS(model, contact_model=contact_model)
        control = model.control()
        fwd = forward_rate(solver, model, control, args.worlds, args.steps, args.reps)
        grad = gradient_rate(solver, model, control, args.worlds, args.horizon, max(2, args.reps // 2))
        figures.append(f"{contact_model} fwd {fwd:.0f} f+b {grad:.0f}")
    print(f"{args.label} W={args.worlds} steps*W/cpu-s: " + "; ".join(figures), flush=True)


if __name__ == "__main__":
    main()
