"""Figures 7 and 8: gait periodicity of smoothed- vs hard-trained policies, and sim-to-sim overlap."""

from __future__ import annotations

import os

import numpy as np

from . import gait_measures as gm
from .context import ExperimentContext
from .jobs import Job, python, run_jobs
from .training import source_checkpoint


def periodicity_rows(traces: dict, policies: list[str], transient_s: float) -> tuple[str, dict]:
    header = ("| policy (trained in) | envs kept | autocorrelation at T | power at f, 2f.. [%] | stride variability |\n"
              "| --- | --- | --- | --- | --- |")  # fmt: skip
    rows, numbers = [header], {}
    for name in policies:
        t = traces[name]
        hard = list(t["models"]).index("hard")
        dt, period = float(t["dt"]), float(t["gait_period"])
        start = int(round(transient_s / dt))
        kept = [e for e in range(t["joint_pos"].shape[2]) if t["fell"][hard][e] < 0]
        per_env = {"autocorrelation": [], "harmonic_share": [], "stride_variability": []}
        for e in kept:
            x = t["joint_pos"][hard][start:, e, :]
            per_env["autocorrelation"].append(gm.autocorrelation_at(x, int(round(period / dt))))
            per_env["harmonic_share"].append(100.0 * gm.harmonic_power_share(x, dt, period))
            per_env["stride_variability"].append(gm.stride_variability(x, dt, period))
        numbers[name] = per_env
        cells = [f"{np.mean(v):.3f} +- {np.std(v):.3f}" if v else "-" for v in per_env.values()]
        n = t["joint_pos"].shape[2]
        rows.append(f"| {name} | {len(kept)}/{n} | " + " | ".join(cells) + " |")
    return "\n".join(rows), numbers


def plot_fig7(traces: dict, policies: list[str], path: str, seconds: float = 3.0) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(3, len(policies), sharex=True, figsize=(5 * len(policies), 7), squeeze=False)
    for col, name in enumerate(policies):
        t = traces[name]
        hard = list(t["models"]).index("hard")
        dt, names = float(t["dt"]), [str(n) for n in t["joint_names"]]
        x = t["joint_pos"][hard][:, 0, :]
        x = x[-int(round(seconds / dt)):]
        time = np.arange(len(x)) * dt
        for row, kind in enumerate(("HAA", "HFE", "KFE")):
            ax = axes[row][col]
            for j, jn in enumerate(names):
                if jn.endswith(kind):
                    ax.plot(time, x[:, j], label=jn[:2])
            ax.set_ylabel(f"{kind} [rad]")
            ax.legend(fontsize=7, loc="upper right")
        axes[0][col].set_title(f"{name}: hard contact, env 0, last {seconds:g} s")
        axes[-1][col].set_xlabel("time [s]")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def plot_fig8(t: dict, name: str, path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    models = list(t["models"])
    dt, names = float(t["dt"]), [str(n) for n in t["joint_names"]]
    time = np.arange(t["joint_pos"].shape[1]) * dt
    fig, axes = plt.subplots(4, 3, sharex=True, figsize=(12, 9))
    for j, jn in enumerate(names):
        ax = axes.flat[j]
        for m, style in zip(range(len(models)), ("-", "--", ":")):
            ax.plot(time, t["joint_pos"][m][:, 0, j], style, label=models[m])
        ax.set_title(jn, fontsize=8)
    axes.flat[0].legend(fontsize=7)
    fig.suptitle(f"{name}: the same policy and initial state in {' and '.join(models)} contact (env 0)")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def sim_to_sim(t: dict, threshold: float) -> tuple[str, dict]:
    models = list(t["models"])
    a, b = models.index("smoothed"), models.index("hard")
    dt, names = float(t["dt"]), [str(n) for n in t["joint_names"]]
    n_env = t["joint_pos"].shape[2]
    rms = np.array([gm.rms_difference(t["joint_pos"][a][:, e, :], t["joint_pos"][b][:, e, :]) for e in range(n_env)])
    div = np.array([gm.divergence_time(t["base_pos"][a][:, e, :], t["base_pos"][b][:, e, :], dt, threshold)
                    for e in range(n_env)])  # fmt: skip
    duration = t["joint_pos"].shape[1] * dt
    never = int(np.isinf(div).sum())
    finite = div[np.isfinite(div)]
    div_text = (f"base positions more than {threshold * 100:.0f} cm apart after {np.median(np.where(np.isinf(div), duration, div)):.2f} s "
                f"(median over {n_env} initial states; min {finite.min():.2f} s, max {finite.max():.2f} s; "
                f"{never} never within {duration:.0f} s)" if len(finite) else
                f"base positions never more than {threshold * 100:.0f} cm apart within {duration:.0f} s ({n_env} initial states)")  # fmt: skip
    header = "| joint | " + " | ".join(names) + " |\n| --- |" + " --- |" * len(names)
    row = "| RMS smoothed - hard [rad] | " + " | ".join(f"{v:.3f}" for v in rms.mean(axis=0)) + " |"
    return header + "\n" + row + "\n\n" + div_text[0].upper() + div_text[1:] + ".", {
        "rms_per_joint": rms.mean(axis=0).tolist(), "divergence_s": div.tolist()}  # fmt: skip


def run(ctx: ExperimentContext, exp: dict) -> dict:
    names = list(dict.fromkeys([*exp["policies"], exp["sim_to_sim_policy"]]))
    jobs = {}
    for name in names:
        ckpt = source_checkpoint(ctx, exp["source_experiment"], name, exp["seed"])
        algo = "ppo" if name.startswith("ppo") else "shac"
        directory = os.path.join(ctx.runs_dir, exp["name"], name)
        argv = [
            python(), os.path.join(ctx.repo, "scripts", "experiments", "gait_rollouts.py"), "--task", exp["eval_task"],
            "--algo", algo, "--checkpoint", ckpt, "--contact_models", "smoothed,hard", "--command", str(exp["command"]),
            "--num_envs", str(exp["num_envs"]), "--reset_seed", str(exp["reset_seed"]),
            "--duration", str(exp["duration_s"]), "--device", ctx.size["device"],
            "--out", os.path.join(directory, "traces.npz"),
        ]  # fmt: skip
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
            f"smoothed and in hard contact; RMS over time of the joint-position difference, mean over envs.\n\n" + table8,
        ],
        "figures": ["fig7_joint_trajectories.png", "fig8_sim_to_sim.png"],
        "numbers": {"periodicity": numbers7, "sim_to_sim": numbers8},
        "checkpoints": {n: j.info["checkpoint"] for n, j in jobs.items()},
    }
