"""A recipe study's jobs: SHAC runs that each change one factor from a baseline, evaluated as locomotion controllers.

Every run trains with the experiment's ``train_overrides`` (training only: e.g. the task's defaults of the time an
experiment ran, pinned so that it reproduces after they change), ``base_overrides`` and its own, on its seeds; its
evaluation
(``scripts/experiments/evaluate_locomotion.py``) runs in hard contact with the same ``env.*`` overrides but the
events and commands (``env.events.*``, ``env.commands.*``: the -Play task's, no pushes or kicks, no standing
envs) and reports tracking, falls, the gait measures and the drift under a zero command. A run may name its own
``task`` and ``eval_task`` (default: the experiment's), e.g. one run per robot.

With a ``terrain_eval`` mapping (``{num_envs, seed}``, rough tasks) each (run, seed) also gets
``scripts/experiments/evaluate_terrain.py`` (falls and tracking per sub-terrain type and level, on the terrain of
that seed, the same for every run; again with every sub-terrain a plane, ``--flat``, and with the height scan
flattened to its mean, ``--flatten_scan``) and, for SHAC runs,
``scripts/experiments/terrain_levels.py`` (the level distribution at each checkpoint) and
``scripts/experiments/fall_causes.py`` (how the falls of the per-terrain evaluation happen); three more tables show
them. With ``terrain_eval.mujoco_episodes`` each (run, seed)'s bundle also runs in MuJoCo on the same terrain
(:mod:`.terrain_mujoco`), one more table. With ``terrain_eval.checkpoints`` K > 1 the per-terrain evaluation also
reads the K - 1 periodic checkpoints before the final one, and a table shows the mean over the K and how much it
drifts between them (one checkpoint's reading moves by several points from the next).
"""

from __future__ import annotations

import os

from isaaclab_diffsim.deploy.sim2sim.commands import FORWARD_VX_RANGE
from isaaclab_diffsim.experiments.fall_causes import fall_causes_table
from isaaclab_diffsim.experiments.recipe import summarize
from isaaclab_diffsim.experiments.terrain import (
    FLAT_GROUP,
    FLATTENED_SCAN_GROUP,
    FORWARD_COMMANDS_GROUP,
    checkpoints_table,
    curriculum_table,
    speed_table,
    terrain_table,
)
from isaaclab_diffsim.rl.checkpoints import checkpoint_iteration, periodic_checkpoints

from .context import ExperimentContext
from .first_stage import first_stage_jobs, with_first_stage
from .jobs import Job, python, run_and_load, run_jobs
from .table1 import trained_checkpoint
from .terrain_mujoco import mujoco_table
from .training import training_job

SEED_FIELD = "{seed}"
"""In a run's override, reads the job's seed (``agent.warm_start=.../seed{seed}/...``); ``{first_stage}`` reads the
experiment's shared first stage of that seed (:mod:`.first_stage`)."""


def run_overrides(exp: dict, spec: dict, seed: int | None = None) -> list[str]:
    """The experiment's ``base_overrides`` plus the run's; with ``seed``, every ``{seed}`` in them reads it."""
    overrides = [*exp.get("base_overrides", []), *spec.get("overrides", [])]
    return overrides if seed is None else [o.replace(SEED_FIELD, str(seed)) for o in overrides]


def training_overrides(exp: dict, spec: dict, seed: int | None = None) -> list[str]:
    """A run's training overrides: the experiment's ``train_overrides``, then :func:`run_overrides` (which win)."""
    pinned = exp.get("train_overrides", [])
    if not isinstance(pinned, (list, tuple)) or not all(isinstance(o, str) and "=" in o for o in pinned):
        raise ValueError(f"train_overrides must be a list of key=value overrides, got {pinned!r}")
    return [*pinned, *run_overrides(exp, spec, seed)]


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


def terrain_eval(exp: dict) -> dict | None:
    """The experiment's ``terrain_eval`` as ``{"num_envs", "seed", "mujoco_episodes", "checkpoints"}`` (None without
    one; the optional ``mujoco_episodes`` None and ``checkpoints`` 1 without them); ValueError naming the field for
    a bad value. ``checkpoints``: how many of each run's last periodic checkpoints the per-terrain evaluation also
    reads (:func:`checkpoint_terrain_jobs`), 1 for the final one alone."""
    spec = exp.get("terrain_eval")
    if spec is None:
        return None
    if not isinstance(spec, dict):
        raise ValueError(
            "terrain_eval must be a mapping {num_envs: <int>, seed: <int>[, mujoco_episodes: <int>][, checkpoints: "
            f"<int>]}}, got {spec!r}"
        )
    known = ("num_envs", "seed", "mujoco_episodes", "checkpoints")
    unknown = sorted(set(spec) - set(known))
    if unknown:
        raise ValueError(f"terrain_eval: unknown field(s) {unknown} (known: {', '.join(known)})")
    optional = {"mujoco_episodes": None, "checkpoints": 1}
    for name, low in (("num_envs", 1), ("seed", 0), ("mujoco_episodes", 1), ("checkpoints", 1)):
        value = spec.get(name)
        if name in optional and value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            raise ValueError(f"terrain_eval.{name} must be an integer >= {low}, got {value!r}")
    return {"num_envs": spec["num_envs"], "seed": spec["seed"]} | {
        name: spec[name] if spec.get(name) is not None else default for name, default in optional.items()
    }


def play_overrides(exp: dict, run: str, seed: int | None = None) -> list[str]:
    """The run's ``env.*`` overrides for its evaluations: the policy's MDP and rewards, not the training events or
    commands (the -Play task sets its own: no pushes, no kicks, no standing envs), nor ``env.terrain.curriculum``
    (off, the generator mixes the levels; the evaluations group by the level layout of the curriculum)."""
    play_own = ("env.events.", "env.commands.", "env.terrain.curriculum")
    overrides = run_overrides(exp, exp["runs"][run], seed)
    return [o for o in overrides if o.startswith("env.") and not o.startswith(play_own)]


def training_jobs(
    ctx: ExperimentContext, exp: dict, first_stages: dict[int, Job] | None = None
) -> dict[tuple[str, int], Job]:
    """One job per (run, seed); ``first_stages`` (completed, per seed) are what ``{first_stage}`` reads."""
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
                overrides=with_first_stage(training_overrides(exp, spec, seed), first_stages or {}, seed),
            )
    return jobs


def train_runs(ctx: ExperimentContext, exp: dict) -> dict[tuple[str, int], Job]:
    """Train the experiment's first stages (if any), then its (run, seed) jobs; returns the completed jobs."""
    first_stages = first_stage_jobs(ctx, exp)
    run_jobs(list(first_stages.values()), ctx.size["parallel_jobs"])
    trained = training_jobs(ctx, exp, first_stages)
    run_jobs(list(trained.values()), ctx.size["parallel_jobs"])
    return trained


def evaluation_jobs(ctx: ExperimentContext, exp: dict, trained: dict[tuple[str, int], Job]) -> dict:
    jobs = {}
    for (run, seed), tjob in trained.items():
        directory = os.path.join(tjob.directory, "locomotion")
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
            *play_overrides(exp, run, seed),
        ]
        jobs[(run, seed)] = Job(f"evaluate {run} seed {seed}", directory, argv)
    return jobs


TERRAIN_EVALUATIONS = (
    ("terrain", (), ""),
    ("terrain_flat", ("--flat",), FLAT_GROUP),
    ("terrain_flattened_scan", ("--flatten_scan",), FLATTENED_SCAN_GROUP),
    ("terrain_forward_commands", ("--forward_commands",), FORWARD_COMMANDS_GROUP),
)
"""evaluate_terrain.py's evaluations of each (run, seed): (folder, flags, the group of the per-terrain table that
shows all its episodes; empty: the table's own groups)."""


def terrain_rollout_argv(
    ctx: ExperimentContext,
    exp: dict,
    key: tuple[str, int],
    tjob: Job,
    settings: dict,
    script: str,
    out: str,
    flags: tuple[str, ...] = (),
    checkpoint: str | None = None,
) -> list[str]:
    """The command of a rollout script of ``scripts/experiments`` (``evaluate_terrain.py``, ``fall_causes.py``) on
    ``checkpoint`` (default: the final checkpoint) of run and seed ``key``: its evaluation task, the terrain of
    ``settings``, ``flags``, ``out``."""
    run, seed = key
    spec = exp["runs"][run]
    return [
        python(),
        os.path.join(ctx.repo, "scripts", "experiments", script),
        "--task",
        run_tasks(exp, spec)[1],
        "--algo",
        run_algo(spec),
        "--checkpoint",
        checkpoint or trained_checkpoint(tjob),
        "--num_envs",
        str(settings["num_envs"]),
        "--seed",
        str(settings["seed"]),
        "--device",
        ctx.size["device"],
        *flags,
        "--out",
        out,
        *play_overrides(exp, run, seed),
    ]


def terrain_jobs(
    ctx: ExperimentContext, exp: dict, trained: dict[tuple[str, int], Job], settings: dict
) -> tuple[dict, dict]:
    """({folder of :data:`TERRAIN_EVALUATIONS`: {(run, seed): evaluate_terrain.py job}}, {(run, seed):
    terrain_levels.py job}); the levels for SHAC runs only (their checkpoints store the envs' levels). ``settings``:
    :func:`terrain_eval`'s."""
    scripts = os.path.join(ctx.repo, "scripts", "experiments")
    evals = {folder: {} for folder, _, _ in TERRAIN_EVALUATIONS}
    levels = {}
    for (run, seed), tjob in trained.items():
        spec = exp["runs"][run]
        for folder, flags, group in TERRAIN_EVALUATIONS:
            directory = os.path.join(tjob.directory, folder)
            out = os.path.join(directory, "eval_terrain.json")
            argv = terrain_rollout_argv(ctx, exp, (run, seed), tjob, settings, "evaluate_terrain.py", out, flags)
            where = f" ({group})" if group else ""
            evals[folder][(run, seed)] = Job(f"evaluate per terrain{where} {run} seed {seed}", directory, argv)
        if run_algo(spec) == "shac":
            directory = os.path.join(tjob.directory, "terrain_levels")
            argv = [
                python(),
                os.path.join(scripts, "terrain_levels.py"),
                tjob.info["run_dir"],
                "--out",
                os.path.join(directory, "terrain_levels.json"),
            ]
            levels[(run, seed)] = Job(f"terrain levels {run} seed {seed}", directory, argv)
    return evals, levels


def checkpoint_terrain_jobs(
    ctx: ExperimentContext, exp: dict, trained: dict[tuple[str, int], Job], settings: dict
) -> dict[tuple[str, int], dict[int, Job]]:
    """{(run, seed): {iteration: evaluate_terrain.py job}} on the periodic checkpoints before each run's final one,
    the last ``settings["checkpoints"] - 1`` of them (the per-terrain evaluation reads the final one); each job in
    ``<run>/seed<s>/terrain_checkpoints/model_<it>``. RuntimeError naming the run directory where it holds fewer."""
    wanted = settings["checkpoints"] - 1
    jobs = {}
    for (run, seed), tjob in trained.items():
        final = trained_checkpoint(tjob)
        earlier = [(it, path) for it, path in periodic_checkpoints(tjob.info["run_dir"]) if path != final]
        if len(earlier) < wanted:
            raise RuntimeError(
                f"terrain_eval.checkpoints={settings['checkpoints']}: {tjob.info['run_dir']} holds {len(earlier)} "
                f"periodic checkpoint(s) besides its final one, {wanted} needed"
            )
        jobs[(run, seed)] = {}
        for it, path in earlier[len(earlier) - wanted :]:
            directory = os.path.join(tjob.directory, "terrain_checkpoints", f"model_{it}")
            out = os.path.join(directory, "eval_terrain.json")
            argv = terrain_rollout_argv(ctx, exp, (run, seed), tjob, settings, "evaluate_terrain.py", out, (), path)
            jobs[(run, seed)][it] = Job(f"evaluate per terrain {run} seed {seed} model_{it}", directory, argv)
    return jobs


def checkpoints_terrain(
    ctx: ExperimentContext, exp: dict, trained: dict[tuple[str, int], Job], settings: dict, final: dict
) -> tuple[str, dict]:
    """Run :func:`checkpoint_terrain_jobs`; the text and numbers of :func:`checkpoints_table` over them and ``final``
    ({(run, seed): the per-terrain evaluation of the final checkpoint})."""
    jobs = checkpoint_terrain_jobs(ctx, exp, trained, settings)
    flat = {(run, seed, it): job for (run, seed), by_it in jobs.items() for it, job in by_it.items()}
    loaded = run_and_load(flat, ctx.size["parallel_jobs"], "eval_terrain.json")
    evals = {key: {checkpoint_iteration(trained_checkpoint(trained[key])): e} for key, e in final.items()}
    for (run, seed, it), e in loaded.items():
        evals[(run, seed)][it] = e
    table, numbers = checkpoints_table(exp, evals)
    text = (
        f"Over the last {settings['checkpoints']} checkpoints (`evaluate_terrain.py` on each periodic checkpoint, "
        "the final one that of the per-terrain table; the same terrain, envs and commands): falls [%] and tracking "
        "error [m/s] over all episodes of a checkpoint, as the mean over the run's seeds of each seed's mean over "
        "its checkpoints +- the std of those means (per seed in brackets); drift: the mean over the seeds of each "
        "seed's std over its checkpoints, how much one checkpoint's reading moves from the next.\n\n" + table
    )
    return text, numbers


def fall_cause_jobs(ctx: ExperimentContext, exp: dict, trained: dict[tuple[str, int], Job], settings: dict) -> dict:
    """{(run, seed): fall_causes.py job}: the episodes of the per-terrain evaluation (same terrain, seed and envs)."""
    jobs = {}
    for (run, seed), tjob in trained.items():
        directory = os.path.join(tjob.directory, "fall_causes")
        out = os.path.join(directory, "fall_causes.json")
        argv = terrain_rollout_argv(ctx, exp, (run, seed), tjob, settings, "fall_causes.py", out)
        jobs[(run, seed)] = Job(f"fall causes {run} seed {seed}", directory, argv)
    return jobs


def terrain_tables(ctx: ExperimentContext, exp: dict, trained: dict[tuple[str, int], Job], settings: dict) -> dict:
    """Run the terrain jobs; ``{"tables": [per terrain, curriculum (SHAC runs only), fall causes], "terrain":
    numbers, "curriculum": numbers, "fall_causes": numbers}``; with ``settings["checkpoints"]`` > 1 also the table
    over the last checkpoints (after the per-terrain one) and its numbers as ``"terrain_checkpoints"``."""
    eval_jobs, level_jobs = terrain_jobs(ctx, exp, trained, settings)
    loaded = {
        group: run_and_load(eval_jobs[folder], ctx.size["parallel_jobs"], "eval_terrain.json")
        for folder, _, group in TERRAIN_EVALUATIONS
    }
    records = run_and_load(level_jobs, ctx.size["parallel_jobs"], "terrain_levels.json")
    by_speed, speed_numbers = speed_table(exp, {"terrain": loaded[""], FLAT_GROUP: loaded[FLAT_GROUP]})
    final = loaded.pop("")
    per_terrain, terrain_numbers = terrain_table(exp, final, loaded)
    curriculum, curriculum_numbers = curriculum_table(exp, records)
    causes = run_and_load(fall_cause_jobs(ctx, exp, trained, settings), ctx.size["parallel_jobs"], "fall_causes.json")
    causes_table, causes_numbers = fall_causes_table(exp, causes)
    tables = [
        "Per terrain (`scripts/experiments/evaluate_terrain.py`): each run's final checkpoint on its evaluation "
        f"task in hard contact, the first episode of each of {settings['num_envs']} envs on the terrain of seed "
        f"{settings['seed']} (the same terrain for every run and seed), grouped by the sub-terrain type and by "
        "the level the env started on; falls [%] and tracking error [m/s] as mean +- std over the run's seeds "
        "(per seed in brackets), episodes summed over the seeds. Tilted falls [%]: the episodes whose fall had the "
        "base tilted past the limit (60 degrees; the other falls had it too low over the ground below it; `-` for "
        "evaluations from before it was recorded). `all`: every episode. `flat ground`: the same "
        "envs and commands with every sub-terrain a plane (`evaluate_terrain.py --flat`). `flattened scan`: the "
        "same terrain with every height-scan point at the mean of its env's scan (`evaluate_terrain.py "
        "--flatten_scan`): the policy without the terrain's shape. `forward commands`: the same terrain and envs "
        "with the commands of the MuJoCo episodes (`evaluate_terrain.py --forward_commands`: forward only, uniform "
        f"in {FORWARD_VX_RANGE[0]:g}..{FORWARD_VX_RANGE[1]:g} m/s, one per episode), the row to read beside "
        "MuJoCo's.\n\n" + per_terrain,
        "Terrain-level curriculum (`scripts/experiments/terrain_levels.py`, SHAC runs): the share of the "
        "training envs at each level [%] and their mean level, stored in the checkpoints; the first, the first "
        "at or after every 100 iterations, and the last.\n\n" + curriculum,
        "How the falls happen (`scripts/experiments/fall_causes.py`): the per-terrain evaluation's episodes again "
        "(same terrain, envs and seed), each fall read at the last step before it: the base rolled (tilted more "
        "about its x axis than about its y axis), the command sideways (|vy| > 0.5 m/s) or backward (vx < -0.3 "
        "m/s), and a foot hanging in the 0.5 s before it (in the air for more than 0.3 s and more than 5 cm above "
        "the ground below it), each as a share of the seed's falls; for comparison, the share of the 0.5 s windows "
        "of the envs that did not fall with a hanging foot. Mean +- std over the run's seeds (per seed in "
        "brackets); groups without a fall are left out.\n\n" + causes_table,
    ]
    if not records:
        tables.pop(1)
    out = {"terrain": terrain_numbers, "curriculum": curriculum_numbers, "fall_causes": causes_numbers}
    if speed_numbers:
        tables.append(
            "Tracking by command speed (`evaluate_terrain.py`'s `speed_profile`): the steps of the per-terrain "
            "evaluation (`terrain`) and of its flat-ground twin (`flat ground`) grouped by the commanded planar "
            "speed |v_xy,cmd|: their share [%], the mean commanded speed, the mean speed along the command (v . "
            "v_cmd / |v_cmd|) and the mean tracking error |v_xy,cmd - v_xy|, mean +- std over the run's seeds (per "
            "seed in brackets). A policy that saturates keeps the same speed along the command in the fast bands.\n\n"
            + by_speed
        )
        out["speed"] = speed_numbers
    if settings["checkpoints"] > 1:
        text, out["terrain_checkpoints"] = checkpoints_terrain(ctx, exp, trained, settings, final)
        tables.insert(1, text)
    if settings["mujoco_episodes"] is not None:
        mujoco = mujoco_table(ctx, exp, trained, settings)
        tables.insert(1, mujoco.pop("table"))
        out.update(mujoco)
    return {"tables": tables, **out}


def run(ctx: ExperimentContext, exp: dict) -> dict:
    settings = terrain_eval(exp)  # refused before any training
    trained = train_runs(ctx, exp)
    loaded = run_and_load(evaluation_jobs(ctx, exp, trained), ctx.size["parallel_jobs"], "locomotion.json")
    table, numbers = summarize(exp, loaded)
    terrain = terrain_tables(ctx, exp, trained, settings) if settings is not None else {}
    terrain_text = terrain.pop("tables", [])
    base = " ".join(f"`{o}`" for o in exp.get("base_overrides", [])) or "none"
    pinned = " ".join(f"`{o}`" for o in exp.get("train_overrides", []))
    pinned = f" (in training also {pinned})" if pinned else ""
    result = {
        "tables": [
            f"Each run: SHAC (PPO where the factor says so) on `{exp['task']}` (or the run's task) with the base "
            f"overrides {base}{pinned} plus "
            f"the run's factor, {ctx.size['shac_iterations']} iterations ({ctx.size['ppo_iterations']} for PPO) "
            "unless the factor says otherwise. Evaluated in hard contact: "
            f"return, tracking error and falls over the first episode of {ctx.size['eval_envs']} envs (play "
            f"commands); gait measures over 10 s at {exp['gait_command']} m/s forward (envs that did not fall, first "
            "2 s dropped): the dominant period of the joint trajectories and their autocorrelation there, "
            "touchdowns per foot per second, mean air phase, highest foot lift; stand drift: base displacement "
            "over 10 s at a zero command.\n\n" + table,
            *terrain_text,
        ],
        "numbers": numbers,
        "training_wall_s": {f"{r} seed {s}": job.result()["wall_s"] for (r, s), job in trained.items()},
        "checkpoints": {f"{r} seed {s}": trained_checkpoint(job) for (r, s), job in trained.items()},
    }
    return {**result, **terrain}
