"""Evaluate one checkpoint as a locomotion controller in hard contact and write the metrics as JSON.

    .venv/bin/python scripts/experiments/evaluate_locomotion.py --algo shac --checkpoint RUN/model_500.pt \
        --num_envs 64 --out locomotion.json

Three parts, each from a reset with ``--seed``, in the play configuration of the task (no pushes, no observation
noise) and ``--contact_models`` (default hard):

- **tracking**: the first episode of each env with the play commands (``rl.evaluation.evaluate``): return,
  velocity-tracking error per axis (x, y, yaw), falls;
- **gait**: ``--duration`` s at a fixed forward command ``--gait_command``: the dominant period of the joint
  trajectories and the autocorrelation there, touchdowns per foot per second, air-phase durations and the highest
  foot lift (envs that fell are left out; the first ``--transient`` s are dropped);
- **stand**: ``--duration`` s at a zero command: the base's horizontal drift, the highest foot lift and the
  touchdowns per foot per second after the first ``--transient`` s.
"""

from __future__ import annotations

import argparse
import json
import os
import time

import numpy as np
import torch
from policy_env import add_policy_arguments, contact_models, make_policy_env

from isaaclab_diffsim.experiments import gait_measures as gm
from isaaclab_diffsim.rl.evaluation import evaluate

CONTACT_FORCE_N = 1.0
"""A foot is in contact when its normal contact force is above this (Isaac Lab's contact-sensor threshold)."""


@torch.no_grad()
def fixed_command_rollout(env, policy, command: tuple[float, float, float], steps: int, seed: int) -> dict:
    """Roll out ``steps`` policy steps from a reset with every env commanded ``command`` (no resampling)."""
    c = env.cfg.commands
    saved = (c.lin_vel_x, c.lin_vel_y, c.ang_vel_z, c.heading_command, c.rel_standing_envs, c.resampling_time_s)
    c.lin_vel_x, c.lin_vel_y, c.ang_vel_z = (command[0],) * 2, (command[1],) * 2, (command[2],) * 2
    c.heading_command, c.rel_standing_envs = False, 0.0
    c.resampling_time_s = 2.0 * steps * env.step_dt
    try:
        torch.manual_seed(seed)
        obs = env.reset(seed=seed)
        start = env.q[:, :2].clone()
        joints, contact, lift, fell = [], [], [], np.full(env.num_envs, -1)
        threshold = CONTACT_FORCE_N * env.cfg.sim_dt
        for t in range(steps):
            obs, _, term, trunc, _ = env.step(policy(obs))
            joints.append(env.q[:, 7:].cpu().numpy().copy())
            impulses = env.sim.last_contact_impulses().view(env.num_envs, -1, 3)[..., 0]
            contact.append((impulses > threshold).cpu().numpy())
            lift.append(env.foot_heights(env.body_q).cpu().numpy())
            newly = (term | trunc).cpu().numpy() & (fell < 0)
            fell[newly] = t
            if t == steps - 1:
                drift = (env.q[:, :2] - start).norm(dim=1).cpu().numpy()
    finally:
        c.lin_vel_x, c.lin_vel_y, c.ang_vel_z, c.heading_command, c.rel_standing_envs, c.resampling_time_s = saved
    return {
        "joints": np.array(joints),
        "contact": np.array(contact),
        "lift": np.array(lift),
        "fell": fell,
        "drift": drift,
    }


def gait_metrics(roll: dict, dt: float, transient: float) -> dict:
    start = int(round(transient / dt))
    kept = [e for e in range(roll["joints"].shape[1]) if roll["fell"][e] < 0]
    per_env = {"period_s": [], "autocorrelation": [], "steps_per_s": [], "mean_air_time_s": [], "max_lift_m": []}
    for e in kept:
        period, r = gm.dominant_period(roll["joints"][start:, e, :], dt)
        per_env["period_s"].append(period)
        per_env["autocorrelation"].append(r)
        contact = roll["contact"][start:, e, :]
        per_env["steps_per_s"].append(gm.steps_per_second(contact, dt))
        air = gm.air_phases(contact, dt)
        per_env["mean_air_time_s"].append(float(air.mean()) if len(air) else 0.0)
        per_env["max_lift_m"].append(float(roll["lift"][start:, e, :].max()))
    return {"envs_kept": len(kept), "envs": int(roll["joints"].shape[1]), **per_env}


def stand_touchdowns(roll: dict, dt: float, transient: float) -> np.ndarray:
    """Touchdowns per foot per second of each env after the first ``transient`` seconds (the reset's velocity and
    pose settle before)."""
    start = int(round(transient / dt))
    contact = roll["contact"][start:]
    return np.array([gm.steps_per_second(contact[:, e, :], dt) for e in range(contact.shape[1])])


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_policy_arguments(p, contact_models="hard", num_envs=64)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--gait_command", type=float, default=0.6, help="forward velocity command of the gait part [m/s]")
    p.add_argument("--duration", type=float, default=10.0, help="length of the gait and stand rollouts [s]")
    p.add_argument("--transient", type=float, default=2.0, help="dropped before the gait measures [s]")
    args = p.parse_args()
    if args.duration <= args.transient + 4.0:
        raise SystemExit(
            f"--duration must exceed --transient by more than 4 s (two 2 s periods), got "
            f"{args.duration} and {args.transient}"
        )
    models = contact_models(args)

    def seeded(env_cfg):
        env_cfg.seed = args.seed
        if env_cfg.episode_length_s < args.duration:
            raise SystemExit(f"--duration {args.duration} s is longer than an episode ({env_cfg.episode_length_s} s)")

    env, policy, _ = make_policy_env(args, seeded)
    steps = int(round(args.duration / env.step_dt))
    out = {
        "checkpoint": os.path.abspath(args.checkpoint),
        "algo": args.algo,
        "num_envs": args.num_envs,
        "gait_command": args.gait_command,
        "duration_s": args.duration,
        "models": {},
    }
    for model in models:
        t0 = time.time()
        env.set_contact_model(model)
        torch.manual_seed(args.seed)
        env.reset(seed=args.seed)
        result = evaluate(env, policy, args.num_envs, progress=False)
        gait = fixed_command_rollout(env, policy, (args.gait_command, 0.0, 0.0), steps, args.seed)
        stand = fixed_command_rollout(env, policy, (0.0, 0.0, 0.0), steps, args.seed)
        standing = stand["fell"] < 0
        out["models"][model] = {
            "returns": result.returns.tolist(),
            "tracking_errors": result.tracking_errors.tolist(),
            "yaw_errors": result.yaw_errors.tolist(),
            "falls": result.falls.astype(float).tolist(),
            "gait": gait_metrics(gait, env.step_dt, args.transient),
            "stand": {
                "drift_m": stand["drift"][standing].tolist(),
                "falls": float((~standing).mean()),
                "max_lift_m": stand["lift"][:, standing].max(axis=(0, 2)).tolist(),
                "steps_per_s": stand_touchdowns(stand, env.step_dt, args.transient)[standing].tolist(),
            },
        }
        g, s = out["models"][model]["gait"], out["models"][model]["stand"]
        mean = lambda v: float(np.mean(v)) if len(v) else float("nan")  # noqa: E731
        print(
            f"[evaluate] {model}: {result.summary()}; gait at {args.gait_command} m/s: period "
            f"{mean(g['period_s']):.2f} s, autocorrelation {mean(g['autocorrelation']):.2f}, "
            f"{mean(g['steps_per_s']):.2f} steps/s per foot, air time {mean(g['mean_air_time_s']):.3f} s, "
            f"lift {mean(g['max_lift_m']) * 100:.1f} cm ({g['envs_kept']}/{g['envs']} envs); stand: drift "
            f"{mean(s['drift_m']):.3f} m in {args.duration:g} s, {mean(s['steps_per_s']):.2f} steps/s per foot, "
            f"falls {100 * s['falls']:.1f} % "
            f"({time.time() - t0:.0f} s)",
            flush=True,
        )
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(out, f)
    print(f"[evaluate] wrote {args.out}", flush=True)


if __name__ == "__main__":
    main()
