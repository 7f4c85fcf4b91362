"""Figures 7 and 8's jobs: rollouts of smoothed- and hard-trained policies in smoothed and in hard contact."""

from __future__ import annotations

import os

import numpy as np

from isaaclab_diffsim.experiments.gait import periodicity_rows, plot_fig7, plot_fig8, sim_to_sim

from .context import ExperimentContext
from .jobs import Job, python, run_jobs
from .training import source_checkpoint


def run(ctx: ExperimentContext, exp: dict) -> dict:
    names = list(dict.fromkeys([*exp["policies"], exp["sim_to_sim_policy"]]))
    jobs = {}
    for name in names:
        ckpt = source_checkpoint(ctx, exp["source_experiment"], name, exp["seed"])
        algo = "ppo" if name.startswith("ppo") else "shac"
        directory = os.path.join(ctx.runs_dir, exp["name"], name)
        argv = [
            python(),
            os.path.join(ctx.repo, "scripts", "experiments", "gait_rollouts.py"),
            "--task",
            exp["eval_task"],
            "--algo",
            algo,
            "--checkpoint",
            ckpt,
            "--contact_models",
            "smoothed,hard",
            "--command",
            str(exp["command"]),
            "--num_envs",
            str(exp["num_envs"]),
            "--reset_seed",
            str(exp["reset_seed"]),
            "--duration",
            str(exp["duration_s"]),
            "--device",
            ctx.size["device"],
            "--out",
            os.path.join(directory, "traces.npz"),
        ]
        jobs[name] = Job(f"rollouts {name}", directory, argv, {"checkpoint": ckpt})
    run_jobs(list(jobs.values()), ctx.size["parallel_jobs"])
    traces = {n: dict(np.load(os.path.join(j.directory, "traces.npz"))) for n, j in jobs.items()}
    table7, numbers7 = periodicity_rows(traces, exp["policies"], exp["transient_s"])
    plot_fig7(traces, exp["policies"], ctx.path("fig7_joint_trajectories.png"))
    table8, numbers8 = sim_to_sim(traces[exp["sim_to_sim_policy"]], exp["divergence_m"])
    plot_fig8(traces[exp["sim_to_sim_policy"]], exp["sim_to_sim_policy"], ctx.path("fig8_sim_to_sim.png"))
    seed, cmd = exp["seed"], exp["command"]
    return {
        "tables": [
            f"**Figure 7 analogue.** Joint trajectories in hard contact, forward command {cmd} m/s, {exp['num_envs']} "
            f"initial states, {exp['duration_s']:g} s each without the first {exp['transient_s']:g} s, training seed "
            f"{seed}; envs that fell are left out. Mean +- std over envs. T = the task's gait period.\n\n" + table7,
            f"**Figure 8 analogue.** `{exp['sim_to_sim_policy']}` (seed {seed}) from the same initial states in "
            f"smoothed and in hard contact; RMS over time of the joint-position difference, mean over envs.\n\n"
            + table8,
        ],
        "figures": ["fig7_joint_trajectories.png", "fig8_sim_to_sim.png"],
        "numbers": {"periodicity": numbers7, "sim_to_sim": numbers8},
        "checkpoints": {n: j.info["checkpoint"] for n, j in jobs.items()},
    }
