"""A recipe study: SHAC runs that each change one factor from a baseline, evaluated as locomotion controllers.

Every run trains with the experiment's ``base_overrides`` plus its own, on its seeds; its evaluation
(``scripts/experiments/evaluate_locomotion.py``) runs in hard contact with the same ``env.*`` overrides and reports
tracking, falls, the gait measures and the drift under a zero command.
"""

from __future__ import annotations

import os

import numpy as np

from .context import ExperimentContext
from .jobs import Job, python, run_and_load, run_jobs
from .table1 import trained_checkpoint
from .training import training_job

COLUMNS = (
    ("return", lambda m: np.mean(m["returns"]), "{:.1f}"),
    ("tracking error [m/s]", lambda m: np.mean(m["tracking_errors"]), "{:.3f}"),
    ("falls [%]", lambda m: 100.0 * np.mean(m["falls"]), "{:.1f}"),
    ("gait period [s]", lambda m: _mean(m["gait"]["period_s"]), "{:.2f}"),
    ("autocorrelation at period", lambda m: _mean(m["gait"]["autocorrelation"]), "{:.2f}"),
    ("touchdowns per foot [1/s]", lambda m: _mean(m["gait"]["steps_per_s"]), "{:.2f}"),
    ("air time [s]", lambda m: _mean(m["gait"]["mean_air_time_s"]), "{:.3f}"),
    ("foot lift [cm]", lambda m: 100.0 * _mean(m["gait"]["max_lift_m"]), "{:.1f}"),
    ("stand drift [m / 10 s]", lambda m: _mean(m["stand"]["drift_m"]), "{:.3f}"),
)


def _mean(values) -> float:
    return float(np.mean(values)) if len(values) else float("nan")


def run_overrides(exp: dict, spec: dict) -> list[str]:
    return [*exp.get("base_overrides", []), *spec.get("overrides", [])]


def training_jobs(ctx: ExperimentContext, exp: dict) -> dict[tuple[str, int], Job]:
    jobs = {}
    for run, spec in exp["runs"].items():
        for seed in spec.get("seeds", exp["seeds"]):
            directory = os.path.join(ctx.runs_dir, exp["name"], run, f"seed{seed}")
            jobs[(run, seed)] = training_job(
                ctx.repo, directory, f"train {run} seed {seed}", algo="shac", task=exp["task"], seed=seed,
                num_envs=spec.get("num_envs", ctx.size["num_envs"]),
                iterations=spec.get("iterations", ctx.size["shac_iterations"]), device=ctx.size["device"],
                overrides=run_overrides(exp, spec),
            )  # fmt: skip
    return jobs


def evaluation_jobs(ctx: ExperimentContext, exp: dict, trained: dict[tuple[str, int], Job]) -> dict:
    jobs = {}
    for (run, seed), tjob in trained.items():
        directory = os.path.join(tjob.directory, "locomotion")
        env_overrides = [o for o in run_overrides(exp, exp["runs"][run]) if o.startswith("env.")]
        argv = [
            python(), os.path.join(ctx.repo, "scripts", "experiments", "evaluate_locomotion.py"),
            "--task", exp["eval_task"], "--algo", "shac", "--checkpoint", trained_checkpoint(tjob),
            "--num_envs", str(ctx.size["eval_envs"]), "--device", ctx.size["device"],
            "--gait_command", str(exp["gait_command"]), "--out", os.path.join(directory, "locomotion.json"),
            *env_overrides,
        ]  # fmt: skip
        jobs[(run, seed)] = Job(f"evaluate {run} seed {seed}", directory, argv)
    return jobs


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
            if len(per_seed) > 1:
                cells.append(f"{fmt.format(per_seed.mean())} +- {fmt.format(per_seed.std())} "
                             f"({', '.join(fmt.format(v) for v in per_seed)})")  # fmt: skip
            else:
                cells.append(fmt.format(per_seed.mean()))
        factor = " ".join(f"`{o}`" for o in spec.get("overrides", [])) or "baseline"
        rows.append(f"| {run} | {factor} | {', '.join(map(str, seeds))} | " + " | ".join(cells) + " |")
    return "\n".join(rows), numbers


def run(ctx: ExperimentContext, exp: dict) -> dict:
    trained = training_jobs(ctx, exp)
    run_jobs(list(trained.values()), ctx.size["parallel_jobs"])
    loaded = run_and_load(evaluation_jobs(ctx, exp, trained), ctx.size["parallel_jobs"], "locomotion.json")
    table, numbers = summarize(exp, loaded)
    base = " ".join(f"`{o}`" for o in exp.get("base_overrides", [])) or "none"
    return {
        "tables": [
            f"Each run: SHAC on `{exp['task']}` with the base overrides {base} plus the run's factor, "
            f"{ctx.size['shac_iterations']} iterations unless the factor says otherwise. Evaluated in hard contact: "
            f"return, tracking error and falls over the first episode of {ctx.size['eval_envs']} envs (play "
            f"commands); gait measures over 10 s at {exp['gait_command']} m/s forward (envs that did not fall, first "
            "2 s dropped): the dominant period of the joint trajectories and their autocorrelation there, "
            "touchdowns per foot per second, mean air phase, highest foot lift; stand drift: base displacement "
            "over 10 s at a zero command.\n\n" + table
        ],
        "numbers": numbers,
        "training_wall_s": {f"{r} seed {s}": job.result()["wall_s"] for (r, s), job in trained.items()},
        "checkpoints": {f"{r} seed {s}": trained_checkpoint(job) for (r, s), job in trained.items()},
    }
