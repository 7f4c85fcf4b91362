"""Table 1's jobs: train in one contact model per run and seed, then evaluate each checkpoint in every model."""

from __future__ import annotations

import os

from isaaclab_diffsim.experiments.table1 import summarize

from .context import ExperimentContext
from .jobs import Job, python, run_and_load, run_jobs
from .training import latest_checkpoint, training_job


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
                ctx.repo,
                directory,
                f"train {run} seed {seed}",
                algo=algo,
                task=exp["task"],
                seed=seed,
                num_envs=size["num_envs"],
                iterations=iterations,
                device=size["device"],
                overrides=[f"env.solver_cfg.contact_model={spec['contact_model']}", *exp.get("overrides", [])],
            )
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
            python(),
            os.path.join(ctx.repo, "scripts", "experiments", "evaluate_checkpoint.py"),
            "--task",
            exp["eval_task"],
            "--algo",
            exp["runs"][run]["algo"],
            "--checkpoint",
            trained_checkpoint(tjob),
            "--contact_models",
            ",".join(exp["eval_contact_models"]),
            "--num_envs",
            str(ctx.size["eval_envs"]),
            "--device",
            ctx.size["device"],
            "--out",
            os.path.join(directory, "eval.json"),
        ]
        jobs[(run, seed)] = Job(f"evaluate {run} seed {seed}", directory, argv)
    return jobs


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
