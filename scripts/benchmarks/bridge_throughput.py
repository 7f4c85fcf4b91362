"""Throughput of the torch bridge (DiffSimulator / PhysicsStepFunction) on ANYmal C, smoothed contact.

One horizon = ``--horizon`` policy steps of ``--substeps`` x 5 ms, fed back step to step through torch.
Prints, per world count: no-grad forward, forward with tapes, backward (loss = base height + forward
velocity summed over the horizon), env-steps/s, bytes one policy step keeps alive until its backward
(measured on the tape and estimated), and the gradient norm. Fastest of ``--reps`` repetitions. Two simulators of
the same model run alternately: differentiable steps through graph-replayed slots (``capture_taped``, the default)
and eager tapes; the last line per world count is their ratio (their gradients are checked bitwise equal).

    WARP_CACHE_PATH=.cache/warp .venv/bin/python scripts/benchmarks/bridge_throughput.py --worlds 64
"""

from __future__ import annotations

import argparse
import time

import torch
import warp as wp

from isaaclab_diffsim.assets.anymal_c import build_anymal_c_model
from isaaclab_diffsim.bridge import DiffSimulator, live_records, tape_nbytes


def sync(device):
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def horizon(sim, layout, q0, qd0, target, steps, measure=False):
    q, qd, loss, nbytes = q0, qd0, 0.0, 0
    base = torch.as_tensor(layout.base_body, device=q0.device)
    for _ in range(steps):
        out = sim.step(q, qd, target)
        q, qd = out.joint_q, out.joint_qd
        loss = loss + out.body_q[base, 2].sum() + out.joint_qd[:, 0].sum()
        if measure and out.body_q.grad_fn is not None:
            nbytes = tape_nbytes(out.body_q.grad_fn.record.tape, sim.persistent_arrays())
    return loss, nbytes


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--worlds", type=int, nargs="+", default=[64])
    p.add_argument("--horizon", type=int, default=32)
    p.add_argument("--substeps", type=int, default=4)
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--device", default="cpu")
    args = p.parse_args()
    wp.config.log_level = wp.LOG_WARNING
    print(f"device {args.device}, horizon {args.horizon} x {args.substeps} substeps of 5 ms, smoothed kappa 300")
    print(
        "worlds  mode    fwd_nograd_s  fwd_tape_s  bwd_s  (f+b)/fwd  env-steps/s(nograd, f+b)"
        "  bytes/step(measured, est)  |grad|"
    )
    for n in args.worlds:
        sims, best, grads = {}, {}, {}
        for mode in ("graphs", "eager"):
            model, layout = build_anymal_c_model(num_worlds=n, device=args.device, base_height=0.55)
            sims[mode] = DiffSimulator(
                model, substeps=args.substeps, dt=0.005, kappa=300.0, capture_taped=mode == "graphs"
            )
            best[mode] = {"nograd": 1e9, "tape": 1e9, "bwd": 1e9}
        for rep in range(args.reps + 1):  # rep 0 warms up (kernel loading, captures)
            for mode, sim in sims.items():
                q0, qd0 = sim.default_state()
                with torch.no_grad():
                    sync(args.device)
                    t = time.perf_counter()
                    horizon(sim, layout, q0, qd0, q0, args.horizon)
                    sync(args.device)
                    t_ng = time.perf_counter() - t
                target = q0.clone().requires_grad_(True)
                t = time.perf_counter()
                loss, _ = horizon(sim, layout, q0, qd0, target, args.horizon)
                sync(args.device)
                t_tape = time.perf_counter() - t
                assert live_records() == args.horizon
                t = time.perf_counter()
                loss.backward()
                sync(args.device)
                t_bwd = time.perf_counter() - t
                assert live_records() == 0
                grads[mode] = target.grad
                if rep > 0:
                    for k, v in (("nograd", t_ng), ("tape", t_tape), ("bwd", t_bwd)):
                        best[mode][k] = min(best[mode][k], v)
        if not torch.equal(grads["graphs"], grads["eager"]):
            raise RuntimeError(f"{n} worlds: the replayed slots' gradient differs from the eager tape's")
        for mode, sim in sims.items():
            q0, qd0 = sim.default_state()
            _, nbytes = horizon(sim, layout, q0, qd0, q0.clone().requires_grad_(True), 2, measure=True)
            b = best[mode]
            steps = n * args.horizon
            fb = b["tape"] + b["bwd"]
            print(
                f"{n:6d}  {mode:6s}  {b['nograd']:12.3f}  {b['tape']:10.3f}  {b['bwd']:5.3f}  {fb / b['nograd']:9.2f}"
                f"  {steps / b['nograd']:10.0f} {steps / fb:10.0f}  {nbytes:14d} {sim.step_memory_bytes():10d}"
                f"  {grads[mode].norm().item():.3g}"
            )
        g, e = best["graphs"], best["eager"]
        print(
            f"{n:6d}  eager / graphs: taped forward {e['tape'] / g['tape']:.2f}x, backward {e['bwd'] / g['bwd']:.2f}x,"
            f" forward+backward {(e['tape'] + e['bwd']) / (g['tape'] + g['bwd']):.2f}x (gradients bitwise equal)"
        )


if __name__ == "__main__":
    main()
