"""SolverMoreauGS(threads=N) against threads=1 in the same run: forward and forward+backward on ANYmal C.

    WARP_CACHE_PATH=.cache/warp .venv/bin/python scripts/benchmarks/solver_threads.py --worlds 64,256 --threads 2

Per world count: one solver per thread count on the same model (ANYmal C standing on the ground, smoothed contact,
dt 5 ms), measured in alternating rounds so machine load hits all alike. Forward: eager steps without a tape on
states without gradients (steps x worlds per wall second). Forward+backward: a ``--horizon``-step horizon recorded
on a ``wp.Tape`` (forward kinematics on its last step only and the step scratch pooled, as the env bridge steps)
and its backward. Each figure is the fastest of its
repetitions; the ratio column is threads=1's time over threads=N's. The states and gradients of every thread count
are checked bitwise against threads=1's.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
import warp as wp

from isaaclab_diffsim.assets.anymal_c import build_anymal_c_model
from isaaclab_diffsim.solver import SolverMoreauGS

DT = 0.005
BASE_HEIGHT = 0.57


class Case:
    """One solver (``threads``) on a shared model, with its own states."""

    def __init__(self, model, threads: int, horizon: int):
        self.model, self.threads, self.horizon = model, threads, horizon
        self.solver = SolverMoreauGS(model, threads=threads)
        self.plain = [model.state(requires_grad=False), model.state(requires_grad=False)]
        self.states = [model.state(requires_grad=True) for _ in range(horizon + 1)]
        self.control = model.control()

    def forward(self, steps: int) -> None:
        a, b = self.plain
        a.assign(self.states[0])
        for _ in range(steps):
            self.solver.step(a, b, self.control, None, DT)
            a, b = b, a

    def forward_backward(self) -> list[np.ndarray]:
        tape = wp.Tape()
        with self.solver.taped_scratch() as scratch, tape:
            for i in range(self.horizon):
                last = i == self.horizon - 1
                self.solver.step(self.states[i], self.states[i + 1], self.control, None, DT, forward_kinematics=last)
        self.states[-1].joint_q.grad.fill_(1.0)
        tape.backward()
        out = [self.states[-1].joint_q.numpy().copy(), self.states[0].joint_qd.grad.numpy().copy()]
        tape.reset()
        self.solver.recycle_scratch(scratch)  # the bridge's pool: later horizons reuse the step scratch
        return out


def best(fn, reps: int) -> float:
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--worlds", default="64,256")
    p.add_argument("--threads", type=int, nargs="+", default=[2], help="thread counts compared with 1")
    p.add_argument("--steps", type=int, default=50, help="forward steps per repetition")
    p.add_argument("--horizon", type=int, default=16)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--reps", type=int, default=3, help="repetitions per round (the fastest counts)")
    args = p.parse_args()
    counts = [1] + [t for t in args.threads if t != 1]
    print(
        f"SolverMoreauGS threads, ANYmal C, smoothed, dt {DT}; {os.cpu_count()} CPUs; fastest of "
        f"{args.rounds} x {args.reps}"
    )
    print(f"  {'worlds':>6} {'threads':>7} {'fwd steps*W/s':>14} {'x':>6} {'fwd+bwd ms/horizon':>19} {'x':>6}")
    for worlds in (int(w) for w in args.worlds.split(",")):
        model, _ = build_anymal_c_model(worlds, device="cpu", base_height=BASE_HEIGHT, requires_grad=True)
        cases = [Case(model, t, args.horizon) for t in counts]
        reference = cases[0].forward_backward()  # compiles, and the bitwise reference
        for case in cases[1:]:
            for a, b in zip(reference, case.forward_backward()):
                if not np.array_equal(a, b):
                    raise SystemExit(f"threads={case.threads} differs from threads=1 at {worlds} worlds")
        fwd = {c.threads: [] for c in cases}
        bwd = {c.threads: [] for c in cases}
        for _ in range(args.rounds):
            for case in cases:
                fwd[case.threads].append(best(lambda c=case: c.forward(args.steps), args.reps))
                bwd[case.threads].append(best(case.forward_backward, args.reps))
        f1, b1 = min(fwd[1]), min(bwd[1])
        for t in counts:
            f, b = min(fwd[t]), min(bwd[t])
            print(
                f"  {worlds:>6} {t:>7} {args.steps * worlds / f:>14,.0f} {f1 / f:>5.2f}x {1e3 * b:>19.1f} "
                f"{b1 / b:>5.2f}x"
            )


if __name__ == "__main__":
    main()
