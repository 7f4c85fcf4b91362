"""Return against samples for a SHAC run and a PPO run (TensorBoard logs of scripts/train.py), side by side.

    .venv/bin/python scripts/experiments/sample_efficiency.py --shac logs/shac/<exp>/<run> --ppo logs/ppo/<exp>/<run>

Prints the mean episode return each run had reached at common sample counts and, for a few return levels,
the samples each needed first to reach it and their ratio (PPO / SHAC): the paper's claim 3. For the runs of
Table 1 over its seeds, use ``scripts/experiments/run.py experiment=sample_efficiency``.
"""

from __future__ import annotations

import argparse

import numpy as np

from isaaclab_diffsim.experiments.sample_efficiency import first_reaching, load_curve


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--shac", required=True)
    parser.add_argument("--ppo", required=True)
    parser.add_argument("--ppo_samples_per_iteration", type=float, required=True, help="num_envs x num_steps_per_env")
    args = parser.parse_args()
    xs, ys = load_curve(args.shac, "Train/mean_reward/samples", None)
    xp, yp = load_curve(args.ppo, "Train/mean_reward", args.ppo_samples_per_iteration)
    top = min(xs.max(), xp.max())
    print(f"{'samples':>10} {'SHAC return':>12} {'PPO return':>11}")
    for s in np.linspace(top / 8, top, 8):
        i, j = np.searchsorted(xs, s, side="right") - 1, np.searchsorted(xp, s, side="right") - 1
        print(f"{s:>10.0f} {ys[max(i, 0)]:>12.2f} {yp[max(j, 0)]:>11.2f}")
    print(f"final: SHAC {ys[-1]:.2f} after {xs[-1]:.0f} samples, PPO {yp[-1]:.2f} after {xp[-1]:.0f} samples")
    print(f"{'return':>8} {'SHAC samples':>13} {'PPO samples':>12} {'PPO/SHAC':>9}")
    for level in np.linspace(0.25, 1.0, 4) * min(ys.max(), yp.max()):
        a, b = first_reaching(xs, ys, level), first_reaching(xp, yp, level)
        print(f"{level:>8.2f} {a:>13.0f} {b:>12.0f} {b / a:>9.1f}")


if __name__ == "__main__":
    main()
