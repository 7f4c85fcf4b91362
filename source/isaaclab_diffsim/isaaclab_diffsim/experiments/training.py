"""Training runs of an experiment: one ``scripts/train.py`` process per (run, seed), resumed when interrupted."""

from __future__ import annotations

import glob
import os
import re

from .jobs import Job, python


def latest_checkpoint(run_dir: str) -> str | None:
    """The ``model_<it>.pt`` with the highest iteration in ``run_dir`` (None if there is none)."""
    found = []
    for path in glob.glob(os.path.join(run_dir, "model_*.pt")):
        m = re.fullmatch(r"model_(\d+)\.pt", os.path.basename(path))
        if m:
            found.append((int(m.group(1)), path))
    return max(found)[1] if found else None


def training_job(
    repo: str,
    directory: str,
    name: str,
    *,
    algo: str,
    task: str,
    seed: int,
    num_envs: int,
    iterations: int,
    device: str,
    overrides: list[str],
) -> Job:
    """A training job writing its run into ``<directory>/run``; resumes from that run's latest checkpoint."""
    run_dir = os.path.join(directory, "run")
    argv = [
        python(), os.path.join(repo, "scripts", "train.py"),
        "--algo", algo, "--task", task, "--seed", str(seed), "--num_envs", str(num_envs),
        "--max_iterations", str(iterations), "--device", device, "--eval_episodes", "0", "--log_dir", run_dir,
    ]  # fmt: skip
    resume = latest_checkpoint(run_dir) if os.path.isdir(run_dir) else None
    if resume is not None:
        argv += ["--resume", resume]
    argv += list(overrides)
    return Job(name, directory, argv, {"algo": algo, "seed": seed, "run_dir": run_dir})
