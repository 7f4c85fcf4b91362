"""Table 1: train in one contact model, evaluate in each (return, velocity-tracking error, fall rate over seeds)."""

from __future__ import annotations

import os

import numpy as np

from .context import ExperimentContext
from .jobs import Job, python, run_and_load, run_jobs
from .training import latest_checkpoint, training_job

METRICS = (("return", "returns"), ("tracking error [m/s]", "tracking_errors"), ("fall rate [%]", "falls"))


def training_jobs(ctx: ExperimentContext, exp: dict) -> dict[tuple[str, int], Job]:
    """One training job per (run name, seed) of a Table-1-shaped experiment config."""
    size = ctx.size
    jobs = {}
    for run, spec in exp["runs"].items():
        algo = spec["algo"]
        iterations = size["shac_iterations"] if algo == "shac" else size["ppo_iterations"]
        for seed in exp["seeds"]:
            directory = os.path.join(ctx.runs_dir, exp["name"], run, f"seed{seed}")
            jobs[(run, seed)] = training_job(
                ctx.repo, directory, f"train {run} seed {seed}", algo=algo, task=exp["task"], seed=seed,
                num_envs=size["num_envs"], iterations=iterations, device=size["device"],
                overrides=[f"env.solver_cfg.contact_model={spec['contact_model']}", *exp.get("overrides", [])],
            )  # fmt: skip
    return jobs


def trained_checkpoint(job: Job) -> str:
    ckpt = latest_checkpoint(job.info["run_dir"])
    if ckpt is None:
        raise RuntimeError(f"{job.name}: completed but no model_*.pt in {job.info['run_dir']}")
    return ckpt


def evaluation_jobs(ctx: ExperimentContext, exp: dict, trained: dict[tuple[str, int], Job]) -> dict:
    jobs = {}
    for (run, seed), tjob in trained.items():
        directory = os.path.join(tjob.directory, "eval")
        argv = [
            python(), os.path.join(ctx.repo, "scripts", "experiments", "evaluate_checkpoint.py"),
            "--task", exp["eval_task"], "--algo", exp["runs"][run]["algo"], "--checkpoint", trained_checkpoint(tjob),
            "--contact_models", ",".join(exp["eval_contact_models"]), "--num_envs", str(ctx.size["eval_envs"]),
            "--device", ctx.size["device"], "--out", os.path.join(directory, "eval.json"),
        ]  # fmt: skip
        jobs[(run, seed)] = Job(f"evaluate {run} seed {seed}", directory, argv)
    return jobs


def summarize(exp: dict, evals: dict[tuple[str, int], dict]) -> tuple[str, dict]:
    """Markdown table (mean +- std over seeds of the per-seed means) and the numbers behind it."""
    models = exp["eval_contact_models"]
    rows, numbers = [], {}
    header = "| trained (algo, contact) | evaluated in | " + " | ".join(m for m, _ in METRICS) + " |"
    rows += [header, "| " + " | ".join(["---"] * (2 + len(METRICS))) + " |"]
    for run, spec in exp["runs"].items():
        for model in models:
            cells = []
            for label, key in METRICS:
                per_seed = []
                for seed in exp["seeds"]:
                    vals = np.asarray(evals[(run, seed)]["models"][model][key], dtype=float)
                    per_seed.append(vals.mean() * (100.0 if key == "falls" else 1.0))
                per_seed = np.array(per_seed)
                numbers.setdefault(run, {}).setdefault(model, {})[key] = per_seed.tolist()
                fmt = "{:.1f}" if key != "tracking_errors" else "{:.3f}"
                seeds = ", ".join(fmt.format(v) for v in per_seed)
                cells.append(f"{fmt.format(per_seed.mean())} +- {fmt.format(per_seed.std())} ({seeds})")
            rows.append(f"| {spec['algo'].upper()}, {spec['contact_model']} | {model} | " + " | ".join(cells) + " |")
    return "\n".join(rows), numbers


def run(ctx: ExperimentContext, exp: dict) -> dict:
    trained = training_jobs(ctx, exp)
    run_jobs(list(trained.values()), ctx.size["parallel_jobs"])
    loaded = run_and_load(evaluation_jobs(ctx, exp, trained), ctx.size["parallel_jobs"], "eval.json")
    table, numbers = summarize(exp, loaded)
    train_wall = {f"{run} seed {seed}": job.result()["wall_s"] for (run, seed), job in trained.items()}
    episodes = ctx.size["eval_envs"]
    return {
        "tables": [
            f"Mean +- std over seeds {exp['seeds']} of each seed's mean over {episodes} episodes (per-seed values in "
            "brackets). Return: Isaac Lab's flat-task reward summed over the episode; tracking error: mean |v_xy "
            "command - v_xy| [m/s]; fall rate: episodes ended by termination.\n\n" + table
        ],
        "numbers": numbers,
        "training_wall_s": train_wall,
        "checkpoints": {f"{run} seed {seed}": trained_checkpoint(job) for (run, seed), job in trained.items()},
    }
