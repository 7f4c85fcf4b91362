"""Replay SHAC horizons and break their actor gradient down by substep and by physics factor.

A captured horizon (the runner writes ``<log_dir>/bad_horizons/horizon_<iteration>.pt`` when the actor gradient
norm is above ``agent.capture_grad_norm`` or not finite)::

    .venv/bin/python scripts/tools/replay_horizon.py logs/shac/<experiment>/<run>/bad_horizons/horizon_123.pt \
        [--sweeps 60] [--adjoint unrolled] [--variants baseline,mu0,sweeps60] [env.<field>=value ...]

prints the recomputed actor-gradient norm next to the captured one, per variant (one factor switched) the
gradient norm and the max/median adjoint norm of joint_qd over the substeps, and per substep of the baseline the
adjoint norms of (joint_q, joint_qd), the env with the largest one and the forward Gauss-Seidel residual.

Consecutive horizons from a checkpoint (policy fixed; the env advances by the baseline's rollout)::

    .venv/bin/python scripts/tools/replay_horizon.py --checkpoint logs/shac/<...>/model_50.pt --horizons 40 \
        --num_envs 64 --variants baseline,no_value_grad [env.<field>=value ...]

prints per variant the median and max gradient norm, the count above ``--threshold`` and the non-finite count.
``--sweeps``/``--adjoint`` change the baseline's solver (and so every variant). Variants: all (default) or a
comma list of baseline, mu0, sweeps4, sweeps20, sweeps60, kappa_x0.3, kappa_x3, margin0, limits_off,
envelope_off, implicit, unrolled, no_value_grad.
"""

from __future__ import annotations

import argparse
import math
import time

import torch

from isaaclab_diffsim.diagnostics import VARIANTS, VariantUnavailable, applied, build_runner, replay
from isaaclab_diffsim.diagnostics.report import substep_table, summary_table, variant_table
from isaaclab_diffsim.rl.shac.capture import load_capture, take_snapshot

TASK = "DiffSim-Velocity-Flat-AnymalC-Direct"


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--checkpoint", default=None, help="replay --horizons consecutive horizons from this")
    parser.add_argument("--horizons", type=int, default=20)
    parser.add_argument("--task", default=None, help=f"default: the capture's task, else {TASK}")
    parser.add_argument("--num_envs", type=int, default=None, help="checkpoint mode (a capture has its own)")
    parser.add_argument("--device", default=None)
    parser.add_argument("--sweeps", type=int, default=None, help="Gauss-Seidel sweeps of the baseline")
    parser.add_argument("--adjoint", choices=("implicit", "unrolled"), default=None)
    parser.add_argument("--variants", default="all")
    parser.add_argument("--threshold", type=float, default=10.0, help="checkpoint mode: count norms above this")
    parser.add_argument("--torch_threads", type=int, default=1)
    parser.add_argument("args", nargs="*", help="CAPTURE.pt and/or env.<field>=value / agent.<field>=value")
    args = parser.parse_args(argv)
    args.overrides = [a for a in args.args if "=" in a]
    paths = [a for a in args.args if "=" not in a]
    if len(paths) > 1 or (not paths) == (args.checkpoint is None):
        parser.error("give either one CAPTURE.pt or --checkpoint")
    args.capture = paths[0] if paths else None
    return args


def select_variants(spec: str):
    if spec == "all":
        return list(VARIANTS)
    keys = ["baseline"] + [k for k in spec.split(",") if k and k != "baseline"]
    known = {v.key: v for v in VARIANTS}
    unknown = [k for k in keys if k not in known]
    if unknown:
        raise SystemExit(f"unknown variant(s) {unknown}; choose from {sorted(known)}")
    return [known[k] for k in keys]


def run_variant(runner, snapshot, variant, base):
    """The variant's result, or the reason it could not run (a string)."""
    try:
        with applied(runner, variant, base):
            return replay(runner, snapshot)
    except VariantUnavailable as err:
        return f"n/a ({err})"


def replay_capture(args, variants, base) -> dict:
    capture = load_capture(args.capture)
    task = args.task or capture.get("task") or TASK
    runner = build_runner(task, capture.get("env_cfg"), capture.get("agent_cfg"), args.overrides, device=args.device)
    if runner.num_envs != capture["num_envs"]:
        raise SystemExit(f"the capture has {capture['num_envs']} envs, the rebuilt env {runner.num_envs}")
    print(
        f"[replay] {args.capture}: iteration {capture['iteration']}, {task}, {runner.num_envs} envs, horizon"
        f" {runner.horizon}, captured actor gradient norm {capture['grad_norm']:.6g}",
        flush=True,
    )
    results = {}
    for v in variants:
        results[v.key] = r = run_variant(runner, capture, v, base)
        shown = r if isinstance(r, str) else f"{r.grad_norm:.6g} ({r.seconds:.1f} s)"
        print(f"[replay] {v.label}: {shown}", flush=True)
    base_result = results["baseline"]
    if isinstance(base_result, str):
        raise SystemExit(f"the baseline could not run: {base_result}")
    live = capture["grad_norm"]
    rel = abs(base_result.grad_norm - live) / abs(live) if live else float("nan")
    same = "" if not (base or args.overrides) else " (solver/cfg changed: not expected to match)"
    loss = capture["stats"]["actor_loss"]
    print(
        f"\nactor gradient norm: captured {live:.6g}, replayed {base_result.grad_norm:.6g}, rel. diff {rel:.2e}{same}"
        f"\nactor loss: captured {loss:.6g}, replayed {base_result.loss:.6g}"
        + (
            " (same forward, different backward)"
            if math.isclose(loss, base_result.loss, rel_tol=1e-5) and rel > 1e-4
            else ""
        )
    )
    print("\n" + variant_table([(v.label, results[v.key]) for v in variants]))
    print("\nbaseline per substep:\n" + substep_table(base_result), flush=True)
    return results


def replay_checkpoint(args, variants, base) -> dict:
    runner = build_runner(args.task or TASK, None, None, args.overrides, num_envs=args.num_envs, device=args.device)
    runner.load(args.checkpoint)
    order = [v for v in variants if v.key != "baseline"] + [v for v in variants if v.key == "baseline"]
    norms = {v.label: [] for v in variants}
    print(
        f"[replay] {args.checkpoint}: {args.horizons} horizons x {runner.num_envs} envs, horizon {runner.horizon}",
        flush=True,
    )
    t0 = time.time()
    for h in range(args.horizons):
        snapshot = take_snapshot(runner)
        line = []
        for v in order:  # the baseline last: its rollout advances the env to the next horizon
            r = run_variant(runner, snapshot, v, base)
            norms[v.label].append(math.nan if isinstance(r, str) else r.grad_norm)
            line.append(f"{v.key} {norms[v.label][-1]:.3g}")
        print(f"[replay] horizon {h + 1}/{args.horizons} ({time.time() - t0:.0f} s): " + ", ".join(line), flush=True)
    print("\n" + summary_table(norms, args.threshold), flush=True)
    return norms


def main(argv=None):
    args = parse_args(argv)
    torch.set_num_threads(args.torch_threads)
    variants = select_variants(args.variants)
    base = {}
    if args.sweeps is not None:
        base["iterations"] = args.sweeps
    if args.adjoint is not None:
        base["adjoint"] = args.adjoint
    return replay_capture(args, variants, base) if args.capture else replay_checkpoint(args, variants, base)


if __name__ == "__main__":
    main()
