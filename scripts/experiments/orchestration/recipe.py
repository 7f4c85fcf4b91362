"""A recipe study's jobs: SHAC runs that each change one factor from a baseline, evaluated as locomotion controllers.

Every run trains with the experiment's ``base_overrides`` plus its own, on its seeds; its evaluation
(``scripts/experiments/evaluate_locomotion.py``) runs in hard contact with the same ``env.*`` overrides but the
events and commands (``env.events.*``, ``env.commands.*``: the -Play task's, no pushes or kicks, no standing
envs) and reports tracking, falls, the gait measures and the drift under a zero command. A run may name its own
``task`` and ``eval_task`` (default: the experiment's), e.g. one run per robot.
"""

from __future__ import annotations

import os

from isaaclab_diffsim.experiments.recipe import summarize

from .context import ExperimentContext
from .jobs import Job, python, run_and_load, run_jobs
from .table1 import trained_checkpoint
from .training import training_job


def run_overrides(exp: dict, spec: dict) -> list[str]:
    return [*exp.get("base_overrides", []), *spec.get("overrides", [])]


def run_algo(spec: dict) -> str:
    """A run's algorithm: ``shac`` unless its spec says ``algo: ppo`` (a reference, with rsl_rl's PPO)."""
    algo = spec.get("algo", "shac")
    if algo not in ("shac", "ppo"):
        raise ValueError(f"recipe run algo must be 'shac' or 'ppo', got {algo!r}")
    return algo


def run_tasks(exp: dict, spec: dict) -> tuple[str, str]:
    """A run's (training task, evaluation task): its own ``task`` / ``eval_task``, else the experiment's."""
    if "task" in spec:
        return spec["task"], spec.get("eval_task", spec["task"] + "-Play")
    return exp["task"], spec.get("eval_task", exp.get("eval_task"))


def training_jobs(ctx: ExperimentContext, exp: dict) -> dict[tuple[str, int], Job]:
    jobs = {}
    for run, spec in exp["runs"].items():
        algo = run_algo(spec)
        for seed in spec.get("seeds", exp["seeds"]):
            directory = os.path.join(ctx.runs_dir, exp.get("runs_of", exp["name"]), run, f"seed{seed}")
            jobs[(run, seed)] = training_job(
                ctx.repo,
                directory,
                f"train {run} seed {seed}",
                algo=algo,
                task=run_tasks(exp, spec)[0],
                seed=seed,
                num_envs=spec.get("num_envs", ctx.size["num_envs"]),
                iterations=spec.get("iterations", ctx.size[f"{algo}_iterations"]),
                device=ctx.size["device"],
                overrides=run_overrides(exp, spec),
            )
    return jobs


def evaluation_jobs(ctx: ExperimentContext, exp: dict, trained: dict[tuple[str, int], Job]) -> dict:
    jobs = {}
    for (run, seed), tjob in trained.items():
        directory = os.path.join(tjob.directory, "locomotion")
        # the policy's MDP and rewards, not the training events or commands: the -Play task sets its own (no pushes,
        # no kicks, no standing envs)
        overrides = run_overrides(exp, exp["runs"][run])
        play_own = ("env.events.", "env.commands.")
        env_overrides = [o for o in overrides if o.startswith("env.") and not o.startswith(play_own)]
        argv = [
            python(),
            os.path.join(ctx.repo, "scripts", "experiments", "evaluate_locomotion.py"),
            "--task",
            run_tasks(exp, exp["runs"][run])[1],
            "--algo",
            run_algo(exp["runs"][run]),
            "--checkpoint",
            trained_checkpoint(tjob),
            "--num_envs",
            str(ctx.size["eval_envs"]),
            "--device",
            ctx.size["device"],
            "--gait_command",
            str(exp["gait_command"]),
            "--out",
            os.path.join(directory, "locomotion.json"),
            *env_overrides,
        ]
        jobs[(run, seed)] = Job(f"evaluate {run} seed {seed}", directory, argv)
    return jobs


def run(ctx: ExperimentContext, exp: dict) -> dict:
    trained = training_jobs(ctx, exp)
    run_jobs(list(trained.values()), ctx.size["parallel_jobs"])
    loaded = run_and_load(evaluation_jobs(ctx, exp, trained), ctx.size["parallel_jobs"], "locomotion.json")
    table, numbers = summarize(exp, loaded)
    base = " ".join(f"`{o}`" for o in exp.get("base_overrides", [])) or "none"
    return {
        "tables": [
            f"Each run: SHAC (PPO where the factor says so) on `{exp['task']}` (or the run's task) with the base "
            f"overrides {base} plus "
            f"the run's factor, {ctx.size['shac_iterations']} iterations ({ctx.size['ppo_iterations']} for PPO) "
            "unless the factor says otherwise. Evaluated in hard contact: "
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
