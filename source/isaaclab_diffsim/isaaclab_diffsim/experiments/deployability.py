"""The deployability suite's summary: one table per simulator (variant rows, metric columns, mean +- std over the
seeds of each run with the per-seed values) and the issue's goal checked per seed in MuJoCo."""

from __future__ import annotations

import numpy as np

from ..deploy.sim2sim.variants import Variant, parse_variant
from .recipe import seeds_cell

SIMS = ("mujoco", "diffsim")
SIM_TITLES = {"mujoco": "MuJoCo", "diffsim": "our hard contact model"}

COLUMNS = (
    ("falls [%]", "fall_rate", 100.0, "{:.1f}"),
    ("lin tracking [m/s]", "tracking_error", 1.0, "{:.3f}"),
    ("yaw-rate tracking [rad/s]", "yaw_rate_error", 1.0, "{:.3f}"),
    ("steps beyond joint limits [%]", "joint_limit_fraction", 100.0, "{:.1f}"),
    ("max joint excursion [rad]", "joint_limit_max_rad", 1.0, "{:.3f}"),
    ("joint power [W]", "joint_power_w", 1.0, "{:.0f}"),
    ("roll rms [rad]", "roll_rms", 1.0, "{:.3f}"),
    ("pitch rms [rad]", "pitch_rms", 1.0, "{:.3f}"),
    ("torque change rms [N m]", "torque_change_rms", 1.0, "{:.2f}"),
    ("stance foot slip [m/s]", "foot_slip_speed", 1.0, "{:.3f}"),
    ("touchdowns per foot [1/s]", "touchdowns_per_foot_s", 1.0, "{:.2f}"),
    ("base drift [m]", "drift_m", 1.0, "{:.3f}"),
)
"""(header, key of a variant's summary in sim2sim.py's JSON, factor, format); a key the JSON lacks reads NaN."""

GOAL_FALL_RATE = 0.05
GOAL_TRACKING = 0.25
"""The goal, per seed in MuJoCo: fall rate below GOAL_FALL_RATE in every variant :func:`in_goal` admits and a
tracking error below GOAL_TRACKING [m/s] at nominal conditions."""
STAND_VARIANT = "cmd0.0"
GOAL_STAND_DRIFT = 0.1
"""Standing, when the experiment has the zero-command variant :data:`STAND_VARIANT`: no touchdown in any episode
and a mean base drift below GOAL_STAND_DRIFT [m] over the episode."""
GOAL_FRICTION = (0.4, 1.2)
GOAL_PAYLOAD = (-5.0, 10.0)
GOAL_PUSH = 1.0
GOAL_LATENCY = 2
GOAL_MOTOR = (0.8, 1.2)


def in_goal(variant: Variant) -> bool:
    """Whether the goal's fall limit applies: friction, payload, pushes, latency and motor strength within the
    goal's ranges; observation noise and fixed commands are measured but not part of it."""
    v = variant
    if v.noise or v.command_vx is not None:
        return False
    return (
        (v.friction is None or GOAL_FRICTION[0] <= v.friction <= GOAL_FRICTION[1])
        and GOAL_PAYLOAD[0] <= v.payload <= GOAL_PAYLOAD[1]
        and v.push <= GOAL_PUSH
        and v.latency <= GOAL_LATENCY
        and GOAL_MOTOR[0] <= v.motor <= GOAL_MOTOR[1]
    )


def sim_table(exp: dict, results: dict, sim: str) -> tuple[str, dict]:
    """Markdown table of ``sim``: one row per (run, variant), the columns of :data:`COLUMNS`; ``results`` maps
    (run, seed, sim) to sim2sim.py's JSON. Returns the table and its numbers {run: {variant: {column: per seed}}}."""
    header = "| run | variant | seeds | " + " | ".join(c for c, _, _, _ in COLUMNS) + " |"
    rows, numbers = [header, "| " + " | ".join(["---"] * (3 + len(COLUMNS))) + " |"], {}
    for run, spec in exp["runs"].items():
        seeds = [s for s in spec.get("seeds", exp["seeds"]) if (run, s, sim) in results]
        for variant in exp["variants"]:
            cells = []
            for label, key, factor, fmt in COLUMNS:
                per_seed = np.array(
                    [factor * results[(run, s, sim)]["variants"][variant].get(key, np.nan) for s in seeds], dtype=float
                )
                numbers.setdefault(run, {}).setdefault(variant, {})[label] = per_seed.tolist()
                cells.append(seeds_cell(per_seed, fmt))
            rows.append(f"| {run} | {variant} | {', '.join(map(str, seeds))} | " + " | ".join(cells) + " |")
    return "\n".join(rows), numbers


def goal(exp: dict, results: dict, sim: str = "mujoco") -> tuple[str, dict]:
    """Markdown table of the goal per (run, seed) in ``sim``: met or not, the variants that missed it (fall rate
    >= GOAL_FALL_RATE), the nominal tracking error and, with the zero-command variant, the standing measures (part of
    the goal then). Returns the table and {"run seed N": met}."""
    goal_variants = [n for n in exp["variants"] if in_goal(parse_variant(n))]
    stand = STAND_VARIANT in exp["variants"]
    rows = [
        "| run | seed | goal met | variants with falls >= 5 % | nominal tracking [m/s] |"
        + (" stand: touchdowns per foot [1/s], drift [m] |" if stand else ""),
        "| --- | --- | --- | --- | --- |" + (" --- |" if stand else ""),
    ]
    met_by_seed = {}
    for run, spec in exp["runs"].items():
        for seed in spec.get("seeds", exp["seeds"]):
            if (run, seed, sim) not in results:
                continue
            variants = results[(run, seed, sim)]["variants"]
            missed = [n for n in goal_variants if variants[n]["fall_rate"] >= GOAL_FALL_RATE]
            tracking = variants["nominal"]["tracking_error"] if "nominal" in variants else float("nan")
            met = not missed and tracking < GOAL_TRACKING
            stand_cell = ""
            if stand:
                still = variants[STAND_VARIANT]
                touchdowns = max(e["touchdowns_per_foot_s"] for e in still["per_episode"])
                met = met and touchdowns == 0.0 and still["drift_m"] < GOAL_STAND_DRIFT
                stand_cell = f" {still['touchdowns_per_foot_s']:.2f}, {still['drift_m']:.3f} |"
            met_by_seed[f"{run} seed {seed}"] = met
            rows.append(
                f"| {run} | {seed} | {'yes' if met else 'no'} | {', '.join(missed) or 'none'} | {tracking:.3f} |"
                + stand_cell
            )
    return "\n".join(rows), met_by_seed


def long_check_exp(exp: dict) -> dict | None:
    """The experiment as its ``long_check`` sees it (the listed runs, the check's variants), or None without one.

    ``long_check``: ``runs`` (names in ``runs``), ``variants``, ``episodes``, ``episode_s`` and ``seed`` (the
    commands' seed; another than the suite's ``eval_seed``): the goal checked again in MuJoCo on longer and more
    episodes, which the short suite's 8 x 10 s resolve only to one fall in 8."""
    check = exp.get("long_check")
    if not check:
        return None
    unknown = [r for r in check["runs"] if r not in exp["runs"]]
    if unknown:
        raise ValueError(f"long_check.runs: {unknown} are not runs of the experiment ({sorted(exp['runs'])})")
    if "nominal" not in check["variants"]:
        raise ValueError("long_check.variants must include nominal (the goal's tracking error)")
    return {**exp, **check, "runs": {r: exp["runs"][r] for r in check["runs"]}}


def summarize(exp: dict, results: dict, long_results: dict | None = None) -> tuple[list[str], dict]:
    """The tables (goal, then one per simulator, then the long check's goal and MuJoCo table when the experiment
    has one; ``long_results`` keyed like ``results``) and their numbers."""
    goal_table, met = goal(exp, results)
    tables, numbers = [goal_table], {"goal_met": met}
    for sim in SIMS:
        table, numbers[sim] = sim_table(exp, results, sim)
        tables.append(f"**{SIM_TITLES[sim]}**\n\n{table}")
    long_exp = long_check_exp(exp)
    if long_exp is not None:
        long_goal, numbers["long_check_goal_met"] = goal(long_exp, long_results or {})
        long_table, numbers["long_check_mujoco"] = sim_table(long_exp, long_results or {}, "mujoco")
        title = (
            f"**Long check, MuJoCo**: {long_exp['episodes']} episodes of {long_exp['episode_s']} s per variant, "
            f"commands from seed {long_exp['seed']}"
        )
        tables.append(f"{title}\n\n{long_goal}\n\n{long_table}")
    return tables, numbers
