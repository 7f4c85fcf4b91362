"""Claim 3's driver: environment samples SHAC and PPO need to reach the same training return (TensorBoard logs)."""

from __future__ import annotations

import os

from isaaclab_diffsim.experiments.sample_efficiency import levels_table, load_curve, plot_curves

from .context import ExperimentContext
from .training import source_checkpoint


def ppo_samples_per_iteration(task: str, num_envs: int) -> int:
    from isaaclab_diffsim.tasks.task_cfgs import load_task_cfgs

    _, agent = load_task_cfgs(task, "rsl_rl_cfg_entry_point")
    return int(num_envs * agent.num_steps_per_env)


def run(ctx: ExperimentContext, exp: dict) -> dict:
    from omegaconf import OmegaConf

    source_cfg = OmegaConf.load(os.path.join(ctx.repo, "configs", "experiment", f"{exp['source_experiment']}.yaml"))
    seeds, task = list(source_cfg.seeds), str(source_cfg.task)
    per_iteration = ppo_samples_per_iteration(task, ctx.size["num_envs"])
    curves = {"shac": [], "ppo": []}
    for seed in seeds:
        for algo, run_name, tag, per in (
            ("shac", exp["shac_run"], "Train/mean_reward/samples", None),
            ("ppo", exp["ppo_run"], "Train/mean_reward", per_iteration),
        ):
            run_dir = os.path.dirname(source_checkpoint(ctx, exp["source_experiment"], run_name, seed))
            curves[algo].append(load_curve(run_dir, tag, per))
    table, numbers = levels_table(curves, exp["levels"])
    labels = {algo: f"{algo.upper()} ({exp[algo + '_run']})" for algo in curves}
    plot_curves(curves, labels, ctx.path("sample_efficiency.png"))
    final = numbers["final_return"]
    text = (
        f"Training returns of Table 1's runs (seeds {seeds}); PPO samples = iterations x {per_iteration}. "
        f"Final returns: SHAC {final['shac']:.2f}, PPO {final['ppo']:.2f}. Levels are fractions of the lower "
        f"final return.\n\n" + table
    )
    return {"tables": [text], "figures": ["sample_efficiency.png"], "numbers": numbers}
