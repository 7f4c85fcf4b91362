"""Falling-mass experiment: the paper's claim 1 (its falling-mass figure).

A sphere (radius 0.1 m) is dropped from initial centre height h0 onto a ground plane and simulated
for ``duration`` seconds with SolverMoreauGS. For every h0 on a grid we record the final height and
final vertical velocity and their derivatives with respect to h0 for:
  (a) hard contact, analytic gradient through the tape;
  (b) smoothed (sigmoid, "forces at a distance") contact, analytic gradient through the tape;
  (c) stochastic smoothing of the HARD model: E[f(h0 + eps)], eps ~ N(0, sigma^2), with the
      zeroth-order gradient estimate E[f(h0 + eps) eps] / sigma^2 (antithetic pairs).
The claim: the smoothed model's deterministic gradients look like the stochastic ones, while the hard
model's gradients are zero/uninformative around contact. The default noise std sigma = pi / (sqrt(3)
kappa) is the std of the logistic distribution whose CDF is the contact sigmoid s(d), so both
smoothings act over the same length scale (at kappa 300: 6 mm). The default height range reaches past the
height that has not yet landed at ``duration`` (about 1.33 m for 0.5 s), so the landing transition
shows up in the curves. Every world of one model is an independent sphere, so one rollout (and one
backward pass per output) gives the whole curve.

Writes <out-dir>/falling_mass.png (2x2 plot) and <out-dir>/falling_mass.json.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np
import warp as wp

from isaaclab_diffsim.solver import SolverMoreauGS
from isaaclab_diffsim.solver.scenes import sphere_model

NQ, ND = 7, 6  # joint_q / joint_qd floats per world (free joint)


def die(msg: str):
    print(f"ERROR: {msg}", file=sys.stderr)
    sys.exit(1)


def check(name: str, *arrays):
    if not all(np.all(np.isfinite(a)) for a in arrays):
        die(f"NaN/Inf in {name}")


def rollout(heights, model_kind, args, grad: bool):
    """Simulate one sphere per height; returns final z, final vz and (if grad) dz/dh0, dvz/dh0."""
    n = len(heights)
    model = sphere_model(radius=args.radius, worlds=n, device=args.device, requires_grad=grad)
    solver = SolverMoreauGS(
        model,
        contact_model=model_kind,
        kappa=args.kappa,
        iterations=args.iterations,
        margin=args.margin if model_kind == "smoothed" else None,
    )
    steps = int(round(args.duration / args.dt))
    q0 = model.joint_q.numpy().copy()
    q0[2::NQ] = heights
    if grad:
        states = [model.state(requires_grad=True) for _ in range(steps + 1)]
        states[0].joint_q.assign(q0)
        states[0].joint_qd.zero_()
        tape = wp.Tape()
        with tape:
            for i in range(steps):
                solver.step(states[i], states[i + 1], None, None, args.dt)
        final = states[-1]
    else:
        a, b = model.state(), model.state()
        a.joint_q.assign(q0)
        a.joint_qd.zero_()
        for _ in range(steps):
            solver.step(a, b, None, None, args.dt)
            a, b = b, a
        final = a
    z = final.joint_q.numpy()[2::NQ].copy()
    vz = final.joint_qd.numpy()[2::ND].copy()
    if not grad:
        return z, vz
    out = []
    for arr, stride, size in ((final.joint_q, NQ, n * NQ), (final.joint_qd, ND, n * ND)):
        tape.zero()
        seed = np.zeros(size, dtype=np.float32)
        seed[2::stride] = 1.0
        arr.grad.assign(seed)
        tape.backward()
        out.append(states[0].joint_q.grad.numpy()[2::NQ].copy())
    tape.reset()
    return z, vz, out[0], out[1]


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out-dir", default="outputs/falling_mass")
    p.add_argument("--duration", type=float, default=0.5, help="simulated time [s]")
    p.add_argument("--dt", type=float, default=0.005)
    p.add_argument("--num-heights", type=int, default=200)
    p.add_argument("--h-min", type=float, default=0.05, help="lowest initial centre height [m]")
    p.add_argument("--h-max", type=float, default=1.6, help="highest initial centre height [m]")
    p.add_argument("--radius", type=float, default=0.1)
    p.add_argument("--kappa", type=float, default=300.0, help="sigmoid stiffness of the smoothed model [1/m]")
    p.add_argument("--margin", type=float, default=None, help="contact margin [m] (default: solver's, 0.02 smoothed)")
    p.add_argument("--iterations", type=int, default=20)
    p.add_argument(
        "--sigma",
        type=float,
        default=None,
        help="std of the Gaussian on h0 [m]; default pi/(sqrt(3) kappa) = std of the logistic density "
        "whose CDF is the contact sigmoid (6.0 mm at kappa 300)",
    )
    p.add_argument("--samples", type=int, default=64, help="noise samples per height (even: antithetic pairs)")
    p.add_argument("--max-worlds", type=int, default=16384, help="worlds per batch of the stochastic rollouts")
    p.add_argument("--device", default="cpu")
    args = p.parse_args()
    if args.samples < 2 or args.samples % 2:
        die("--samples must be an even number >= 2 (antithetic pairs)")
    if args.sigma is None:
        args.sigma = float(np.pi / (np.sqrt(3.0) * args.kappa))
    if hasattr(wp, "LOG_WARNING"):
        wp.config.log_level = wp.LOG_WARNING
    else:
        wp.config.quiet = True
    wp.init()
    t_start = time.perf_counter()
    h0 = np.linspace(args.h_min, args.h_max, args.num_heights)
    res = {"h0": h0}

    for kind in ("hard", "smoothed"):
        t = time.perf_counter()
        print(
            f"[{kind}] rollout + 2 backward passes, {len(h0)} worlds, {int(round(args.duration / args.dt))} steps ...",
            flush=True,
        )
        z, vz, dz, dvz = rollout(h0, kind, args, grad=True)
        check(kind, z, vz, dz, dvz)
        res[kind] = {"z": z, "vz": vz, "dz": dz, "dvz": dvz}
        print(f"[{kind}] done in {time.perf_counter() - t:.1f} s", flush=True)

    # (c) stochastic smoothing of the hard model, antithetic pairs eps / -eps
    t = time.perf_counter()
    rng = np.random.default_rng(0)
    half = rng.standard_normal((len(h0), args.samples // 2))
    half *= args.sigma / np.sqrt(np.mean(half**2, axis=1, keepdims=True))  # moment matching: E[eps^2] = sigma^2 exactly
    eps = np.concatenate([half, -half], axis=1)  # (H, S)
    flat_h = (h0[:, None] + eps).ravel()
    zs, vs = np.empty_like(flat_h), np.empty_like(flat_h)
    for start in range(0, len(flat_h), args.max_worlds):
        sl = slice(start, min(start + args.max_worlds, len(flat_h)))
        print(f"[stochastic] hard rollouts {sl.start}-{sl.stop} of {len(flat_h)} worlds ...", flush=True)
        zs[sl], vs[sl] = rollout(flat_h[sl], "hard", args, grad=False)
    check("stochastic rollouts", zs, vs)
    zs, vs = zs.reshape(eps.shape), vs.reshape(eps.shape)
    S2 = args.samples // 2
    # antithetic estimator: mean over pairs of (f(h+e) - f(h-e)) e / (2 sigma^2)
    zo = lambda f: np.mean((f[:, :S2] - f[:, S2:]) * half, axis=1) / (2 * args.sigma**2)  # noqa: E731
    res["stochastic"] = {"z": zs.mean(1), "vz": vs.mean(1), "dz": zo(zs), "dvz": zo(vs)}
    print(f"[stochastic] done in {time.perf_counter() - t:.1f} s", flush=True)
    wall = time.perf_counter() - t_start

    # summary
    def nrms(a, b):
        return float(np.sqrt(np.mean((a - b) ** 2)) / max(np.sqrt(np.mean(b**2)), 1e-12))

    hard, sm, st = res["hard"], res["smoothed"], res["stochastic"]
    summary = {
        "nrms_dz_smoothed_vs_stochastic": nrms(sm["dz"], st["dz"]),
        "nrms_dvz_smoothed_vs_stochastic": nrms(sm["dvz"], st["dvz"]),
        "nrms_dz_hard_vs_stochastic": nrms(hard["dz"], st["dz"]),
        "nrms_dvz_hard_vs_stochastic": nrms(hard["dvz"], st["dvz"]),
        "corr_dvz_smoothed_vs_stochastic": float(np.corrcoef(sm["dvz"], st["dvz"])[0, 1]),
        "frac_hard_dvz_exactly_zero": float(np.mean(hard["dvz"] == 0.0)),
        "frac_hard_dvz_below_1e-6": float(np.mean(np.abs(hard["dvz"]) < 1e-6)),
        "frac_smoothed_dvz_below_1e-6": float(np.mean(np.abs(sm["dvz"]) < 1e-6)),
        "frac_stochastic_dvz_below_1e-6": float(np.mean(np.abs(st["dvz"]) < 1e-6)),
        # landed-and-resting band: the true (noise-averaged) trend of final height vs h0 is ~0 there, the hard
        # tape gradient is the pathwise slope (1) of the sawtooth left by where the landing step falls
        "mean_dz_resting_band_0.15_1.25": {
            k: float(np.mean(res[k]["dz"][(h0 > 0.15) & (h0 < 1.25)])) for k in ("hard", "smoothed", "stochastic")
        },
        "integral_dvz": {k: float(np.trapezoid(res[k]["dvz"], h0)) for k in ("hard", "smoothed", "stochastic")},
        "wall_time_s": wall,
    }
    os.makedirs(args.out_dir, exist_ok=True)
    png = os.path.join(args.out_dir, "falling_mass.png")
    js = os.path.join(args.out_dir, "falling_mass.json")

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, 2, figsize=(11, 8), sharex=True)
    panels = [
        ("z", "final height [m]"),
        ("vz", "final vertical velocity [m/s]"),
        ("dz", "d final height / d h0"),
        ("dvz", "d final velocity / d h0 [1/s]"),
    ]
    styles = {
        "hard": dict(color="k", lw=1.2),
        "smoothed": dict(color="tab:blue", lw=1.6),
        "stochastic": dict(color="tab:orange", lw=1.2, ls="--"),
    }
    labels = {
        "hard": "hard (tape)",
        "smoothed": f"smoothed kappa={args.kappa:g} (tape)",
        "stochastic": f"hard + Gaussian h0 noise sigma={args.sigma * 1e3:.2g} mm, {args.samples} samples",
    }
    for ax, (key, title) in zip(axes.ravel(), panels):
        for kind in ("hard", "smoothed", "stochastic"):
            ax.plot(h0, res[kind][key], label=labels[kind], **styles[kind])
        ax.set_title(title)
        ax.grid(alpha=0.3)
        ax.axvline(args.radius, color="gray", lw=0.6, ls=":")
    for ax in axes[1]:
        ax.set_xlabel("initial centre height h0 [m]")
    axes[0, 0].legend(fontsize=8)
    fig.suptitle(f"Falling sphere (r={args.radius} m), {args.duration} s at dt={args.dt} s")
    fig.tight_layout()
    fig.savefig(png, dpi=110)

    tolist = lambda d: {k: (v.tolist() if isinstance(v, np.ndarray) else tolist(v)) for k, v in d.items()}  # noqa: E731
    with open(js, "w") as f:
        json.dump({"params": vars(args), "summary": summary, "curves": tolist(res)}, f, indent=1)

    print("---- summary ----")
    for k, v in summary.items():
        print(f"{k}: {v if not isinstance(v, float) else round(v, 4)}")
    print(f"plot: {png}\njson: {js}")


if __name__ == "__main__":
    main()
