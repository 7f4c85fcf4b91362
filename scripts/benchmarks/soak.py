"""Soak test of the ANYmal C env: many random-action steps in each contact model, with resets and pushes, looking
for NaN/inf, deep penetration, runaway joint velocities and bases below the ground.

    .venv/bin/python scripts/benchmarks/soak.py                        # 10^6 env steps per contact model, CPU
    .venv/bin/python scripts/benchmarks/soak.py --env_steps 64000      # a quick check

Actions are Gaussian (``--action_std``, in action units: x ``action_scale`` rad of joint-target offset), episodes are
short (``--episode_length_s``) so that resets are frequent, and pushes come every ``--push_interval_s``. The run is
stepped in chunks (a progress line per chunk). Per contact model it reports:

- non-finite events: the env refuses a NaN/inf action, state, reward or observation with a FloatingPointError naming
  the quantity, the env ids and the step; the soak records it, resets the env and goes on;
- the maximum foot penetration (depth of the lowest point of a foot sphere below the ground) and the maximum joint
  speed, both at the end of each policy step (before resets), and the fraction of env-steps with the base below z = 0;
- every bad state (penetration above ``--max_penetration``, joint speed above ``--max_joint_speed``, base below 0) with
  its env id and step (the first ``--show`` of each kind are printed, all are counted).

Exits with status 1 if anything was non-finite or bad. ``--json`` writes the figures to a file.
"""

from __future__ import annotations

import argparse
import json
import math
import time

import torch

from isaaclab_diffsim.tasks.direct.locomotion.velocity import DiffVelocityEnv
from isaaclab_diffsim.tasks.task_cfgs import apply_overrides, load_task_cfgs

TASK = "DiffSim-Velocity-Flat-AnymalC-Direct"


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--contact_models", nargs="+", default=["hard", "smoothed", "soft"])
    p.add_argument("--num_envs", type=int, default=128)
    p.add_argument(
        "--env_steps",
        type=int,
        default=1_000_000,
        help="env steps (envs x policy steps) per contact model; at the 2,200 / 2,600 / 7,300 env-steps/s"
        " measured for hard / smoothed / soft with 128 envs on a shared 2-core CPU the default takes"
        " about 16 min for the three models",
    )
    p.add_argument("--chunk", type=int, default=50, help="policy steps per chunk (one progress line each)")
    p.add_argument("--action_std", type=float, default=1.0)
    p.add_argument("--episode_length_s", type=float, default=4.0)
    p.add_argument("--push_interval_s", type=float, nargs=2, default=(1.0, 3.0))
    p.add_argument("--push_velocity", type=float, default=1.0)
    p.add_argument("--max_penetration", type=float, default=0.05, help="[m] deeper is reported as bad")
    p.add_argument("--max_joint_speed", type=float, default=50.0, help="[rad/s] faster is reported as bad")
    p.add_argument("--show", type=int, default=10, help="bad states printed per kind and model")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--device", default="cpu")
    p.add_argument("--json", default=None, help="write the figures to this file")
    p.add_argument("overrides", nargs="*", help="env.<field>=value (default asset_source: urdf)")
    return p.parse_args()


class StepProbe:
    """Keeps the pre-reset result of the env's last physics step (joint_q, joint_qd, body_q)."""

    def __init__(self, env: DiffVelocityEnv):
        self.sim_step, self.out = env.sim.step, None
        env.sim.step = self

    def __call__(self, *args, **kwargs):
        self.out = self.sim_step(*args, **kwargs)
        return self.out


def soak(args, contact_model: str) -> dict:
    env_cfg, _ = load_task_cfgs(TASK, "shac_cfg_entry_point")
    env_cfg.asset_source = "urdf"  # several envs per process (Isaac Lab's simulation context is a singleton)
    apply_overrides(args.overrides, env=env_cfg)
    env_cfg.num_envs, env_cfg.device, env_cfg.seed = args.num_envs, args.device, args.seed
    env_cfg.solver_cfg.contact_model = contact_model
    env_cfg.episode_length_s = args.episode_length_s
    env_cfg.events.push_interval_s = tuple(args.push_interval_s)
    env_cfg.events.push_velocity = args.push_velocity
    env_cfg.validate_values()
    env = DiffVelocityEnv(env_cfg)
    probe = StepProbe(env)
    gen = torch.Generator(device=env.device).manual_seed(args.seed)
    n = env.num_envs
    steps = math.ceil(args.env_steps / n)
    stats = {
        "contact_model": contact_model,
        "num_envs": n,
        "policy_steps": steps,
        "env_steps": steps * n,
        "nonfinite": 0,
        "nonfinite_messages": [],
        "max_penetration_m": 0.0,
        "max_joint_speed_rad_s": 0.0,
        "base_below_ground_env_steps": 0,
        "resets": 0,
        "pushes": 0,
        "bad": {"penetration": 0, "joint_speed": 0, "base_below_ground": 0},
    }
    shown = {k: 0 for k in stats["bad"]}

    def report(kind: str, mask: torch.Tensor, values: torch.Tensor, step: int, unit: str) -> None:
        ids = mask.nonzero().flatten()
        stats["bad"][kind] += int(ids.numel())
        for i in ids.tolist():
            if shown[kind] < args.show:
                shown[kind] += 1
                print(f"  [{contact_model}] bad {kind}: env {i} at step {step}: {float(values[i]):.4g} {unit}")

    with torch.no_grad():
        env.reset()
        t0 = time.perf_counter()
        for step in range(1, steps + 1):
            actions = args.action_std * torch.randn(n, 12, generator=gen, device=env.device)
            push_before = env.push_time.clone()
            try:
                _, _, term, trunc, _ = env.step(actions)
            except FloatingPointError as err:
                stats["nonfinite"] += 1
                if len(stats["nonfinite_messages"]) < args.show:
                    stats["nonfinite_messages"].append(f"policy step {step}: {err}")
                    print(f"  [{contact_model}] {err}")
                env.reset()
                continue
            out = probe.out
            q = out.joint_q.view(n, -1)
            depth = (-env.foot_heights(out.body_q)).amax(dim=1)  # deepest foot per env [m]
            speed = out.joint_qd.view(n, -1)[:, 6:].abs().amax(dim=1)
            base_z = q[:, 2]
            stats["max_penetration_m"] = max(stats["max_penetration_m"], float(depth.max()))
            stats["max_joint_speed_rad_s"] = max(stats["max_joint_speed_rad_s"], float(speed.max()))
            below = base_z < 0.0
            stats["base_below_ground_env_steps"] += int(below.sum())
            done = term | trunc
            stats["resets"] += int(done.sum())
            stats["pushes"] += int(((env.push_time > push_before) & ~done).sum())  # a push re-draws the push timer
            report("penetration", depth > args.max_penetration, depth, step, "m")
            report("joint_speed", speed > args.max_joint_speed, speed, step, "rad/s")
            report("base_below_ground", below, base_z, step, "m")
            if step % args.chunk == 0 or step == steps:
                el = time.perf_counter() - t0
                print(
                    f"[soak] {contact_model}: {step}/{steps} policy steps ({step * n} env steps, {step * n / el:.0f}"
                    f" env-steps/s) | max penetration {1000 * stats['max_penetration_m']:.1f} mm | max joint speed"
                    f" {stats['max_joint_speed_rad_s']:.1f} rad/s | non-finite {stats['nonfinite']}",
                    flush=True,
                )
    stats["seconds"] = time.perf_counter() - t0
    stats["base_below_ground_rate"] = stats["base_below_ground_env_steps"] / stats["env_steps"]
    env.close()
    return stats


def main():
    args = parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(args.seed)
    results = [soak(args, m) for m in args.contact_models]
    print(
        f"\n{'contact':>9} {'env steps':>10} {'resets':>7} {'pushes':>7} {'non-finite':>10} {'max pen. [mm]':>13}"
        f" {'max |qd| [rad/s]':>16} {'base<0 rate':>11} {'bad states':>10} {'time [s]':>8}"
    )
    for r in results:
        print(
            f"{r['contact_model']:>9} {r['env_steps']:>10} {r['resets']:>7} {r['pushes']:>7} {r['nonfinite']:>10}"
            f" {1000 * r['max_penetration_m']:>13.2f} {r['max_joint_speed_rad_s']:>16.2f}"
            f" {r['base_below_ground_rate']:>11.2e} {sum(r['bad'].values()):>10} {r['seconds']:>8.0f}"
        )
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    failed = any(r["nonfinite"] or any(r["bad"].values()) for r in results)
    raise SystemExit(1 if failed else 0)


if __name__ == "__main__":
    main()
