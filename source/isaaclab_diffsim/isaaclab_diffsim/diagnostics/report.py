"""Compact text tables of replayed horizons."""

from __future__ import annotations

import numpy as np

from .horizon_replay import HorizonResult


def _g(x: float) -> str:
    return f"{x:.3g}" if np.isfinite(x) else str(x)


def _nanstat(fn, a: np.ndarray) -> float:
    a = a[np.isfinite(a)]
    return float(fn(a)) if a.size else float("nan")


def variant_table(rows: list[tuple[str, HorizonResult | str]]) -> str:
    """One line per variant of one horizon: gradient norm (and ratio to the first row), max and median adjoint norm
    of joint_qd over the substeps, max forward GS residual; a string result is printed as the reason it did not run."""
    base = next((r.grad_norm for _, r in rows if isinstance(r, HorizonResult)), float("nan"))
    lines = [
        f"{'variant':28s} {'grad norm':>10s} {'x first':>8s} {'max|adj qd|':>11s} {'med|adj qd|':>11s}"
        f" {'max resid':>9s} {'time':>6s}"
    ]
    for label, r in rows:
        if not isinstance(r, HorizonResult):
            lines.append(f"{label:28s} {r}")
            continue
        adj, res = r.series("adjoint_qd"), r.series("residual")
        ratio = r.grad_norm / base if base else float("nan")
        lines.append(
            f"{label:28s} {_g(r.grad_norm):>10s} {_g(ratio):>8s} {_g(_nanstat(np.max, adj)):>11s}"
            f" {_g(_nanstat(np.median, adj)):>11s} {_g(_nanstat(np.max, res)):>9s} {r.seconds:5.1f}s"
            + (f"  ({r.error})" if r.error else "")
        )
    return "\n".join(lines)


def substep_table(result: HorizonResult) -> str:
    """Per substep of a horizon: adjoint norms of joint_q and joint_qd, the world with the largest joint_qd adjoint,
    and the forward Gauss-Seidel residual."""
    lines = [f"{'step':>4s} {'sub':>3s} {'|adj q|':>10s} {'|adj qd|':>10s} {'worst env':>9s} {'residual':>10s}"]
    for t, s in enumerate(result.steps):
        for k in range(len(s.adjoint_qd)):
            world = s.adjoint_qd_world[k]
            worst = str(int(np.nanargmax(world))) if np.isfinite(world).any() else "-"
            lines.append(
                f"{t:4d} {k:3d} {_g(s.adjoint_q[k]):>10s} {_g(s.adjoint_qd[k]):>10s} {worst:>9s}"
                f" {_g(s.residual[k]):>10s}"
            )
    return "\n".join(lines)


def summary_table(norms: dict[str, list[float]], threshold: float) -> str:
    """Per variant over many horizons: median and max gradient norm, count above ``threshold``, non-finite count."""
    lines = [f"{'variant':28s} {'median':>10s} {'max':>10s} {'> ' + _g(threshold):>8s} {'non-finite':>10s} {'n':>4s}"]
    for label, values in norms.items():
        a = np.asarray(values, dtype=float)
        lines.append(
            f"{label:28s} {_g(_nanstat(np.median, a)):>10s} {_g(_nanstat(np.max, a)):>10s}"
            f" {int((a > threshold).sum()):8d} {int((~np.isfinite(a)).sum()):10d} {a.size:4d}"
        )
    return "\n".join(lines)
