"""How the falls of a terrain evaluation happen: the base's tilt, the command and the feet just before each fall."""

from __future__ import annotations

import numpy as np

from .recipe import seeds_cell


def windows_with(flags: np.ndarray, window: int) -> np.ndarray:
    """(T - window + 1, n) bool: whether each window of ``window`` consecutive steps of ``flags`` (T, n) holds a
    True."""
    counts = np.cumsum(np.concatenate([np.zeros((1, flags.shape[1])), flags.astype(float)]), axis=0)
    return (counts[window:] - counts[:-window]) > 0


def fall_causes(
    groups: dict[str, np.ndarray],
    fell: np.ndarray,
    end_step: np.ndarray,
    gravity: np.ndarray,
    commands: np.ndarray,
    hanging: np.ndarray,
    window: int,
    lateral_speed: float = 0.5,
    backward_speed: float = 0.3,
) -> dict[str, dict[str, float | int]]:
    """Per group of episodes (``groups``: name -> bool mask over the n envs), counts of falls and of the falls whose
    last recorded step before the fall had

    - ``rolled``: the base tilted more about its x axis than about its y axis (|g_y| > |g_x|, g the projected
      gravity, ``gravity`` (T, n, 3) after each step);
    - ``lateral``: a sideways command above ``lateral_speed`` [m/s] (``commands`` (T, n, 3));
    - ``backward``: a forward command below ``-backward_speed``;
    - ``hanging``: a hanging foot (``hanging`` (T, n) bool, e.g. a foot long in the air above the ground below it)
      in the ``window`` steps before the fall.

    ``end_step`` (n,) is the step that ended each env's first episode (its state is already reset, so the fall is
    read one step earlier); ``fell`` (n,) whether it was a fall. For comparison, ``hanging_window_share_survivors``
    is the share of all ``window``-step windows of the envs that did not fall in which a foot hangs.
    """
    n = fell.shape[0]
    last = np.clip(end_step - 1, 0, None)
    g, c = gravity[last, np.arange(n)], commands[last, np.arange(n)]
    hung = np.array([hanging[max(s - window, 0) : max(s, 1), i].any() for i, s in enumerate(end_step)])
    rows = {}
    for name, mask in groups.items():
        falls, survivors = mask & fell, mask & ~fell
        share = np.nan
        if survivors.any() and hanging.shape[0] >= window:
            share = float(windows_with(hanging[:, survivors], window).mean())
        rows[name] = {
            "episodes": int(mask.sum()),
            "falls": int(falls.sum()),
            "rolled": int((falls & (np.abs(g[:, 1]) > np.abs(g[:, 0]))).sum()),
            "lateral": int((falls & (np.abs(c[:, 1]) > lateral_speed)).sum()),
            "backward": int((falls & (c[:, 0] < -backward_speed)).sum()),
            "hanging": int((falls & hung).sum()),
            "hanging_window_share_survivors": share,
        }
    return rows


FALL_CAUSE_COLUMNS = (
    ("rolled [% of falls]", "rolled"),
    ("sideways command [% of falls]", "lateral"),
    ("backward command [% of falls]", "backward"),
    ("hanging foot before the fall [% of falls]", "hanging"),
)
"""(column, count of :func:`fall_causes`' rows) of :func:`fall_causes_table`, each as a share of the group's falls."""


def fall_causes_table(exp: dict, evals: dict) -> tuple[str, dict]:
    """Markdown table of ``evals`` ({(run, seed): fall_causes.py's JSON}): a row per (group, run) for the groups with
    a fall, ``all`` first; falls summed over the seeds, each cause as a share of the seed's falls and the survivors'
    windows with a hanging foot [%], mean +- std over the run's seeds (per seed in brackets; a seed without a fall in
    the group is left out of the shares). Returns it and {run: {group: {column: per seed}}}."""
    columns = [c for c, _ in FALL_CAUSE_COLUMNS] + ["survivors' windows with a hanging foot [%]"]
    rows = ["| terrain | run | seeds | episodes | falls | " + " | ".join(columns) + " |"]
    rows.append("| " + " | ".join(["---"] * (5 + len(columns))) + " |")
    numbers = {}
    keys = list(dict.fromkeys(k for e in evals.values() for k in e["groups"]))
    for group in keys:
        for run, spec in exp["runs"].items():
            seeds = [
                s for s in spec.get("seeds", exp["seeds"]) if group in evals.get((run, s), {"groups": {}})["groups"]
            ]
            cells = [evals[(run, s)]["groups"][group] for s in seeds]
            falls = sum(c["falls"] for c in cells)
            if falls == 0:
                continue
            out = []
            for label, key in FALL_CAUSE_COLUMNS:
                per_seed = np.array([100.0 * c[key] / c["falls"] for c in cells if c["falls"]], dtype=float)
                numbers.setdefault(run, {}).setdefault(group, {})[label] = per_seed.tolist()
                out.append(seeds_cell(per_seed, "{:.0f}"))
            share = np.array([100.0 * c["hanging_window_share_survivors"] for c in cells], dtype=float)
            share = share[np.isfinite(share)]
            numbers[run][group][columns[-1]] = share.tolist()
            out.append(seeds_cell(share, "{:.1f}"))
            episodes = sum(c["episodes"] for c in cells)
            rows.append(
                f"| {group} | {run} | {', '.join(map(str, seeds))} | {episodes} | {falls} | " + " | ".join(out) + " |"
            )
    return "\n".join(rows), numbers
