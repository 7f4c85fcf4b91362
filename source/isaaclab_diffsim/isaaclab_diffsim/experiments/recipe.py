"""A recipe study's summary: SHAC runs that each change one factor from a baseline, evaluated as locomotion
controllers in hard contact (tracking, falls, gait measures, drift under a zero command)."""

from __future__ import annotations

import numpy as np

COLUMNS = (
    ("return", lambda m: np.mean(m["returns"]), "{:.1f}"),
    ("tracking error [m/s]", lambda m: np.mean(m["tracking_errors"]), "{:.3f}"),
    ("yaw-rate error [rad/s]", lambda m: _mean(m.get("yaw_errors", [])), "{:.3f}"),
    ("falls [%]", lambda m: 100.0 * np.mean(m["falls"]), "{:.1f}"),
    ("gait period [s]", lambda m: _mean(m["gait"]["period_s"]), "{:.2f}"),
    ("autocorrelation at period", lambda m: _mean(m["gait"]["autocorrelation"]), "{:.2f}"),
    ("touchdowns per foot [1/s]", lambda m: _mean(m["gait"]["steps_per_s"]), "{:.2f}"),
    ("air time [s]", lambda m: _mean(m["gait"]["mean_air_time_s"]), "{:.3f}"),
    ("foot lift [cm]", lambda m: 100.0 * _mean(m["gait"]["max_lift_m"]), "{:.1f}"),
    ("stand drift [m / 10 s]", lambda m: _mean(m["stand"]["drift_m"]), "{:.3f}"),
    ("stand touchdowns per foot [1/s]", lambda m: _mean(m["stand"].get("steps_per_s", [])), "{:.2f}"),
)


def _mean(values) -> float:
    return float(np.mean(values)) if len(values) else float("nan")


def seeds_cell(per_seed: np.ndarray, fmt: str) -> str:
    """A table cell of per-seed values: ``mean +- std (v1, v2, ..)``, the value alone for one seed, ``-`` for none."""
    if len(per_seed) > 1:
        values = ", ".join(fmt.format(v) for v in per_seed)
        return f"{fmt.format(per_seed.mean())} +- {fmt.format(per_seed.std())} ({values})"
    return fmt.format(per_seed.mean()) if len(per_seed) else "-"


def summarize(exp: dict, evals: dict[tuple[str, int], dict]) -> tuple[str, dict]:
    """Markdown table: per run, mean +- std over its seeds of each seed's value (per-seed values in brackets)."""
    header = "| run | factor | seeds | " + " | ".join(c for c, _, _ in COLUMNS) + " |"
    rows, numbers = [header, "| " + " | ".join(["---"] * (3 + len(COLUMNS))) + " |"], {}
    for run, spec in exp["runs"].items():
        seeds = [s for s in spec.get("seeds", exp["seeds"]) if (run, s) in evals]
        cells = []
        for label, fn, fmt in COLUMNS:
            per_seed = np.array([fn(evals[(run, s)]["models"]["hard"]) for s in seeds], dtype=float)
            numbers.setdefault(run, {})[label] = per_seed.tolist()
            cells.append(seeds_cell(per_seed, fmt))
        size = [f"`{spec['task']}`"] if "task" in spec else []
        size += ["PPO"] if spec.get("algo") == "ppo" else []
        size += [f"{spec['iterations']} iterations"] if "iterations" in spec else []
        size += [f"{spec['num_envs']} envs"] if "num_envs" in spec else []
        factor = " ".join([*size, *(f"`{o}`" for o in spec.get("overrides", []))]) or "baseline"
        rows.append(f"| {run} | {factor} | {', '.join(map(str, seeds))} | " + " | ".join(cells) + " |")
    return "\n".join(rows), numbers
