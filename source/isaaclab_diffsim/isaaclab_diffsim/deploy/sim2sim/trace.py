"""The Figure 6 analogue: commanded against achieved base velocity over time for a schedule of forward commands."""

from __future__ import annotations

import json
import os

import numpy as np

TRACE_COLUMNS = ("t", "cmd_vx", "cmd_vy", "cmd_yaw_rate", "vx", "vy", "vz", "yaw_rate")
"""One row per control step: time after the step [s], the command, the base-frame velocity, the yaw rate."""


def step_schedule(levels: list[float], step_s: float):
    """``schedule(t) -> (vx, 0, 0)``: ``levels[i]`` m/s from ``i * step_s`` s on (the last level to the end)."""
    if not levels or step_s <= 0:
        raise ValueError(f"a command schedule needs levels and a step length > 0, got {levels}, {step_s}")

    def schedule(t: float) -> tuple[float, float, float]:
        return (float(levels[min(int(t // step_s), len(levels) - 1)]), 0.0, 0.0)

    return schedule


def write_trace(path: str, rows: list, meta: dict) -> list[str]:
    """``path`` (JSON: the columns of :data:`TRACE_COLUMNS` and ``meta``) and, when matplotlib is installed, a PNG
    beside it (same name, .png); returns the files written."""
    data = np.asarray(rows, dtype=float).reshape(-1, len(TRACE_COLUMNS))
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w") as f:
        json.dump({**meta, **{c: data[:, i].tolist() for i, c in enumerate(TRACE_COLUMNS)}}, f)
    written = [path]
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return written
    fig, ax = plt.subplots(figsize=(7, 3))
    ax.plot(data[:, 0], data[:, 1], "k--", label="commanded $v_x$")
    ax.plot(data[:, 0], data[:, 4], "C0", label="achieved $v_x$ (base frame)")
    ax.plot(data[:, 0], data[:, 5], "C1", lw=0.8, label="achieved $v_y$")
    ax.set_xlabel("time [s]")
    ax.set_ylabel("velocity [m/s]")
    ax.set_title(meta.get("title", "commanded vs achieved base velocity"))
    ax.legend(loc="upper right", fontsize=8)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    png = os.path.splitext(path)[0] + ".png"
    fig.savefig(png, dpi=120)
    plt.close(fig)
    return written + [png]
