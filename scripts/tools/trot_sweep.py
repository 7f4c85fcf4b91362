"""Size a robot's trot: zero actions on a task's ``-Play`` config under several trajectory-generator settings.

Each setting (``period_s,joint_swing_scale[,kp[,kd]]``; kp/kd 0 or left out: the task's) runs ``--envs`` envs in hard
contact for ``--seconds`` with zero actions, so the generator alone moves the legs. It prints the failures and the
highest and mean foot lift (the first second dropped). A trot that fails with zero actions tips the policy over
before it can learn; one that lifts the feet 5-10 cm without failures is a place to start.

    .venv/bin/python scripts/tools/trot_sweep.py --task DiffSim-Velocity-Flat-Go2-Direct 0.6,1.0 0.4,0.5,40
"""

from __future__ import annotations

import argparse

import torch

from isaaclab_diffsim.tasks.direct.locomotion.velocity import DiffVelocityEnv
from isaaclab_diffsim.tasks.task_cfgs import load_task_cfgs


def parse_setting(text: str) -> tuple[float, float, float, float]:
    values = [float(v) for v in text.split(",")]
    if not 2 <= len(values) <= 4 or values[0] <= 0 or values[1] < 0 or any(v < 0 for v in values[2:]):
        raise argparse.ArgumentTypeError(f"expected period_s>0,joint_swing_scale>=0[,kp>=0[,kd>=0]], got {text!r}")
    return (*values, 0.0, 0.0)[:4]


@torch.no_grad()
def sweep(task: str, setting, envs: int, seconds: float, seed: int) -> dict:
    period, scale, kp, kd = setting
    cfg, _ = load_task_cfgs(task + "-Play", "shac_cfg_entry_point")
    cfg.num_envs, cfg.gait.period_s, cfg.gait.joint_swing_scale = envs, period, scale
    cfg.kp, cfg.kd = kp or cfg.kp, kd or cfg.kd
    env = DiffVelocityEnv(cfg)
    env.reset(seed=seed)
    steps, skip = round(seconds / env.step_dt), round(1.0 / env.step_dt)
    failures, lift = 0, []
    for _ in range(steps):
        _, _, terminated, _, _ = env.step(torch.zeros(envs, env.num_actions))
        failures += int(terminated.sum())
        lift.append(env.foot_heights(env.body_q).max(1).values.mean().item())
    lift = lift[skip:]
    return {"kp": cfg.kp, "kd": cfg.kd, "failures": failures, "max_lift": max(lift), "mean_lift": sum(lift) / len(lift)}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--task", required=True, help="a differentiable task id (its -Play config is used)")
    parser.add_argument("settings", nargs="+", type=parse_setting, help="period_s,joint_swing_scale[,kp[,kd]]")
    parser.add_argument("--envs", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    torch.set_num_threads(1)
    print("| period [s] | swing scale | kp | kd | failures | highest foot lift [m] | mean foot lift [m] |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for setting in args.settings:
        r = sweep(args.task, setting, args.envs, args.seconds, args.seed)
        print(
            f"| {setting[0]} | {setting[1]} | {r['kp']} | {r['kd']} | {r['failures']} | {r['max_lift']:.3f} | "
            f"{r['mean_lift']:.3f} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
