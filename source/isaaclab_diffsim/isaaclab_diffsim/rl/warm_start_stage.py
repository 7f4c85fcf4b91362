"""The first stage of a run whose SHAC config names ``warm_start_task``: where it trains, the train-script command
line that trains it, and its checkpoint once it has finished."""

from __future__ import annotations

import os

from .checkpoints import latest_checkpoint

STAGE_FOLDER = "warm_start"
"""Sub-folder of the run's log folder that holds the stage's run."""

# agent overrides that belong to the second stage only (the first keeps its own task's values)
_SECOND_STAGE_ONLY = (
    "max_iterations",
    "experiment_name",
    "run_name",
    "resume",
    "load_run",
    "load_checkpoint",
    "warm_start",
    "warm_start_task",
    "warm_start_iterations",
    "warm_start_obs_stats",
    "save_interval",
)


def stage_dir(log_dir: str) -> str:
    return os.path.join(log_dir, STAGE_FOLDER)


def finished_checkpoint(folder: str) -> str | None:
    """The stage's last checkpoint once the stage has finished (its bundle exported), else None."""
    ckpt = latest_checkpoint(folder)
    if ckpt is None or ckpt.endswith("_interrupted.pt"):
        return None
    return ckpt if os.path.isfile(os.path.join(folder, "exported", "policy.pt")) else None


def passed_overrides(overrides: list[str]) -> list[str]:
    """The run's ``agent.*`` overrides that the first stage takes too (network sizes, horizon, learning rates: the
    warm start needs the same networks); ``env.*`` ones name the second task's fields and stay there."""
    kept = []
    for o in overrides:
        key = o.split("=", 1)[0].lstrip("+~")
        if key.startswith("agent.") and key[len("agent.") :].split(".")[0] not in _SECOND_STAGE_ONLY:
            kept.append(o)
    return kept


def stage_command(
    python: str,
    script: str,
    agent_cfg,
    folder: str,
    *,
    seed: int,
    device: str,
    num_envs: int | None,
    torch_threads: int,
    overrides: list[str],
) -> list[str]:
    """The command line of ``script`` (the train script) that trains or resumes the stage in ``folder``."""
    cmd = [python, script, "--task", agent_cfg.warm_start_task, "--algo", "shac", "--log_dir", folder]
    cmd += ["--seed", str(seed), "--device", device, "--torch_threads", str(torch_threads), "--eval_episodes", "0"]
    if num_envs is not None:
        cmd += ["--num_envs", str(num_envs)]
    if agent_cfg.warm_start_iterations is not None:
        cmd += ["--max_iterations", str(agent_cfg.warm_start_iterations)]
    if latest_checkpoint(folder) is not None:
        cmd += ["--resume", "auto"]
    return cmd + passed_overrides(overrides)
