"""Statics of each robot in each contact model: stand with zero actions and compare the feet's load with m g.

Each robot (``DiffVelocityEnvCfg.use_robot``: its own gains; one env, no pushes, noise or reset/startup
randomisation) stands for ``--seconds`` with zero actions; over the last second it reports the mean normal contact
force of the feet against m g, the base height and its range, and the base's horizontal drift.
Prints a markdown table; ``--out`` writes JSON.

    .venv/bin/python scripts/experiments/robot_statics.py [--robots anymal_c,go2] [--contact_models hard,smoothed]
"""

from __future__ import annotations

import argparse
import json

import torch

from isaaclab_diffsim.assets.robots import ROBOTS
from isaaclab_diffsim.solver.type_ids import CONTACT_MODELS
from isaaclab_diffsim.tasks.direct.locomotion.velocity import DiffVelocityEnv, DiffVelocityEnvCfg


def resting_env(robot: str, contact_model: str) -> DiffVelocityEnv:
    """One env of ``robot`` on Isaac Lab's flat MDP at rest: no pushes, noise or reset/startup randomisation."""
    cfg = DiffVelocityEnvCfg(num_envs=1)
    cfg.use_robot(ROBOTS[robot])
    cfg.solver_cfg.contact_model = contact_model
    ev = cfg.events
    ev.push_velocity, ev.reset_base_velocity, ev.reset_joint_scale_range = 0.0, 0.0, (1.0, 1.0)
    ev.base_mass_add_range, ev.base_com_range = (0.0, 0.0), {}
    cfg.observations.enable_corruption = False
    return DiffVelocityEnv(cfg)


@torch.no_grad()
def statics(robot: str, contact_model: str, seconds: float) -> dict:
    env = resting_env(robot, contact_model)
    env.reset(seed=0)
    mass = float(env.model.body_mass.numpy()[: env.layout.bodies_per_world].sum())
    steps, window = round(seconds / env.step_dt), round(1.0 / env.step_dt)
    impulse_dt = env.cfg.sim_dt / env.sim.solver.substeps(env.cfg.sim_dt)  # the impulses are the last substep's
    heights, forces, xy = [], [], []
    fell = False
    for _ in range(steps):
        _, _, terminated, _, _ = env.step(torch.zeros(1, env.num_actions))
        fell |= bool(terminated.any())
        heights.append(float(env.q[0, 2]))
        xy.append(env.q[0, :2].clone())
        forces.append(float(env.sim.last_contact_impulses()[:, 0].sum()) / impulse_dt)
    h, f = torch.tensor(heights[-window:]), torch.tensor(forces[-window:])
    return {
        "robot": robot,
        "contact_model": contact_model,
        "mass_kg": mass,
        "mg_N": mass * 9.81,
        "foot_force_N": float(f.mean()),
        "force_over_mg": float(f.mean()) / (mass * 9.81),
        "base_height_m": float(h.mean()),
        "base_height_range_mm": 1e3 * float(h.max() - h.min()),
        "drift_mm_per_s": 1e3 * float((xy[-1] - xy[-window]).norm()) / ((window - 1) * env.step_dt),
        "fell": fell,
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--robots", default=",".join(ROBOTS))
    parser.add_argument("--contact_models", default=",".join(CONTACT_MODELS))
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--out", default=None, help="JSON file for the rows")
    args = parser.parse_args()
    torch.set_num_threads(1)
    robots, models = args.robots.split(","), args.contact_models.split(",")
    for name, known in (("robot", ROBOTS), ("contact model", CONTACT_MODELS)):
        unknown = [v for v in (robots if name == "robot" else models) if v not in known]
        if unknown:
            parser.error(f"unknown {name} {unknown}; known: {sorted(known)}")
    rows = [statics(r, m, args.seconds) for r in robots for m in models]
    header = (
        "robot | contact | mass [kg] | foot force / m g | base height [m] | height range [mm] | drift [mm/s] | fell"
    )
    print(f"| {header} |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in rows:
        print(
            f"| {r['robot']} | {r['contact_model']} | {r['mass_kg']:.2f} | {r['force_over_mg']:.4f} | "
            f"{r['base_height_m']:.3f} | {r['base_height_range_mm']:.2f} | {r['drift_mm_per_s']:.2f} | "
            f"{'yes' if r['fell'] else 'no'} |",
            flush=True,
        )
    if args.out:
        with open(args.out, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
