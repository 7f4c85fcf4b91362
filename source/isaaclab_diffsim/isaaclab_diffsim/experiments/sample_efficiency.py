"""Claim 3: environment samples SHAC and PPO need to reach the same training return (TensorBoard logs)."""

from __future__ import annotations

import os

import numpy as np

from .context import ExperimentContext
from .training import source_checkpoint


def load_curve(log_dir: str, tag: str, samples_per_step: float | None) -> tuple[np.ndarray, np.ndarray]:
    """(samples, value) of a scalar; with ``samples_per_step`` the steps are iterations, else already samples."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    acc = EventAccumulator(log_dir, size_guidance={"scalars": 0})
    acc.Reload()
    if tag not in acc.Tags()["scalars"]:
        raise SystemExit(f"{log_dir}: no scalar {tag!r} (have {sorted(acc.Tags()['scalars'])[:12]} ...)")
    events = acc.Scalars(tag)
    x = np.array([e.step for e in events], dtype=float)
    y = np.array([e.value for e in events], dtype=float)
    if samples_per_step is not None:
        x = (x + 1) * samples_per_step
    return x, y


def first_reaching(x: np.ndarray, y: np.ndarray, level: float) -> float:
    """The first x at which y >= level (NaN if never)."""
    idx = np.nonzero(y >= level)[0]
    return float(x[idx[0]]) if len(idx) else float("nan")


def ppo_samples_per_iteration(task: str, num_envs: int) -> int:
    from ..utils.cli import load_task_cfgs

    _, agent = load_task_cfgs(task, "rsl_rl_cfg_entry_point")
    return int(num_envs * agent.num_steps_per_env)


def run(ctx: ExperimentContext, exp: dict) -> dict:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from omegaconf import OmegaConf

    source_cfg = OmegaConf.load(os.path.join(ctx.repo, "configs", "experiment", f"{exp['source_experiment']}.yaml"))
    seeds, task = list(source_cfg.seeds), str(source_cfg.task)
    per_iteration = ppo_samples_per_iteration(task, ctx.size["num_envs"])
    curves = {"shac": [], "ppo": []}
    for seed in seeds:
        for algo, run_name, tag, per in (("shac", exp["shac_run"], "Train/mean_reward/samples", None),
                                         ("ppo", exp["ppo_run"], "Train/mean_reward", per_iteration)):  # fmt: skip
            run_dir = os.path.dirname(source_checkpoint(ctx, exp["source_experiment"], run_name, seed))
            curves[algo].append(load_curve(run_dir, tag, per))
    final = {a: float(np.mean([y[-1] for _, y in c])) for a, c in curves.items()}
    top = min(final.values())
    rows = ["| return level | SHAC samples (per seed) | PPO samples (per seed) | PPO / SHAC (mean) |",
            "| --- | --- | --- | --- |"]  # fmt: skip
    numbers = {"final_return": final, "levels": []}
    for frac in exp["levels"]:
        level = frac * top
        need = {a: [first_reaching(x, y, level) for x, y in c] for a, c in curves.items()}
        ratio = np.nanmean(need["ppo"]) / np.nanmean(need["shac"])
        numbers["levels"].append({"level": level, **need, "ratio": ratio})
        fmt = lambda v: ", ".join("never" if np.isnan(s) else f"{s / 1e3:.0f}k" for s in v)  # noqa: E731
        rows.append(f"| {level:.2f} ({frac:.0%} of {top:.2f}) | {fmt(need['shac'])} | {fmt(need['ppo'])} | {ratio:.1f} |")
    fig, ax = plt.subplots(figsize=(6, 4))
    for algo, color in (("shac", "tab:blue"), ("ppo", "tab:orange")):
        for i, (x, y) in enumerate(curves[algo]):
            ax.plot(x, y, color=color, alpha=0.8, lw=1.0, label=f"{algo.upper()} ({exp[algo + '_run']})" if i == 0 else None)
    ax.set_xscale("log")
    ax.set_xlabel("environment samples")
    ax.set_ylabel("mean training episode return")
    ax.legend()
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(ctx.path("sample_efficiency.png"), dpi=110)
    plt.close(fig)
    text = (f"Training returns of Table 1's runs (seeds {seeds}); PPO samples = iterations x {per_iteration}. "
            f"Final returns: SHAC {final['shac']:.2f}, PPO {final['ppo']:.2f}. Levels are fractions of the lower "
            f"final return.\n\n" + "\n".join(rows))  # fmt: skip
    return {"tables": [text], "figures": ["sample_efficiency.png"], "numbers": numbers}
