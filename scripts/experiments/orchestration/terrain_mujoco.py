"""Sim-to-sim on the terrain of a recipe study's per-terrain evaluation: each (run, seed)'s exported bundle in MuJoCo
on the same generated terrain (``scripts/deploy/sim2sim.py --terrain``: MuJoCo's heightfield and its own ray-cast
height scan), once with every body colliding and once with the feet alone (``--feet_only``, as in our task), laid
out as our per-terrain table.

``terrain_eval.mujoco_episodes`` (episodes per sub-terrain type and level) turns it on; the terrain is that of
``terrain_eval.seed``, so the table sits next to ours on the same sub-terrains.
"""

from __future__ import annotations

import os

from isaaclab_diffsim.experiments.terrain import terrain_table

from .context import ExperimentContext
from .jobs import Job, python, run_and_load

RESULT_FILE = "sim2sim_terrain.json"
MUJOCO_EVALUATIONS = (
    ("terrain_mujoco", (), ""),
    ("terrain_mujoco_feet_only", ("--feet_only",), "MuJoCo, feet only"),
)
"""MuJoCo's evaluations of each (run, seed): (folder, flags, the group of the table that shows all its episodes;
empty: the table's own groups)."""


def mujoco_jobs(ctx: ExperimentContext, trained: dict[tuple[str, int], Job], settings: dict) -> dict:
    """{folder of :data:`MUJOCO_EVALUATIONS`: {(run, seed): sim2sim.py job}} on each run's ``exported`` bundle."""
    jobs = {folder: {} for folder, _, _ in MUJOCO_EVALUATIONS}
    for (run, seed), tjob in trained.items():
        for folder, flags, group in MUJOCO_EVALUATIONS:
            directory = os.path.join(tjob.directory, folder)
            argv = [
                python(),
                os.path.join(ctx.repo, "scripts", "deploy", "sim2sim.py"),
                os.path.join(tjob.info["run_dir"], "exported"),
                "--sim",
                "mujoco",
                "--terrain",
                "--terrain_seed",
                str(settings["seed"]),
                "--episodes",
                str(settings["mujoco_episodes"]),
                *flags,
                "--out",
                os.path.join(directory, RESULT_FILE),
            ]
            where = f" ({group})" if group else ""
            jobs[folder][(run, seed)] = Job(f"MuJoCo per terrain{where} {run} seed {seed}", directory, argv)
    return jobs


def as_terrain_eval(result: dict) -> dict:
    """sim2sim.py's JSON as evaluate_terrain.py's (its nominal variant's ``groups``)."""
    return {"groups": result["variants"]["nominal"]["groups"]}


def mujoco_table(ctx: ExperimentContext, exp: dict, trained: dict[tuple[str, int], Job], settings: dict) -> dict:
    """Run the MuJoCo jobs; ``{"table": markdown, "terrain_mujoco": numbers}``."""
    jobs, loaded = mujoco_jobs(ctx, trained, settings), {}
    for folder, _, group in MUJOCO_EVALUATIONS:
        results = run_and_load(jobs[folder], ctx.size["parallel_jobs"], RESULT_FILE)
        loaded[group] = {key: as_terrain_eval(r) for key, r in results.items()}
    table, numbers = terrain_table(exp, loaded.pop(""), loaded)
    text = (
        "MuJoCo on the same terrain (`scripts/deploy/sim2sim.py BUNDLE --sim mujoco --terrain --terrain_seed "
        f"{settings['seed']} --episodes {settings['mujoco_episodes']}`): each run's exported bundle through "
        "onnxruntime on the terrain of the per-terrain table above as a MuJoCo heightfield, the height scan from "
        f"MuJoCo's ray casts; {settings['mujoco_episodes']} episodes of 20 s per sub-terrain type and level, each "
        "from its sub-terrain's origin with a forward command drawn from a fixed seed (ours with such commands: the "
        "per-terrain table's `forward commands` row); every body collides. "
        "`MuJoCo, feet only`: the same episodes with only the feet colliding, as in our task (`--feet_only`). A "
        "fall is judged as ours (base below 0.3 m over the ground under it, or tilted past 60 degrees); tilted "
        "falls are not recorded (`-`).\n\n" + table
    )
    return {"table": text, "terrain_mujoco": numbers}
