"""The deployability suite's jobs: SHAC runs trained like a recipe study's, then each run's exported bundle
through ``scripts/deploy/sim2sim.py`` in MuJoCo and in our hard contact model under the experiment's variants."""

from __future__ import annotations

import os
import shutil

from isaaclab_diffsim.experiments.deployability import (
    GOAL_FALL_RATE,
    GOAL_STAND_DRIFT,
    GOAL_TRACKING,
    SIMS,
    STAND_VARIANT,
    long_check_exp,
    summarize,
)

from .context import ExperimentContext
from .jobs import Job, python, run_and_load
from .recipe import train_runs

RESULT_FILE = "sim2sim.json"
TRACE_FILE = "trace.json"


def command_range_args(exp: dict) -> list[str]:
    """sim2sim.py's ``--vy_range`` / ``--yaw_range`` from the experiment's keys of those names (none: forward only)."""
    args = []
    for key in ("vy_range", "yaw_range"):
        if key in exp:
            low, high = exp[key]
            args += [f"--{key}", str(low), str(high)]
    return args


def sim2sim_argv(ctx: ExperimentContext, exp: dict, bundle: str, sim: str, seed: int, directory: str) -> list[str]:
    """sim2sim.py on ``bundle`` in ``sim`` with ``exp``'s variants, episodes, episode length and command ranges."""
    return [
        python(),
        os.path.join(ctx.repo, "scripts", "deploy", "sim2sim.py"),
        bundle,
        "--sim",
        sim,
        "--variants",
        ",".join(exp["variants"]),
        "--episodes",
        str(exp["episodes"]),
        "--episode_s",
        str(exp["episode_s"]),
        "--seed",
        str(seed),
        "--out",
        os.path.join(directory, RESULT_FILE),
        *command_range_args(exp),
    ]


def long_check_jobs(ctx: ExperimentContext, exp: dict, trained: dict[tuple[str, int], Job]) -> dict:
    """One MuJoCo job per (run, seed) of the experiment's ``long_check`` runs (none without a long check)."""
    long_exp = long_check_exp(exp)
    if long_exp is None:
        return {}
    jobs = {}
    for (run, seed), tjob in trained.items():
        if run in long_exp["runs"]:
            directory = os.path.join(tjob.directory, "sim2sim_mujoco_long")
            bundle = os.path.join(tjob.info["run_dir"], "exported")
            argv = sim2sim_argv(ctx, long_exp, bundle, "mujoco", long_exp["seed"], directory)
            jobs[(run, seed, "mujoco")] = Job(f"sim2sim mujoco long check {run} seed {seed}", directory, argv)
    return jobs


def sim2sim_jobs(ctx: ExperimentContext, exp: dict, trained: dict[tuple[str, int], Job]) -> dict:
    """One job per (run, seed, simulator): sim2sim.py on ``<run>/exported`` with the experiment's variants."""
    jobs = {}
    for (run, seed), tjob in trained.items():
        bundle = os.path.join(tjob.info["run_dir"], "exported")
        for sim in SIMS:
            directory = os.path.join(tjob.directory, f"sim2sim_{sim}")
            argv = sim2sim_argv(ctx, exp, bundle, sim, exp.get("eval_seed", 0), directory)
            if sim == "diffsim":
                argv += ["--device", ctx.size["device"]]
            else:  # the Figure 6 analogue
                argv += ["--trace", os.path.join(directory, TRACE_FILE), "--trace_step_s", str(exp["trace_step_s"])]
            jobs[(run, seed, sim)] = Job(f"sim2sim {sim} {run} seed {seed}", directory, argv)
    return jobs


def commands_text(exp: dict) -> str:
    """How the episodes' commands are drawn, for the page: forward only, or with the lateral and yaw ranges."""
    extra = [f"{name} in {exp[key]}" for key, name in (("vy_range", "vy"), ("yaw_range", "yaw rate")) if key in exp]
    return "forward commands" if not extra else "commands (vx in [-1, 1], " + ", ".join(extra) + ")"


def stand_text(exp: dict) -> str:
    if STAND_VARIANT not in exp["variants"]:
        return ""
    return (
        f"; with the zero command ({STAND_VARIANT}): no touchdown in any episode and a mean base drift below "
        f"{GOAL_STAND_DRIFT} m over the episode"
    )


def run(ctx: ExperimentContext, exp: dict) -> dict:
    if "nominal" not in exp["variants"]:
        raise SystemExit(f"experiment {exp['name']}: variants must include nominal (the goal's tracking error)")
    trained = train_runs(ctx, exp)
    loaded = run_and_load(sim2sim_jobs(ctx, exp, trained), ctx.size["parallel_jobs"], RESULT_FILE)
    long_loaded = run_and_load(long_check_jobs(ctx, exp, trained), ctx.size["parallel_jobs"], RESULT_FILE)
    tables, numbers = summarize(exp, loaded, long_loaded)
    figures = []
    for (run, seed), tjob in trained.items():
        png = os.path.join(tjob.directory, "sim2sim_mujoco", TRACE_FILE.replace(".json", ".png"))
        if os.path.isfile(png):  # matplotlib installed
            figures.append(f"velocity_trace_{run}_seed{seed}.png")
            shutil.copy(png, ctx.path(figures[-1]))
    base = " ".join(f"`{o}`" for o in exp.get("base_overrides", [])) or "none"
    intro = (
        f"Each run: SHAC on `{exp['task']}` with the base overrides {base} plus the run's own, "
        f"{ctx.size['shac_iterations']} iterations unless the run says otherwise; its exported bundle driven by "
        f"`scripts/deploy/sim2sim.py` through onnxruntime, {exp['episodes']} episodes of {exp['episode_s']} s per "
        f"variant ({commands_text(exp)} drawn from one seed, the same in both simulators). Goal per seed in MuJoCo: "
        f"falls < {100 * GOAL_FALL_RATE:.0f} % in every variant with friction 0.4-1.2, payload -5 to +10 kg, pushes "
        f"up to 1 m/s, latency up to 2 control steps and motor strength +-20 %, and a nominal tracking error "
        f"< {GOAL_TRACKING} m/s{stand_text(exp)}. Figures: commanded against achieved forward velocity in MuJoCo "
        f"for the steps 0, 0.5, 1.0, 0 m/s of {exp['trace_step_s']} s each."
    )
    return {
        "tables": [intro + "\n\n" + tables[0], *tables[1:]],
        "figures": figures,
        "numbers": numbers,
        "training_wall_s": {f"{r} seed {s}": job.result()["wall_s"] for (r, s), job in trained.items()},
        "bundles": {f"{r} seed {s}": os.path.join(job.info["run_dir"], "exported") for (r, s), job in trained.items()},
    }
