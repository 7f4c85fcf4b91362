"""SolverMoreauGS(threads=N) against threads=1 in the same run: forward and forward+backward on ANYmal C.

    WARP_CACHE_PATH=.cache/warp .venv/bin/python scripts/benchmarks/solver_threads.py --worlds 64,256 --threads 2

Per world count: one solver per thread count on the same model (ANYmal C standing on the ground, smoothed contact,
dt 5 ms), measured in alternating rounds so machine load hits all alike. Forward: eager steps without a tape on
states without gradients (steps x worlds per wall second). Forward+backward: a ``--horizon``-step horizon recorded
on a ``wp.Tape`` (forward kinematics on its last step only and the step scratch pooled, as the env bridge steps)
and its backward. Graph slots: the same horizon as ``--horizon / 4`` policy steps of 4 substeps through
``DiffSimulator`` (the env's path: differentiable steps replayed from captured graphs, one per shard, the shards'
at once; backward also one shard after the other, ``parallel_backward=False``, the main job's setting). Each figure
is the fastest of its repetitions; the ratio columns are threads=1's time over threads=N's. The states and gradients
of every thread count are checked bitwise against threads=1's.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
import torch
import warp as wp

from isaaclab_diffsim.assets.anymal_c import build_anymal_c_model
from isaaclab_diffsim.bridge import DiffSimulator
from isaaclab_diffsim.solver import SolverMoreauGS

DT = 0.005
BASE_HEIGHT = 0.57
SUBSTEPS = 4  # per policy step through the graph slots


class Slots:
    """A ``DiffSimulator`` (graph-replayed differentiable steps) with ``threads`` on a shared model."""

    def __init__(self, model, threads: int, horizon: int, parallel_backward: bool = True):
        self.threads = threads
        self.sim = DiffSimulator(model, substeps=SUBSTEPS, dt=DT, threads=threads, parallel_backward=parallel_backward)
        self.steps = max(horizon // SUBSTEPS, 1)
        self.seconds = (0.0, 0.0)

    def forward_backward(self) -> list[np.ndarray]:
        """A horizon and its backward; ``seconds``: (forward, backward) wall seconds."""
        q, qd = self.sim.default_state()
        qd = qd.clone().requires_grad_(True)
        t0 = time.perf_counter()
        start = qd
        for _ in range(self.steps):
            out = self.sim.step(q, qd)
            q, qd = out.joint_q, out.joint_qd
        t1 = time.perf_counter()
        q.sum().backward()
        self.seconds = (t1 - t0, time.perf_counter() - t1)
        return [q.detach().numpy().copy(), start.grad.numpy().copy()]


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
    torch.set_num_threads(1)
    print(
        f"  {'worlds':>6} {'threads':>7} {'fwd steps*W/s':>14} {'x':>6} {'fwd+bwd ms/horizon':>19} {'x':>6}"
        f"   graph slots: {'fwd ms':>7} {'x':>6} {'bwd ms':>7} {'x':>6} {'bwd 1-by-1':>10} {'x':>6}"
    )
    for worlds in (int(w) for w in args.worlds.split(",")):
        model, _ = build_anymal_c_model(worlds, device="cpu", base_height=BASE_HEIGHT)
        cases = [Case(model, t, args.horizon) for t in counts]
        slots = {(t, par): Slots(model, t, args.horizon, par) for t in counts for par in (True, False)}
        reference = cases[0].forward_backward()  # compiles, and the bitwise reference
        for case in cases[1:]:
            for a, b in zip(reference, case.forward_backward()):
                if not np.array_equal(a, b):
                    raise SystemExit(f"threads={case.threads} differs from threads=1 at {worlds} worlds")
        slot_reference = slots[(1, True)].forward_backward()  # captures
        for key, slot in slots.items():
            slot.forward_backward()
            for a, b in zip(slot_reference, slot.forward_backward()):
                if not np.array_equal(a, b):
                    raise SystemExit(f"graph slots {key} differ from threads=1 at {worlds} worlds")
        fwd = {c.threads: [] for c in cases}
        bwd = {c.threads: [] for c in cases}
        slot_times = {key: [] for key in slots}
        for _ in range(args.rounds):
            for case in cases:
                fwd[case.threads].append(best(lambda c=case: c.forward(args.steps), args.reps))
                bwd[case.threads].append(best(case.forward_backward, args.reps))
                for par in (True, False):
                    slot = slots[(case.threads, par)]
                    for _ in range(args.reps):
                        slot.forward_backward()
                        slot_times[(case.threads, par)].append(slot.seconds)
        f1, b1 = min(fwd[1]), min(bwd[1])

        def slot_best(t, par, i, times=slot_times):
            return min(s[i] for s in times[(t, par)])

        sf1, sb1, so1 = slot_best(1, True, 0), slot_best(1, True, 1), slot_best(1, False, 1)
        for t in counts:
            f, b = min(fwd[t]), min(bwd[t])
            sf, sb, so = slot_best(t, True, 0), slot_best(t, True, 1), slot_best(t, False, 1)
            print(
                f"  {worlds:>6} {t:>7} {args.steps * worlds / f:>14,.0f} {f1 / f:>5.2f}x {1e3 * b:>19.1f} "
                f"{b1 / b:>5.2f}x   {'':13}{1e3 * sf:>7.1f} {sf1 / sf:>5.2f}x {1e3 * sb:>7.1f} {sb1 / sb:>5.2f}x"
                f" {1e3 * so:>10.1f} {so1 / so:>5.2f}x"
            )


if __name__ == "__main__":
    main()
