"""Claim 3: environment samples SHAC and PPO need to reach the same training return (TensorBoard logs)."""

from __future__ import annotations

import numpy as np


def load_curve(log_dir: str, tag: str, samples_per_step: float | None) -> tuple[np.ndarray, np.ndarray]:
    """(samples, value) of a scalar; with ``samples_per_step`` the steps are iterations, else already samples."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    acc = EventAccumulator(log_dir, size_guidance={"scalars": 0})
    acc.Reload()
    if tag not in acc.Tags()["scalars"]:
        raise SystemExit(f"{log_dir}: no scalar {tag!r} (have {sorted(acc.Tags()['scalars'])[:12]} ...)")
    events = acc.Scalars(tag)
    x = np.array([e.step for e in events], dtype=float)
    y = np.array([e.value for e in events], dtype=float)
    if samples_per_step is not None:
        x = (x + 1) * samples_per_step
    return x, y


def first_reaching(x: np.ndarray, y: np.ndarray, level: float) -> float:
    """The first x at which y >= level (NaN if never)."""
    idx = np.nonzero(y >= level)[0]
    return float(x[idx[0]]) if len(idx) else float("nan")


def levels_table(curves: dict, levels: list[float]) -> tuple[str, dict]:
    """Markdown table of the samples each algorithm's runs (``{"shac": [(x, y), ...], "ppo": [...]}``) first needed to
    reach each level (a fraction of the lower mean final return), and the numbers behind it."""
    final = {a: float(np.mean([y[-1] for _, y in c])) for a, c in curves.items()}
    top = min(final.values())
    rows = [
        "| return level | SHAC samples (per seed) | PPO samples (per seed) | PPO / SHAC (mean) |",
        "| --- | --- | --- | --- |",
    ]
    numbers = {"final_return": final, "levels": []}
    for frac in levels:
        level = frac * top
        need = {a: [first_reaching(x, y, level) for x, y in c] for a, c in curves.items()}
        ratio = np.nanmean(need["ppo"]) / np.nanmean(need["shac"])
        numbers["levels"].append({"level": level, **need, "ratio": ratio})
        fmt = lambda v: ", ".join("never" if np.isnan(s) else f"{s / 1e3:.0f}k" for s in v)  # noqa: E731
        cells = f"{fmt(need['shac'])} | {fmt(need['ppo'])} | {ratio:.1f}"
        rows.append(f"| {level:.2f} ({frac:.0%} of {top:.2f}) | {cells} |")
    return "\n".join(rows), numbers


def plot_curves(curves: dict, labels: dict, path: str) -> None:
    """Return against samples (log scale) of every run, one colour per algorithm; ``labels``: algorithm -> legend."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    for algo, color in (("shac", "tab:blue"), ("ppo", "tab:orange")):
        for i, (x, y) in enumerate(curves[algo]):
            ax.plot(x, y, color=color, alpha=0.8, lw=1.0, label=labels[algo] if i == 0 else None)
    ax.set_xscale("log")
    ax.set_xlabel("environment samples")
    ax.set_ylabel("mean training episode return")
    ax.legend()
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
