"""Training runs of an experiment: one ``scripts/train.py`` process per (run, seed), resumed when interrupted."""

from __future__ import annotations

import os

from isaaclab_diffsim.rl.checkpoints import latest_checkpoint

from .jobs import Job, python

__all__ = ["latest_checkpoint", "source_checkpoint", "training_job"]


def training_job(
    repo: str,
    directory: str,
    name: str,
    *,
    algo: str,
    task: str,
    seed: int,
    num_envs: int,
    iterations: int | None,
    device: str,
    overrides: list[str],
) -> Job:
    """A training job writing its run into ``<directory>/run``; resumes from that run's latest checkpoint.
    ``iterations=None``: the task's registered ``max_iterations``."""
    run_dir = os.path.join(directory, "run")
    argv = [
        python(),
        os.path.join(repo, "scripts", "train.py"),
        "--algo",
        algo,
        "--task",
        task,
        "--seed",
        str(seed),
        "--num_envs",
        str(num_envs),
        *(["--max_iterations", str(iterations)] if iterations is not None else []),
        "--device",
        device,
        "--eval_episodes",
        "0",
        "--log_dir",
        run_dir,
    ]
    resume = latest_checkpoint(run_dir) if os.path.isdir(run_dir) else None
    if resume is not None:
        argv += ["--resume", resume]
    argv += list(overrides)
    return Job(name, directory, argv, {"algo": algo, "seed": seed, "run_dir": run_dir})


def source_checkpoint(ctx, source: str, run: str, seed: int) -> str:
    """The final checkpoint of a completed training run of another experiment (SystemExit if it is missing)."""
    directory = os.path.join(ctx.runs_dir, source, run, f"seed{seed}")
    ckpt = latest_checkpoint(os.path.join(directory, "run"))
    if not os.path.isfile(os.path.join(directory, "done.json")) or ckpt is None:
        raise SystemExit(
            f"no completed run {run} seed {seed} of experiment {source!r} in {directory}: "
            f"run `scripts/experiments/run.py experiment={source}` first"
        )
    return ckpt
