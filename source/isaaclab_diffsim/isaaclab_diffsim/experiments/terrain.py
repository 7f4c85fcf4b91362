"""Rough-terrain results: falls and tracking per sub-terrain type and level (``evaluate_terrain.py``'s JSON) and the
terrain-level curriculum over training (the levels stored in the SHAC checkpoints), as records and markdown tables."""

from __future__ import annotations

import numpy as np

from ..rl.speed_profile import band_label
from .recipe import seeds_cell

TYPE_NOTES = {
    "pyramid_stairs": "stairs down",
    "pyramid_stairs_inv": "stairs up",
    "hf_pyramid_slope": "slope down",
    "hf_pyramid_slope_inv": "slope up",
}
"""What an env on Isaac Lab's pyramid sub-terrains meets walking out from its origin, the pyramid's centre."""


def level_record(checkpoints) -> dict:
    """``{"num_levels", "checkpoints": [{"iteration", "samples", "mean_level", "fractions"}, ..]}`` by iteration, from
    ``(iteration, samples, levels, num_levels)`` per checkpoint; ``levels``: each env's terrain level (an integer
    array or CPU tensor), ``fractions[k]``: the share of envs at level k. ValueError for no checkpoint, a checkpoint
    without levels (``levels`` or ``num_levels`` None: a flat task) or levels outside 0..num_levels-1."""
    if not checkpoints:
        raise ValueError("no checkpoint")
    rows, num_levels = [], None
    for iteration, samples, levels, n in sorted(checkpoints, key=lambda c: c[0]):
        if levels is None or n is None:
            raise ValueError(f"the checkpoint of iteration {iteration} has no terrain levels (a flat task?)")
        if num_levels is not None and n != num_levels:
            raise ValueError(f"the checkpoint of iteration {iteration} has {n} levels, an earlier one {num_levels}")
        num_levels = int(n)
        lv = np.asarray(levels).reshape(-1)
        if lv.size == 0 or lv.min() < 0 or lv.max() >= num_levels:
            raise ValueError(f"the checkpoint of iteration {iteration} has levels outside 0..{num_levels - 1}")
        counts = np.bincount(lv.astype(np.int64), minlength=num_levels)
        rows.append(
            {
                "iteration": int(iteration),
                "samples": int(samples),
                "mean_level": float(lv.mean()),
                "fractions": (counts / lv.size).tolist(),
            }
        )
    return {"num_levels": num_levels, "checkpoints": rows}


def picked_checkpoints(iterations: list[int], every: int = 100) -> list[int]:
    """The first and last of ``iterations`` and, for each multiple of ``every`` between them, the first at or after
    it: the rows of the curriculum table."""
    its = sorted(iterations)
    if not its:
        return []
    picked = {its[0], its[-1]}
    for m in range((its[0] // every + 1) * every, its[-1] + 1, every):
        picked.add(next(i for i in its if i >= m))
    return sorted(picked)


def _group_order(evals: list[dict]) -> list[str]:
    """The group keys of the evaluations: types in their first-seen order, then the levels by number."""
    keys = list(dict.fromkeys(k for e in evals for k in e["groups"]))
    types = [k for k in keys if k.startswith("type ")]
    levels = sorted((k for k in keys if k.startswith("level ")), key=lambda k: int(k.split()[1]))
    return types + levels


def _group_label(key: str) -> str:
    name = key.removeprefix("type ")
    return f"{key} ({TYPE_NOTES[name]})" if name != key and name in TYPE_NOTES else key


def _overall(groups: dict) -> dict:
    """Every episode of an evaluation (each lies on exactly one type): episode-weighted means of the type groups."""
    types = [g for k, g in groups.items() if k.startswith("type ")]
    n = sum(g["episodes"] for g in types)
    keys = [key for _, key, _, _ in TERRAIN_COLUMNS if all(key in g for g in types)]
    return {"episodes": n} | {
        key: sum(g["episodes"] * g[key] for g in types) / n if n else float("nan") for key in keys
    }


TERRAIN_COLUMNS = (
    ("falls [%]", "fall_rate", 100.0, "{:.1f}"),
    ("tilted falls [%]", "tilted_fall_rate", 100.0, "{:.1f}"),
    ("tracking error [m/s]", "tracking_error", 1.0, "{:.3f}"),
)
"""(column, key of evaluate_terrain.py's groups, factor, format). Tilted falls: the falls whose base was tilted past
the limit (the others had the base too low); ``-`` for evaluations from before ``evaluate_terrain.py`` reported them."""


FLAT_GROUP = "flat ground"
"""The row of the evaluation with every sub-terrain a plane (``evaluate_terrain.py --flat``)."""

FLATTENED_SCAN_GROUP = "flattened scan"
"""The row of the evaluation with every height-scan point at its env's mean (``evaluate_terrain.py
--flatten_scan``): the terrain without its shape in the observation."""

FORWARD_COMMANDS_GROUP = "forward commands"
"""The row of the evaluation with sim2sim's MuJoCo commands (``evaluate_terrain.py --forward_commands``): ours on
the commands of the MuJoCo table."""


def terrain_table(exp: dict, evals: dict, overall: dict[str, dict] | None = None) -> tuple[str, dict]:
    """Markdown table of ``evals`` ({(run, seed): evaluate_terrain.py's JSON}): a row per (group, run), all episodes
    first, then all episodes of each evaluation of ``overall`` ({group: {(run, seed): JSON}}, e.g. :data:`FLAT_GROUP`,
    :data:`FLATTENED_SCAN_GROUP`) where given, then each sub-terrain type and each level; falls and tracking as mean
    +- std over the run's seeds (per seed in brackets), episodes summed over the seeds. Returns it and {run: {group:
    {column: per seed}}}."""
    header = "| terrain | run | seeds | episodes | " + " | ".join(c for c, _, _, _ in TERRAIN_COLUMNS) + " |"
    rows, numbers = [header, "| " + " | ".join(["---"] * (4 + len(TERRAIN_COLUMNS))) + " |"], {}
    groups = {key: dict(e["groups"], all=_overall(e["groups"])) for key, e in evals.items()}
    overall = overall or {}
    for group, results in overall.items():
        for key, e in results.items():
            groups.setdefault(key, {})[group] = _overall(e["groups"])
    for group in ["all", *overall, *_group_order(list(evals.values()))]:
        for run, spec in exp["runs"].items():
            seeds = [s for s in spec.get("seeds", exp["seeds"]) if group in groups.get((run, s), {})]
            if not seeds:
                continue
            cells = []
            for label, key, factor, fmt in TERRAIN_COLUMNS:
                if not all(key in groups[(run, s)][group] for s in seeds):
                    cells.append("-")
                    continue
                per_seed = np.array([factor * groups[(run, s)][group][key] for s in seeds], dtype=float)
                numbers.setdefault(run, {}).setdefault(group, {})[label] = per_seed.tolist()
                cells.append(seeds_cell(per_seed, fmt))
            episodes = sum(groups[(run, s)][group]["episodes"] for s in seeds)
            rows.append(
                f"| {_group_label(group)} | {run} | {', '.join(map(str, seeds))} | {episodes} | "
                + " | ".join(cells)
                + " |"
            )
    return "\n".join(rows), numbers


def curriculum_table(exp: dict, records: dict, every: int = 100) -> tuple[str, dict]:
    """Markdown table of ``records`` ({(run, seed): :func:`level_record`}): per run and seed, at the checkpoints of
    :func:`picked_checkpoints`, the samples, the mean level and the share of envs at each level [%]. Returns it and
    {"<run> seed <s>": {"iteration": [..], "mean_level": [..]}} over every checkpoint."""
    num_levels = max((r["num_levels"] for r in records.values()), default=0)
    header = "| run | seed | iteration | samples [M] | mean level | " + " | ".join(
        f"level {k} [%]" for k in range(num_levels)
    )
    rows = [header + " |", "| " + " | ".join(["---"] * (5 + num_levels)) + " |"]
    numbers = {}
    for run, spec in exp["runs"].items():
        for seed in spec.get("seeds", exp["seeds"]):
            if (run, seed) not in records:
                continue
            checkpoints = records[(run, seed)]["checkpoints"]
            numbers[f"{run} seed {seed}"] = {
                "iteration": [c["iteration"] for c in checkpoints],
                "mean_level": [c["mean_level"] for c in checkpoints],
            }
            by_iteration = {c["iteration"]: c for c in checkpoints}
            for it in picked_checkpoints(list(by_iteration), every):
                c = by_iteration[it]
                shares = [f"{100.0 * f:.1f}" for f in c["fractions"]]
                shares += ["-"] * (num_levels - len(shares))
                rows.append(
                    f"| {run} | {seed} | {it} | {c['samples'] / 1e6:.2f} | {c['mean_level']:.2f} | "
                    + " | ".join(shares)
                    + " |"
                )
    return "\n".join(rows), numbers


SPEED_COLUMNS = (
    ("command speed [m/s]", "command_speed", "{:.2f}"),
    ("speed along the command [m/s]", "speed_along_command", "{:.2f}"),
    ("tracking error [m/s]", "tracking_error", "{:.3f}"),
)
"""(column, key of a ``speed_profile`` row of evaluate_terrain.py, format): means over the band's steps."""


def speed_table(exp: dict, evals: dict[str, dict]) -> tuple[str, dict]:
    """Markdown table of the tracking by command speed of ``evals`` ({group: {(run, seed): evaluate_terrain.py's
    JSON}}, e.g. ``{"terrain": .., FLAT_GROUP: ..}``): a row per (group, run, band) with the share of the steps in
    the band [%] and :data:`SPEED_COLUMNS`, mean +- std over the run's seeds (per seed in brackets). Evaluations
    without a ``speed_profile`` (from before evaluate_terrain.py wrote it) are left out. Returns it and {run: {group:
    {band: {column: per seed}}}}."""
    header = "| evaluation | run | seeds | command speed band [m/s] | steps [%] | " + " | ".join(
        c for c, _, _ in SPEED_COLUMNS
    )
    rows = [header + " |", "| " + " | ".join(["---"] * (5 + len(SPEED_COLUMNS))) + " |"]
    numbers = {}
    for group, results in evals.items():
        for run, spec in exp["runs"].items():
            profiles = {
                s: results[(run, s)]["speed_profile"]
                for s in spec.get("seeds", exp["seeds"])
                if "speed_profile" in results.get((run, s), {})
            }
            bands = list(dict.fromkeys(tuple(r["band"]) for p in profiles.values() for r in p))
            for band in sorted(bands, key=lambda b: b[0]):
                seeds = [s for s, p in profiles.items() if any(tuple(r["band"]) == band for r in p)]
                picked = {s: next(r for r in profiles[s] if tuple(r["band"]) == band) for s in seeds}
                share = np.array([100.0 * picked[s]["steps"] / sum(r["steps"] for r in profiles[s]) for s in seeds])
                cells = [seeds_cell(share, "{:.1f}")]
                per_band = numbers.setdefault(run, {}).setdefault(group, {})[band_label(list(band))] = {
                    "steps [%]": share.tolist()
                }
                for label, key, fmt in SPEED_COLUMNS:
                    per_seed = np.array([picked[s][key] for s in seeds], dtype=float)
                    per_band[label] = per_seed.tolist()
                    cells.append(seeds_cell(per_seed, fmt))
                rows.append(
                    f"| {group} | {run} | {', '.join(map(str, seeds))} | {band_label(list(band))} | "
                    + " | ".join(cells)
                    + " |"
                )
    return "\n".join(rows), numbers


CHECKPOINT_COLUMNS = (
    ("falls [%]", "fall_rate", 100.0, "{:.1f}"),
    ("tracking error [m/s]", "tracking_error", 1.0, "{:.3f}"),
)
"""(column, key of evaluate_terrain.py's groups, factor, format) of :func:`checkpoints_table`, over all episodes."""


def checkpoints_table(exp: dict, evals: dict) -> tuple[str, dict]:
    """Markdown table of ``evals`` ({(run, seed): {iteration: evaluate_terrain.py's JSON}}, several checkpoints of
    each run and seed): per run, each column of :data:`CHECKPOINT_COLUMNS` over all episodes of a checkpoint, as the
    mean over the seeds of each seed's mean over its checkpoints +- the std of those seed means (per seed in
    brackets), and the drift, the mean over the seeds of each seed's std over its checkpoints. Returns it and {run:
    {"iterations": {seed: [..]}, column: {seed: [value per checkpoint]}}}."""
    labels = [label for label, _, _, _ in CHECKPOINT_COLUMNS]
    header = "| run | seeds | checkpoints | episodes | " + " | ".join(f"{c} | drift {c}" for c in labels) + " |"
    rows, numbers = [header, "| " + " | ".join(["---"] * (4 + 2 * len(labels))) + " |"], {}
    for run, spec in exp["runs"].items():
        seeds = [s for s in spec.get("seeds", exp["seeds"]) if evals.get((run, s))]
        if not seeds:
            continue
        per_run = numbers.setdefault(run, {"iterations": {}})
        overall = {}
        for s in seeds:
            iterations = sorted(evals[(run, s)])
            per_run["iterations"][s] = iterations
            overall[s] = [_overall(evals[(run, s)][it]["groups"]) for it in iterations]
        cells = []
        for label, key, factor, fmt in CHECKPOINT_COLUMNS:
            values = {s: [factor * o[key] for o in overall[s]] for s in seeds}
            per_run[label] = values
            means = np.array([np.mean(values[s]) for s in seeds])
            drift = float(np.mean([np.std(values[s]) for s in seeds]))
            cells += [seeds_cell(means, fmt), fmt.format(drift)]
        its = sorted({it for s in seeds for it in per_run["iterations"][s]})
        episodes = sum(o["episodes"] for s in seeds for o in overall[s])
        rows.append(
            f"| {run} | {', '.join(map(str, seeds))} | {', '.join(map(str, its))} | {episodes} | "
            + " | ".join(cells)
            + " |"
        )
    return "\n".join(rows), numbers
