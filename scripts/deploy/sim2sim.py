"""Drive an exported deployment bundle through onnxruntime in an independent simulator (MuJoCo) or in ours.

    .venv/bin/python scripts/deploy/sim2sim.py BUNDLE_DIR --sim mujoco \
        --variants nominal,friction0.5,payload10,latency1,push1.0 --episodes 16 --out result.json

``--sim mujoco``: MuJoCo's C engine on the project's ANYmal C URDF (free base, ground plane, elliptic cones), the
bundle's PD drives in Python at 400 Hz, the controller at io.yaml's dt. ``--sim diffsim``: the -Play task on hard
contact, driven by :class:`~isaaclab_diffsim.deploy.OnnxBundlePolicy`. Both start every episode upright at rest in
the default pose at the task's init height, with a forward command per episode drawn from a fixed seed (the same
in both simulators), no command resampling, no base mass or CoM randomisation.

Variants: ``nominal``, ``friction<mu>`` (effective foot-ground friction: MuJoCo combines two geoms by their
maximum, our solver by their mean, so both the feet and the ground get mu), ``payload<kg>`` (added to the base,
inertia scaled alike), ``latency<k>`` (actions reach the drives k control steps late), ``push<v>`` (base x and y
velocity changes uniform in +-v every 5 s). Prints one line per variant: fall rate, tracking error |cmd_xy -
v_xy| (base frame, m/s), episode length, joint power and roll/pitch rms.
"""

from __future__ import annotations

import argparse
import functools
import json
import math
import os
import sys
import time

import numpy as np

from isaaclab_diffsim.deploy.io_spec import BundleMismatchError
from isaaclab_diffsim.deploy.onnx_policy import open_bundle
from isaaclab_diffsim.deploy.sim2sim import parse_variants, summarize
from isaaclab_diffsim.deploy.sim2sim.actuator import DcMotor
from isaaclab_diffsim.deploy.sim2sim.metrics import EpisodeAccumulator
from isaaclab_diffsim.deploy.sim2sim.variants import PUSH_INTERVAL_S

PLAY_TASK = "DiffSim-Velocity-Flat-AnymalC-Direct-Play"
INIT_HEIGHT, MIN_HEIGHT, MAX_GRAVITY_Z = 0.6, 0.3, -0.5
"""The task's init_base_height, min_base_height and max_gravity_z (DiffVelocityEnvCfg)."""


def draw_commands(episodes: int, vx_range: tuple[float, float], seed: int) -> np.ndarray:
    """(episodes, 3) forward commands (vx uniform in ``vx_range``, vy = yaw rate = 0), the same for both sims."""
    cmd = np.zeros((episodes, 3))
    cmd[:, 0] = np.random.default_rng(seed).uniform(*vx_range, episodes)
    return cmd


def run_mujoco(bundle, variant, commands, episode_s, seed):
    from isaaclab_diffsim.deploy.sim2sim.mujoco_loop import MujocoRunner

    io, session = open_bundle(bundle)
    runner = MujocoRunner(io, session, init_height=INIT_HEIGHT, min_height=MIN_HEIGHT, max_gravity_z=MAX_GRAVITY_Z)
    eps = [runner.episode(c, variant, episode_s, seed + i) for i, c in enumerate(commands)]
    return eps, runner.dt


def run_diffsim(bundle, variant, commands, episode_s, seed, device="cpu"):
    import gymnasium as gym
    import torch
    import warp as wp

    from isaaclab_diffsim.deploy import OnnxBundlePolicy
    from isaaclab_diffsim.rl.policy_loading import AGENT_ENTRY
    from isaaclab_diffsim.tasks.task_cfgs import resolve_task_cfgs

    open_bundle(bundle)
    torch.set_num_threads(1)
    cfg, _ = resolve_task_cfgs(PLAY_TASK, AGENT_ENTRY["shac"], [])
    cfg.device, cfg.num_envs, cfg.seed = device, len(commands), seed
    cfg.solver_cfg.contact_model = "hard"
    cfg.episode_length_s = episode_s
    cfg.init_base_height = INIT_HEIGHT
    cfg.commands.resampling_time_s = episode_s + 1.0
    ev = cfg.events
    ev.base_mass_add_range = (variant.payload, variant.payload)
    ev.base_com_range = {"x": (0.0, 0.0), "y": (0.0, 0.0), "z": (0.0, 0.0)}
    ev.reset_joint_scale_range, ev.reset_base_velocity = (1.0, 1.0), 0.0
    ev.push_velocity, ev.push_interval_s = variant.push, (PUSH_INTERVAL_S, PUSH_INTERVAL_S)
    env = gym.make(PLAY_TASK, cfg=cfg).unwrapped
    if variant.friction is not None:
        # every shape, ground included: the solver's mean of foot and ground mu is then the variant's mu
        mu = wp.to_torch(env.model.shape_material_mu, requires_grad=False)
        mu[:] = variant.friction
    try:
        policy = OnnxBundlePolicy(bundle, env)
        motor = DcMotor(policy.io["articulations"]["robot"])
        obs = env.reset(seed=seed)
        env.commands = torch.as_tensor(commands, dtype=env.commands.dtype, device=env.device)
        acc = EpisodeAccumulator(commands)
        queue = [torch.zeros(len(commands), len(policy.default_joint_pos))] * variant.latency
        while acc.active.any():
            actions = policy(obs)
            queue.append(actions)
            applied = queue.pop(0)
            obs, _, term, trunc, extras = env.step(applied)
            with torch.no_grad():
                targets = env.default_leg + env.cfg.action_scale * applied
                if env.cfg.gait.joint_swing_scale > 0:
                    targets = targets + env.trajectory_generator_offsets()
            terminal = extras["terminal_obs"].cpu().numpy()
            qd = env.qd[:, 6:].detach().cpu().numpy().astype(np.float64)
            q = env.q[:, 7:].detach().cpu().numpy().astype(np.float64)
            power = np.abs(motor.torque(targets.cpu().numpy(), q, qd) * qd).sum(1)
            acc.add(terminal[:, 0:3], terminal[:, 6:9], power, term.cpu().numpy(), trunc.cpu().numpy())
    finally:
        env.close()
    return acc.episodes(), env.step_dt


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("bundle", help="deployment bundle folder (io.yaml, policy.onnx): scripts/export.py")
    parser.add_argument("--sim", choices=("mujoco", "diffsim"), required=True)
    parser.add_argument("--variants", default="nominal")
    parser.add_argument("--episodes", type=int, default=16)
    parser.add_argument("--episode_s", type=float, default=20.0, help="episode length [s] (the task's: 20)")
    parser.add_argument("--vx_range", type=float, nargs=2, default=(-1.0, 1.0), help="forward command range [m/s]")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--device", default="cpu", help="device of --sim diffsim (MuJoCo runs on the CPU)")
    parser.add_argument("--out", default=None, help="JSON file for the results")
    args = parser.parse_args(argv)
    if args.episodes < 1:
        parser.error(f"--episodes must be >= 1, got {args.episodes}")
    if not (args.episode_s > 0 and math.isfinite(args.episode_s)):
        parser.error(f"--episode_s must be > 0, got {args.episode_s}")
    try:
        variants = parse_variants(args.variants)
    except ValueError as err:
        parser.error(str(err))
    try:
        open_bundle(args.bundle)
    except BundleMismatchError as err:
        raise SystemExit(f"[sim2sim] error: {err}") from None
    commands = draw_commands(args.episodes, tuple(args.vx_range), args.seed)
    run = run_mujoco if args.sim == "mujoco" else functools.partial(run_diffsim, device=args.device)
    results = {}
    print(f"[sim2sim] {args.sim}, {args.episodes} episodes of {args.episode_s:g} s, bundle {args.bundle}")
    print(
        f"{'variant':<14}{'falls':>7}{'track err':>11}{'length s':>10}{'power W':>9}{'roll':>7}{'pitch':>7}"
        f"{'wall s':>8}"
    )
    for v in variants:
        t0 = time.perf_counter()
        episodes, dt = run(args.bundle, v, commands, args.episode_s, args.seed)
        s = summarize(episodes, dt)
        s["wall_s"] = time.perf_counter() - t0
        results[v.name] = {**s, "per_episode": [e.__dict__ for e in episodes]}
        print(
            f"{v.name:<14}{s['fall_rate']:>7.2f}{s['tracking_error']:>11.3f}{s['episode_length_s']:>10.1f}"
            f"{s['joint_power_w']:>9.0f}{s['roll_rms']:>7.3f}{s['pitch_rms']:>7.3f}{s['wall_s']:>8.1f}",
            flush=True,
        )
    if args.out:
        os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
        with open(args.out, "w") as f:
            json.dump({"sim": args.sim, "bundle": args.bundle, "args": vars(args), "variants": results}, f, indent=1)
        print(f"[sim2sim] results written to {args.out}")
    return results


if __name__ == "__main__":
    sys.exit(0 if main() is not None else 1)
