"""Shared first stages: the policy a warm-started run starts from, trained once per seed and reused by every run
and every experiment that names the same first stage.

An experiment's ``first_stage`` mapping (``{task, num_envs}``, optionally ``iterations``; without it the task's
registered ``max_iterations``) names the stage; ``{first_stage}`` in a run's override reads the final checkpoint of
that stage for the job's seed (``agent.warm_start={first_stage}``). The stage is the command the registered
``warm_start_task`` runs (``scripts/train.py --algo shac --task <task> --seed S --num_envs N --eval_episodes 0``),
trained into ``<runs_dir>/first_stages/<task>/<device>_envs<N>[_it<I>]/seed<S>`` before the runs that read it.
"""

from __future__ import annotations

import os

from .context import ExperimentContext
from .jobs import Job
from .table1 import trained_checkpoint
from .training import training_job

FIRST_STAGE_FIELD = "{first_stage}"
FIRST_STAGES_DIR = "first_stages"
_FIELDS = ("task", "num_envs", "iterations")


def first_stage_spec(exp: dict) -> dict | None:
    """The experiment's ``first_stage`` (None without one); ValueError naming the field for a bad value, or for a
    run that reads ``{first_stage}`` in an experiment without one."""
    spec = exp.get("first_stage")
    readers = sorted(r for r, s in exp["runs"].items() if reads_first_stage(exp, s))
    if spec is None:
        if readers:
            raise ValueError(f"runs {readers} read {FIRST_STAGE_FIELD} but the experiment has no first_stage")
        return None
    if not isinstance(spec, dict):
        raise ValueError(f"first_stage must be a mapping {{task, num_envs[, iterations]}}, got {spec!r}")
    unknown = sorted(set(spec) - set(_FIELDS))
    if unknown:
        raise ValueError(f"first_stage: unknown field(s) {unknown} (known: {', '.join(_FIELDS)})")
    if not isinstance(spec.get("task"), str) or not spec["task"]:
        raise ValueError(f"first_stage.task must be a task id, got {spec.get('task')!r}")
    for name in ("num_envs", "iterations"):
        value = spec.get(name)
        if name == "iterations" and value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"first_stage.{name} must be an integer >= 1, got {value!r}")
    if not readers:
        raise ValueError(f"first_stage is set but no run reads it ({FIRST_STAGE_FIELD} in an override)")
    return {"task": spec["task"], "num_envs": spec["num_envs"], "iterations": spec.get("iterations")}


def reads_first_stage(exp: dict, spec: dict) -> bool:
    return any(FIRST_STAGE_FIELD in o for o in (*exp.get("base_overrides", []), *spec.get("overrides", [])))


def first_stage_jobs(ctx: ExperimentContext, exp: dict) -> dict[int, Job]:
    """One training job per seed that a run reading ``{first_stage}`` trains on (none without a first stage)."""
    stage = first_stage_spec(exp)
    if stage is None:
        return {}
    readers = [spec for spec in exp["runs"].values() if reads_first_stage(exp, spec)]
    seeds = sorted({seed for spec in readers for seed in spec.get("seeds", exp["seeds"])})
    folder = f"{ctx.size['device']}_envs{stage['num_envs']}"
    if stage["iterations"] is not None:
        folder += f"_it{stage['iterations']}"
    jobs = {}
    for seed in seeds:
        directory = os.path.join(ctx.runs_dir, FIRST_STAGES_DIR, stage["task"], folder, f"seed{seed}")
        jobs[seed] = training_job(
            ctx.repo,
            directory,
            f"first stage {stage['task']} seed {seed}",
            algo="shac",
            task=stage["task"],
            seed=seed,
            num_envs=stage["num_envs"],
            iterations=stage["iterations"],
            device=ctx.size["device"],
            overrides=[],
        )
    return jobs


def with_first_stage(overrides: list[str], jobs: dict[int, Job], seed: int) -> list[str]:
    """``overrides`` with ``{first_stage}`` read as the final checkpoint of the (completed) first stage of ``seed``."""
    if not any(FIRST_STAGE_FIELD in o for o in overrides):
        return overrides
    if seed not in jobs:
        raise ValueError(f"{FIRST_STAGE_FIELD} in {overrides}: the experiment's first_stage has no job for seed {seed}")
    ckpt = trained_checkpoint(jobs[seed])
    return [o.replace(FIRST_STAGE_FIELD, ckpt) for o in overrides]
