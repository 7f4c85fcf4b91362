"""Sim-to-sim on the terrain of a recipe study's per-terrain evaluation: each (run, seed)'s exported bundle in MuJoCo
on the same generated terrain (``scripts/deploy/sim2sim.py --terrain``: MuJoCo's heightfield and its own ray-cast
height scan), once with every body colliding and once with the feet alone (``--feet_only``, as in our task), laid
out as our per-terrain table.

``terrain_eval.mujoco_episodes`` (episodes per sub-terrain type and level) turns it on; the terrain is that of
``terrain_eval.seed`` with the evaluations' sub-terrain mix, so the table sits next to ours on the same sub-terrains.
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


SUB_TERRAINS = "env.terrain.generator.sub_terrains."


def _proportions_set(overrides: list[str]) -> set[str]:
    """The sub-terrains whose ``proportion`` ``overrides`` set."""
    keys = (o.split("=", 1)[0] for o in overrides)
    return {
        k[len(SUB_TERRAINS) : -len(".proportion")]
        for k in keys
        if k.startswith(SUB_TERRAINS) and k.endswith(".proportion")
    }


def evaluation_proportions(exp: dict, run: str) -> list[str]:
    """``sim2sim.py --terrain_proportions`` items that give MuJoCo's terrain the per-terrain evaluations' mix: the
    sub-terrains whose proportion the experiment's ``train_overrides`` change (training only, so the bundle carries
    the training mix) and the run's own overrides do not, at the rough task's proportion (``DiffTerrainCfg``'s
    generator). Empty when training and evaluation share the mix. Raises ValueError naming a sub-terrain the rough
    task does not have."""
    from isaaclab_diffsim.terrains.terrain_cfg import DiffTerrainCfg

    from .recipe import run_overrides

    names = _proportions_set(exp.get("train_overrides", [])) - _proportions_set(run_overrides(exp, exp["runs"][run]))
    if not names:
        return []
    registered = DiffTerrainCfg().generator.sub_terrains
    unknown = sorted(names - set(registered))
    if unknown:
        raise ValueError(f"train_overrides name sub-terrains {unknown} that the rough task's terrain does not have")
    return [f"{name}={registered[name].proportion:g}" for name in sorted(names)]


def mujoco_jobs(ctx: ExperimentContext, exp: dict, trained: dict[tuple[str, int], Job], settings: dict) -> dict:
    """{folder of :data:`MUJOCO_EVALUATIONS`: {(run, seed): sim2sim.py job}} on each run's ``exported`` bundle, on
    the evaluations' sub-terrain mix (:func:`evaluation_proportions`)."""
    jobs = {folder: {} for folder, _, _ in MUJOCO_EVALUATIONS}
    for (run, seed), tjob in trained.items():
        mix = evaluation_proportions(exp, run)
        mix_flags = ["--terrain_proportions", *mix] if mix else []
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
                *mix_flags,
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
    jobs, loaded = mujoco_jobs(ctx, exp, trained, settings), {}
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
        "falls are not recorded (`-`)."
    )
    mixed = sorted({item for run, _ in trained for item in evaluation_proportions(exp, run)})
    if mixed:
        text += (
            " The runs trained on other sub-terrain proportions (`train_overrides`) run on the evaluations' mix: "
            f"`--terrain_proportions {' '.join(mixed)}`."
        )
    text += "\n\n" + table
    return {"table": text, "terrain_mujoco": numbers}
