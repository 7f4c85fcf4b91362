"""Throughput of SolverMoreauGS on ANYmal C, forward and forward+backward, next to Newton's own solvers.

Every robot starts with its feet touching the ground (base at 0.55 m), so contact is active throughout.
Each figure is measured after a warm-up (the first launch compiles kernels), repeated at least 3 times
and until ``--min-time`` seconds have passed, and is the fastest repetition (other processes may share
the CPU). Columns:

  steps*W/s     solver steps x worlds per wall second
  sim-s*W/s     simulated seconds x worlds per wall second (the throughput to compare across dts)
  fwd32 / tape32 / bwd32   wall time of one horizon of ``--horizon`` steps: plain forward (states without
                gradients), forward recorded on a wp.Tape (the step scratch pooled across horizons, as the env
                bridge does), and tape.backward()
  (f+b)/fwd     (tape32 + bwd32) / fwd32;  bwd/tape = bwd32 / tape32
  grad          "ok" when d(sum of final joint_q)/d(initial joint_q) is finite
  MiB/step      tape memory one step keeps alive (solver.step_memory_bytes(True)), also per world
  base z        base height at the end of the measured run, min..max over worlds

A per-kernel profile of one step (``--profile-worlds``, default 64 and 256 worlds, smoothed contact) comes first:
every ``wp.launch`` of a step is bracketed by ``wp.synchronize`` and timed, averaged over ``--profile-steps``
steps; the share is of the profiled step's total (launch overhead included). On CPU the time is the calling
thread's CPU time (Warp runs CPU kernels in that thread), so other processes on the machine barely move it; on
CUDA it is wall time. Then the same for a taped horizon and its backward, kernel by kernel: each kernel's adjoint
time beside its forward time (unless ``--skip-backward``), with forward kinematics on the horizon's last step as the
env bridge does (``--profile-fk last``) or on every step as the (f+b)/fwd horizon does (``--profile-fk every``).
``--profile`` prints only the profiles.

Newton peers run at their largest stable dt on ANYmal C with Newton's collision pipeline
(run once per 5 ms frame unless --collide-every-step; MuJoCo-Warp uses its own contacts). A settle check
simulates a few worlds for --settle-time seconds and prints the base height. Only the feet collide, so a
base below 0 means feet that sank or slid apart until the legs folded through the floor. Usage:

    WARP_CACHE_PATH=.cache/warp .venv/bin/python scripts/benchmarks/solver_throughput.py [--quick]
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import math
import os
import sys
import time

import newton
import numpy as np
import warp as wp

from isaaclab_diffsim.assets.anymal_c import build_anymal_c_model
from isaaclab_diffsim.solver import SolverMoreauGS

BASE_HEIGHT = 0.55  # feet spheres ~1 mm above the ground in the default pose
FRAME_DT = 0.005  # our dt, and the collision period of the Newton peers
PEERS = {"featherstone": 1.25e-3, "semi_implicit": 1.5625e-4, "mujoco_warp": 5.0e-3}


class Runner:
    """One solver on W ANYmal C worlds: ``advance(n)`` takes n steps of ``dt``."""

    def __init__(self, kind, worlds, device, dt, collide_every_step=False):
        self.kind, self.dt, self.device = kind, dt, device
        self.model, self.layout = build_anymal_c_model(worlds, device=device, base_height=BASE_HEIGHT)
        self.control = self.model.control()
        self.s0, self.s1 = self.model.state(), self.model.state()
        self.pipeline = self.contacts = None
        if kind == "featherstone":
            self.solver = newton.solvers.SolverFeatherstone(self.model)
        elif kind == "semi_implicit":
            self.solver = newton.solvers.SolverSemiImplicit(self.model)
        elif kind == "mujoco_warp":
            self.solver = newton.solvers.SolverMuJoCo(self.model, use_mujoco_contacts=True)
        else:
            self.solver = SolverMoreauGS(self.model, **solver_kwargs(kind))
        if kind in ("featherstone", "semi_implicit"):
            self.pipeline = newton.CollisionPipeline(self.model)
            self.contacts = self.pipeline.contacts()
        self.collide_period = 1 if collide_every_step else max(1, round(FRAME_DT / dt))
        self.count = 0

    def advance(self, n):
        for _ in range(n):
            if self.pipeline is not None and self.count % self.collide_period == 0:
                self.pipeline.collide(self.s0, self.contacts)
            self.s0.clear_forces()
            self.solver.step(self.s0, self.s1, self.control, self.contacts, self.dt)
            self.s0, self.s1 = self.s1, self.s0
            self.count += 1

    def base_z(self):
        return self.s0.body_q.numpy()[self.layout.base_body, 2]


def timed(fn, device, min_time, min_reps=3):
    """Call fn() at least min_reps times and until min_time seconds have passed; returns the fastest call's
    seconds (the least disturbed by other processes on a shared machine)."""
    times = []
    while len(times) < min_reps or sum(times) < min_time:
        t0 = time.perf_counter()
        fn()
        wp.synchronize_device(device)
        times.append(time.perf_counter() - t0)
    return min(times)


def measure_forward(runner, steps, min_time):
    """Steps per wall second of runner, in chunks of ``steps`` (after a short warm-up that compiles)."""
    runner.advance(min(steps, 4))
    wp.synchronize_device(runner.device)
    return steps / timed(lambda: runner.advance(steps), runner.device, min_time)


def solver_kwargs(spec: str) -> dict:
    """``"smoothed"`` or ``"smoothed/unrolled"``: contact model and (optionally) the contact-solve adjoint."""
    contact_model, _, adjoint = spec.partition("/")
    return {"contact_model": contact_model, **({"adjoint": adjoint} if adjoint else {})}


def measure_backward(spec, worlds, device, horizon, min_time, model_grads=False):
    """Wall times of one horizon: plain forward, taped forward, backward; tape bytes per step; grad finite.
    ``model_grads``: the model's parameters require gradients too (Warp's adjoint of articulation_dynamics)."""
    model, _ = build_anymal_c_model(worlds, device=device, base_height=BASE_HEIGHT, requires_grad=model_grads)
    solver = SolverMoreauGS(model, **solver_kwargs(spec))
    control = model.control()
    states = [model.state(requires_grad=True) for _ in range(horizon + 1)]
    plain = [model.state(requires_grad=False) for _ in range(2)]  # the forward without gradient buffers

    def forward():
        a, b = plain
        a.assign(states[0])
        for _ in range(horizon):
            solver.step(a, b, control, None, FRAME_DT)
            a, b = b, a

    times = []

    def fwd_bwd():
        tape = wp.Tape()
        t0 = time.perf_counter()
        with solver.taped_scratch() as scratch, tape:
            for i in range(horizon):
                solver.step(states[i], states[i + 1], control, None, FRAME_DT)
        wp.synchronize_device(device)
        t1 = time.perf_counter()
        states[-1].joint_q.grad.fill_(1.0)
        tape.backward()
        wp.synchronize_device(device)
        times.append((t1 - t0, time.perf_counter() - t1))
        finite = bool(np.isfinite(states[0].joint_q.grad.numpy()).all())
        tape.reset()
        solver.recycle_scratch(scratch)  # pooled, as the env bridge does: the next horizon allocates nothing
        return finite

    forward()  # warm-up (compiles)
    fwd = timed(forward, device, min_time)
    fwd_bwd()  # warm-up (compiles adjoints)
    times.clear()
    finite = all(fwd_bwd() for _ in range(3))
    while sum(map(sum, times)) < min_time:
        finite &= fwd_bwd()
    tape_s, bwd_s = np.min(times, axis=0)
    return fwd, float(tape_s), float(bwd_s), solver.step_memory_bytes(True), finite


@contextlib.contextmanager
def launch_timer(totals, counts, clock):
    """Time every wp.launch (synchronised before and after) with ``clock`` into totals[kernel key] seconds,
    counts[key] calls."""
    launch = wp.launch

    def timed_launch(kernel, *args, **kwargs):
        wp.synchronize()
        t0 = clock()
        out = launch(kernel, *args, **kwargs)
        wp.synchronize()
        key = kernel.key + (" (adjoint)" if kwargs.get("adjoint") else "")
        totals[key] += clock() - t0
        counts[key] += 1
        return out

    wp.launch = timed_launch
    try:
        yield
    finally:
        wp.launch = launch


def profile_step(spec, worlds, device, steps):
    """Per-kernel time of one SolverMoreauGS step: (step seconds unprofiled, [(kernel, s/step, launches/step)])."""
    clock = time.perf_counter if wp.get_device(device).is_cuda else time.thread_time
    runner = Runner(spec, worlds, device, FRAME_DT)
    runner.advance(20)  # compiles, settles the contacts
    wp.synchronize_device(device)
    t0 = clock()
    runner.advance(steps)
    wp.synchronize_device(device)
    step_s = (clock() - t0) / steps
    totals, counts = collections.defaultdict(float), collections.Counter()
    with launch_timer(totals, counts, clock):
        runner.advance(steps)
    rows = sorted(((k, v / steps, counts[k] // steps) for k, v in totals.items()), key=lambda r: -r[1])
    return step_s, rows


def profile_backward(spec, worlds, device, steps, model_grads=False, fk_every_step=False):
    """Per-kernel time of a taped horizon of ``steps`` steps (forward kinematics on the last only, or on every step
    with ``fk_every_step``; scratch pooled) and of its backward: {kernel: s/step} for the forward launches and
    {kernel: s/step} for the adjoint ones, each in the calling thread's CPU time (wall on CUDA)."""
    clock = time.perf_counter if wp.get_device(device).is_cuda else time.thread_time
    model, _ = build_anymal_c_model(worlds, device=device, base_height=BASE_HEIGHT, requires_grad=model_grads)
    solver = SolverMoreauGS(model, **solver_kwargs(spec))
    control = model.control()
    states = [model.state(requires_grad=True) for _ in range(steps + 1)]

    def horizon(fwd_timer, bwd_timer):
        tape = wp.Tape()
        with fwd_timer, solver.taped_scratch() as scratch, tape:
            for i in range(steps):
                fk = fk_every_step or i == steps - 1
                solver.step(states[i], states[i + 1], control, None, FRAME_DT, forward_kinematics=fk)
        states[-1].joint_q.grad.fill_(1.0)
        with bwd_timer:
            tape.backward()
        tape.reset()
        solver.recycle_scratch(scratch)

    horizon(contextlib.nullcontext(), contextlib.nullcontext())  # compiles the adjoints, fills the scratch pool
    tables = [(collections.defaultdict(float), collections.Counter()) for _ in range(2)]
    horizon(*(launch_timer(totals, counts, clock) for totals, counts in tables))
    # the backward's launches: the adjoint kernels and the contact solve's implicit adjoint (a forward kernel)
    forward = {k: v / steps for k, v in tables[0][0].items()}
    adjoint = {k.removesuffix(" (adjoint)"): v / steps for k, v in tables[1][0].items()}
    return forward, adjoint


def print_backward_profile(spec, worlds, device, steps, model_grads=False, fk_every_step=False):
    print(
        f"Per-kernel forward and adjoint of a taped {spec} horizon of {steps} steps (forward kinematics on "
        + ("every step" if fk_every_step else "its last step")
        + "; each launch synchronised and timed; adjoint/forward is the kernel's reverse-mode cost"
        + ("; model parameters with gradients)" if model_grads else ")")
    )
    for W in worlds:
        forward, adjoint = profile_backward(spec, W, device, steps, model_grads, fk_every_step)
        fwd, bwd = sum(forward.values()), sum(adjoint.values())
        print(f"  {W} worlds: forward {fwd * 1e3:.3f} ms/step, adjoint {bwd * 1e3:.3f} ms/step, ratio {bwd / fwd:.2f}")
        print(f"  {'kernel':>28} {'fwd us/step':>11} {'adj us/step':>11} {'adj/fwd':>7} {'adj share':>9}")
        for key in sorted(set(forward) | set(adjoint), key=lambda k: -adjoint.get(k, 0.0)):
            f, b = forward.get(key, 0.0), adjoint.get(key, 0.0)
            ratio = f"{b / f:7.2f}" if f > 0 and b > 0 else f"{'-':>7}"
            print(f"  {key:>28} {f * 1e6:>11.1f} {b * 1e6:>11.1f} {ratio} {100 * b / bwd:>8.1f}%")
    print()


def print_profile(spec, worlds, device, steps):
    what = "wall" if wp.get_device(device).is_cuda else "thread CPU"
    print(
        f"Per-kernel profile of one {spec} step ({what} time, mean of {steps} steps; each launch synchronised "
        "and timed)"
    )
    for W in worlds:
        step_s, rows = profile_step(spec, W, device, steps)
        total = sum(r[1] for r in rows)
        print(
            f"  {W} worlds: step {step_s * 1e3:.3f} ms unprofiled, {total * 1e3:.3f} ms profiled "
            f"({W / step_s:.0f} steps*W/s)"
        )
        print(f"  {'kernel':>28} {'us/step':>9} {'launches':>8} {'share':>6}")
        for key, sec, n in rows:
            print(f"  {key:>28} {sec * 1e6:>9.1f} {n:>8} {100 * sec / total:>5.1f}%")
    print()


def log(msg):
    print(f"  measuring {msg} ...", file=sys.stderr, flush=True)


def zrange(z):
    return f"{z.min():.3f}..{z.max():.3f}"


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--device", default="cpu")
    p.add_argument("--worlds", default=None, help='comma list (default "64,256,1024", +4096 on cuda)')
    p.add_argument(
        "--models",
        default="smoothed,smoothed/unrolled,hard,soft",
        help="contact models, each optionally /implicit or /unrolled (the contact-solve adjoint)",
    )
    p.add_argument("--steps", type=int, default=50, help="forward steps per timed chunk")
    p.add_argument("--horizon", type=int, default=32, help="steps per forward+backward horizon")
    p.add_argument("--min-time", type=float, default=2.0, help="minimum wall seconds per measurement")
    p.add_argument("--skip-newton", action="store_true")
    p.add_argument("--skip-backward", action="store_true")
    p.add_argument("--peers", default=",".join(PEERS), help="Newton solvers to compare")
    p.add_argument("--peer-dt", default=None, help="override peer dts, e.g. featherstone=1e-3,mujoco_warp=2e-3")
    p.add_argument("--peer-max-s", type=float, default=60.0, help="skip a peer at a world count predicted slower")
    p.add_argument("--collide-every-step", action="store_true", help="peers collide every step, not per 5 ms")
    p.add_argument("--settle-worlds", type=int, default=4)
    p.add_argument("--settle-time", type=float, default=1.0, help="simulated seconds of the settle check (0: skip)")
    p.add_argument("--quick", action="store_true", help="tiny run: 4,16 worlds, short measurements")
    p.add_argument(
        "--profile-worlds", default="64,256", help='per-kernel step profile at these world counts ("": skip)'
    )
    p.add_argument("--profile-steps", type=int, default=50, help="steps averaged by the profile")
    p.add_argument("--profile", action="store_true", help="print only the per-kernel profile")
    p.add_argument(
        "--profile-fk",
        choices=("last", "every"),
        default="last",
        help="forward kinematics in the profiled taped horizon: on its last step (the env bridge) or on every step "
        "(the (f+b)/fwd horizon)",
    )
    p.add_argument(
        "--model-grads",
        action="store_true",
        help="finalize the model with requires_grad=True: its parameters get gradients too, and articulation_dynamics "
        "keeps Warp's generated adjoint (the hand-written one's peer)",
    )
    args = p.parse_args()

    wp.config.log_level = wp.LOG_WARNING
    wp.init()
    device = wp.get_device(args.device)
    if args.worlds is None:
        args.worlds = "4,16" if args.quick else "64,256,1024" + (",4096" if device.is_cuda else "")
    if args.quick:
        args.steps, args.horizon, args.min_time = min(args.steps, 5), min(args.horizon, 4), min(args.min_time, 0.2)
        args.settle_time = min(args.settle_time, 0.05)
        args.profile_worlds, args.profile_steps = "4", min(args.profile_steps, 5)
    worlds = [int(w) for w in args.worlds.split(",")]
    models = [m for m in args.models.split(",") if m]
    peer_dt = dict(PEERS)
    for item in filter(None, (args.peer_dt or "").split(",")):
        name, value = item.split("=")
        peer_dt[name] = float(value)
    peers = [] if args.skip_newton else [n for n in args.peers.split(",") if n]
    wall0 = time.perf_counter()
    print(
        f"device {device}, worlds {worlds}, dt ours {FRAME_DT * 1e3:g} ms; each figure is the best of >= 3 "
        f"repetitions and >= {args.min_time:g} s; load average {os.getloadavg()[0]:.2f}\n"
    )
    profile_worlds = [int(w) for w in args.profile_worlds.split(",") if w]
    if profile_worlds:
        print_profile("smoothed" if "smoothed" in models else models[0], profile_worlds, device, args.profile_steps)
        if not args.skip_backward:
            spec = "smoothed" if "smoothed" in models else models[0]
            print_backward_profile(
                spec,
                profile_worlds,
                device,
                min(args.profile_steps, args.horizon),
                args.model_grads,
                args.profile_fk == "every",
            )
    if args.profile:
        return

    # Measure world count by world count, each peer right after a fresh run of ours (paired ratios; the
    # load from other processes drifts). Rows are printed as tables at the end, progress goes to stderr.
    H, ref = args.horizon, ("smoothed" if "smoothed" in models else models[0])
    ours, ours_rows, peer_res, peer_rows, last = {}, [], {}, [], {}
    for W in worlds:
        runners = {}
        for cm in models:
            log(f"{cm} @ {W} worlds")
            r = runners[cm] = Runner(cm, W, device, FRAME_DT)
            sps = measure_forward(r, args.steps, args.min_time)
            ours[cm, W] = sps * FRAME_DT
            row = f"{cm:>17} {W:>5} {sps * W:>10.0f} {sps * W * FRAME_DT:>10.2f} {zrange(r.base_z()):>12} |"
            if not args.skip_backward:
                fwd, tape, bwd, nbytes, finite = measure_backward(cm, W, device, H, args.min_time, args.model_grads)
                ours[cm, W, "ratio"] = (tape + bwd) / fwd
                row += (
                    f" {fwd * 1e3:>6.0f}ms {tape * 1e3:>6.0f}ms {bwd * 1e3:>6.0f}ms {(tape + bwd) / fwd:>9.2f}"
                    f" {bwd / tape:>8.2f} {nbytes / 2**20:>8.2f} {nbytes / W / 2**10:>8.1f} "
                    f"{'ok' if finite else 'NaN':>5}"
                )
            ours_rows.append(((models.index(cm), W), row))
        for name in peers:
            dt = peer_dt[name]
            head = f"{name:>13} {dt * 1e3:>7.4g} {W:>5}"
            if name in last:  # (worlds, build seconds, seconds per frame) at the previous world count
                w0, build_s, frame_s = last[name]
                predicted = (build_s + 2 * frame_s) * W / w0 + args.min_time
                if predicted > args.peer_max_s:
                    note = f"{head}  skipped: predicted {predicted:.0f} s > --peer-max-s {args.peer_max_s:g}"
                    peer_rows.append(((peers.index(name), W), note))
                    continue
            log(f"{name} @ {W} worlds")
            mine = measure_forward(runners[ref], args.steps, args.min_time) * FRAME_DT
            chunk = max(1, round(FRAME_DT / dt))  # one 5 ms frame per timed call
            t0 = time.perf_counter()
            r = Runner(name, W, device, dt, args.collide_every_step)
            build_s = time.perf_counter() - t0
            sps = measure_forward(r, chunk, args.min_time)
            last[name] = (W, build_s, chunk / sps)
            peer_res[name, W] = mine / (sps * dt)
            row = (
                f"{head} {sps * W:>10.0f} {sps * W * dt:>10.2f} {zrange(r.base_z()):>12} "
                f"{mine * W:>10.2f} {mine / (sps * dt):>9.1f}"
            )
            peer_rows.append(((peers.index(name), W), row))

    print(f"SolverMoreauGS (dt {FRAME_DT * 1e3:g} ms); horizon {H} steps for fwd/bwd times")
    print(
        f"{'contact':>17} {'W':>5} {'steps*W/s':>10} {'sim-s*W/s':>10} {'base z':>12} | {'fwd' + str(H):>8} "
        f"{'tape' + str(H):>8} {'bwd' + str(H):>8} {'(f+b)/fwd':>9} {'bwd/tape':>8} {'MiB/step':>8} "
        f"{'KiB/W/st':>8} {'grad':>5}"
    )
    print("\n".join(row for _, row in sorted(ours_rows)) + "\n")
    if peers:
        mode = "every step" if args.collide_every_step else f"every {FRAME_DT * 1e3:g} ms"
        print(
            f"Newton peers (Newton collision pipeline {mode}; MuJoCo-Warp: its own contacts); "
            f"ours = {ref} @ {FRAME_DT * 1e3:g} ms, re-measured just before each peer"
        )
        print(
            f"{'solver':>13} {'dt ms':>7} {'W':>5} {'steps*W/s':>10} {'sim-s*W/s':>10} {'base z':>12} "
            f"{'ours s*W/s':>10} {'ours/peer':>9}"
        )
        print("\n".join(row for _, row in sorted(peer_rows)) + "\n")

    # --- settle check: does each solver hold the robot on the ground? ---
    if args.settle_time > 0:
        Ws = args.settle_worlds
        print(
            f"Settle check: {Ws} worlds, {args.settle_time:g} s simulated from base z {BASE_HEIGHT} "
            "(Newton's solvers crouch to ~0.27-0.29 m; below 0: legs folded through the floor)"
        )
        for name in models + peers:
            dt = peer_dt.get(name, FRAME_DT)
            r = Runner(name, Ws, device, dt, args.collide_every_step)
            t0 = time.perf_counter()
            r.advance(math.ceil(args.settle_time / dt))
            print(f"  {name:>13}: base z {zrange(r.base_z())} m  ({time.perf_counter() - t0:.1f} s wall)", flush=True)
        print()

    # --- summary ---
    W = 256 if 256 in worlds else worlds[-1]
    parts = [f"ours {ref} @{W} worlds: {ours[ref, W] * W:.1f} sim-s*W/wall-s"]
    if (ref, W, "ratio") in ours:
        parts.append(f"fwd+bwd/fwd {ours[ref, W, 'ratio']:.2f}")
    parts += [f"vs {n} x{peer_res[n, W]:.1f}" for n in peers if (n, W) in peer_res]
    print("SUMMARY: " + "; ".join(parts))
    print(f"(total {time.perf_counter() - wall0:.0f} s wall, load average now {os.getloadavg()[0]:.2f})")


if __name__ == "__main__":
    main()
