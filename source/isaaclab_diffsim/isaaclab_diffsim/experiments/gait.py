"""Figures 7 and 8: gait periodicity of smoothed- vs hard-trained policies, and sim-to-sim overlap."""

from __future__ import annotations

import numpy as np

from . import gait_measures as gm


def periodicity_rows(traces: dict, policies: list[str], transient_s: float) -> tuple[str, dict]:
    header = (
        "| policy (trained in) | envs kept | autocorrelation at T | power at f, 2f.. [%] | stride variability |\n"
        "| --- | --- | --- | --- | --- |"
    )
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
        x = x[-int(round(seconds / dt)) :]
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
    div = np.array(
        [gm.divergence_time(t["base_pos"][a][:, e, :], t["base_pos"][b][:, e, :], dt, threshold) for e in range(n_env)]
    )
    duration = t["joint_pos"].shape[1] * dt
    never = int(np.isinf(div).sum())
    finite = div[np.isfinite(div)]
    div_text = (
        f"base positions more than {threshold * 100:.0f} cm apart after "
        f"{np.median(np.where(np.isinf(div), duration, div)):.2f} s "
        f"(median over {n_env} initial states; min {finite.min():.2f} s, max {finite.max():.2f} s; "
        f"{never} never within {duration:.0f} s)"
        if len(finite)
        else f"base positions never more than {threshold * 100:.0f} cm apart within {duration:.0f} s "
        f"({n_env} initial states)"
    )
    header = "| joint | " + " | ".join(names) + " |\n| --- |" + " --- |" * len(names)
    row = "| RMS smoothed - hard [rad] | " + " | ".join(f"{v:.3f}" for v in rms.mean(axis=0)) + " |"
    return header + "\n" + row + "\n\n" + div_text[0].upper() + div_text[1:] + ".", {
        "rms_per_joint": rms.mean(axis=0).tolist(),
        "divergence_s": div.tolist(),
    }
