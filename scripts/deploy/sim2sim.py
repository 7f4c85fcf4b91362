"""Drive an exported deployment bundle (or a LEAPP export) through onnxruntime in an independent simulator (MuJoCo)
or in ours.

    .venv/bin/python scripts/deploy/sim2sim.py BUNDLE_DIR --sim mujoco \
        --variants nominal,friction0.5,payload10,latency1,push1.0 --episodes 16 --out result.json

``--sim mujoco``: MuJoCo's C engine on the project's ANYmal C URDF (free base, ground plane, elliptic cones), the
bundle's PD drives in Python at 400 Hz, the controller (``isaaclab_diffsim.deploy.Controller``: onnxruntime, named
measurements) at io.yaml's dt. ``--sim diffsim``: the -Play task on hard contact with the bundle's asset, driven by
the same Controller. Both start every episode upright at rest in the default pose at the task's init height, with
a forward command per episode drawn from a fixed seed (the same in both simulators), no command resampling, no
base mass or CoM randomisation.

BUNDLE_DIR may be a LEAPP export instead (``scripts/export.py --format leapp``: its folder or its YAML): the io spec
comes from the LEAPP YAML's ``pipeline.configs.isaaclab_diffsim_io`` and the Controller runs LEAPP's ONNX model,
which takes the base quaternion instead of projected gravity (so the ``noise`` variant is refused for it).

Variants (``isaaclab_diffsim.deploy.sim2sim.variants``): ``nominal``, ``friction<mu>``, ``payload<kg>``,
``latency<k>`` (control steps), ``push<v>``, ``motor<scale>`` (PD gains and torque envelope), ``noise`` (the task's
observation noise on the measurements) and ``cmd<vx>`` (a fixed forward command). Prints one line per variant of
the metrics of ``isaaclab_diffsim.deploy.sim2sim.metrics``; ``--out`` writes them as JSON. ``--trace FILE`` runs one
more MuJoCo episode under a step schedule of forward commands (``--trace_levels``, ``--trace_step_s``) and writes
commanded against achieved base velocity (JSON, and a PNG when matplotlib is installed).

``--terrain`` (MuJoCo, a rough-task bundle): the terrain of training, regenerated from io.yaml's generator cfg and
seed (``--terrain_seed``: another seed; ``--terrain_proportions NAME=P ...``: those sub-terrains at other
proportions, e.g. the evaluation's six types for a bundle trained on a few) as a MuJoCo heightfield, ``--episodes``
episodes per sub-terrain type and level (``--terrain_types``, ``--terrain_levels``; default all), each from its
sub-terrain's origin; the height scan from MuJoCo's ray casts (``mj_ray``) with io.yaml's grid, offset and clip.
Prints and writes falls and tracking error per type and level, laid out as ``scripts/experiments/evaluate_terrain.py``
reports ours. ``--feet_only`` (MuJoCo): only the feet collide, as in the differentiable task, so base, thighs and
shanks pass through the ground (tells falls that MuJoCo's leg and base contacts prevent from the feet's).
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

from isaaclab_diffsim.deploy.io_spec import GAIT_LEG_LABELS, BundleMismatchError, height_scan_fields
from isaaclab_diffsim.deploy.leapp_session import NOISE_NOT_LEAPP, LeappSession
from isaaclab_diffsim.deploy.onnx_policy import open_bundle
from isaaclab_diffsim.deploy.sim2sim import parse_variants, summarize
from isaaclab_diffsim.deploy.sim2sim.commands import FORWARD_VX_RANGE, draw_commands
from isaaclab_diffsim.deploy.sim2sim.variants import PUSH_INTERVAL_S

PLAY_TASK = "DiffSim-Velocity-Flat-AnymalC-Direct-Play"
INIT_HEIGHT, MIN_HEIGHT, MAX_GRAVITY_Z = 0.6, 0.3, -0.5
"""The task's init_base_height, min_base_height and max_gravity_z (DiffVelocityEnvCfg)."""
NOISY_MEASUREMENTS = ("base_lin_vel", "base_ang_vel", "projected_gravity", "joint_pos", "joint_vel")
"""The measurements (and DiffObservationsCfg fields) the task's observation noise corrupts."""


def variant_commands(variant, commands: np.ndarray) -> np.ndarray:
    """The drawn commands, or (vx, 0, 0) for every episode under a ``cmd<vx>`` variant."""
    if variant.command_vx is None:
        return commands
    out = np.zeros_like(commands)
    out[:, 0] = variant.command_vx
    return out


def task_noise_ranges(scan: bool = False) -> dict[str, tuple[float, float]]:
    """(lo, hi) of the task's uniform observation noise per measurement (DiffObservationsCfg, and with ``scan`` the
    height scan's, DiffHeightScanCfg; imports Isaac Lab's noise configs, so only when a ``noise`` variant is asked
    for)."""
    from isaaclab_diffsim.tasks.direct.locomotion.velocity.velocity_env_cfg import DiffObservationsCfg
    from isaaclab_diffsim.terrains import DiffHeightScanCfg

    cfg, out = DiffObservationsCfg(), {}
    sources = [(cfg, name, name) for name in NOISY_MEASUREMENTS]
    if scan:
        sources.append((DiffHeightScanCfg(), "noise", "height_scan"))
    for cfg, field, name in sources:
        noise = getattr(cfg, field)
        if noise is None:
            continue
        if getattr(noise, "operation", "add") != "add" or not hasattr(noise, "n_min"):
            raise ValueError(f"{name} noise: only additive uniform noise is supported, got {noise!r}")
        out[name] = (float(noise.n_min), float(noise.n_max))
    return out


def parse_proportions(items: list[str] | None) -> dict[str, float] | None:
    """``--terrain_proportions``' ``NAME=P`` items as {name: proportion}; ValueError (one line) for another form."""
    if items is None:
        return None
    out = {}
    for item in items:
        name, _, value = item.partition("=")
        try:
            out[name] = float(value)  # no "=" leaves value empty: refused here too
        except ValueError:
            name = ""
        if not name:
            raise ValueError(f"--terrain_proportions takes NAME=P items (e.g. boxes=0.2), got {item!r}")
    return out


def mujoco_runner(bundle, noise=None, terrain=None, feet_only=False):
    from isaaclab_diffsim.deploy.sim2sim.mujoco_loop import MujocoRunner

    io, session = open_bundle(bundle)
    return MujocoRunner(
        io,
        session,
        init_height=INIT_HEIGHT,
        min_height=MIN_HEIGHT,
        max_gravity_z=MAX_GRAVITY_Z,
        noise=noise,
        terrain=terrain,
        feet_only=feet_only,
    )


def run_mujoco(bundle, variant, commands, episode_s, seed, noise=None, terrain=None, cells=None, feet_only=False):
    """Episodes of ``commands`` in MuJoCo; with ``terrain``, episode i starts at the origin of ``cells[i]``."""
    runner = mujoco_runner(bundle, noise, terrain, feet_only)
    starts = [None] * len(commands) if cells is None else [terrain.origins[c.level, c.column] for c in cells]
    eps = [runner.episode(c, variant, episode_s, seed + i, start=p) for i, (c, p) in enumerate(zip(commands, starts))]
    return eps, runner.dt


def scale_motors(env, strength: float) -> None:
    """PD gains and effort limits of the legs' drives times ``strength`` in the model the solver steps and in the
    env's own copies (the saturation torque is scaled in the cfg before the env is built)."""
    import warp as wp

    n, nd = env.num_envs, env.layout.dofs_per_world
    for array in (env.model.joint_target_ke, env.model.joint_target_kd, env.model.joint_effort_limit):
        wp.to_torch(array, requires_grad=False).view(n, nd)[:, 6:] *= strength
    env.kp_leg, env.kd_leg, env.effort_limit = env.kp_leg * strength, env.kd_leg * strength, env.effort_limit * strength
    env.sim.notify_model_changed(0)


def run_diffsim(bundle, variant, commands, episode_s, seed, noise=None, device="cpu"):
    import gymnasium as gym
    import torch
    import warp as wp

    from isaaclab_diffsim.deploy import Controller
    from isaaclab_diffsim.deploy.observations import rotate_inverse
    from isaaclab_diffsim.deploy.sim2sim.actuator import DcMotor
    from isaaclab_diffsim.deploy.sim2sim.metrics import EpisodeAccumulator, StepSample
    from isaaclab_diffsim.deploy.sim2sim.mujoco_loop import joint_limits
    from isaaclab_diffsim.deploy.sim2sim.noise import add_noise
    from isaaclab_diffsim.rl.policy_loading import AGENT_ENTRY
    from isaaclab_diffsim.tasks.task_cfgs import resolve_task_cfgs

    torch.set_num_threads(1)
    io, _ = open_bundle(bundle)
    cfg, _ = resolve_task_cfgs(PLAY_TASK, AGENT_ENTRY["shac"], [])
    cfg.asset_source = io["training"]["asset_source"]  # the robot (and joint order) of training
    gait = io["gait"]  # the env adds the bundle's generator offsets to the targets itself
    cfg.gait.period_s, cfg.gait.joint_swing_scale = float(gait["period_s"]), float(gait["joint_swing_scale"])
    if "phase_offsets_by_leg" in gait:
        cfg.gait.phase_offsets = tuple(float(gait["phase_offsets_by_leg"][leg]) for leg in GAIT_LEG_LABELS)
    cfg.device, cfg.num_envs, cfg.seed = device, len(commands), seed
    cfg.solver_cfg.contact_model = "hard"
    cfg.solver_cfg.actuator_saturation *= variant.motor
    cfg.episode_length_s = episode_s
    cfg.init_base_height = INIT_HEIGHT
    cfg.commands.resampling_time_s = episode_s + 1.0
    cfg.commands.heading_command, cfg.commands.rel_standing_envs = False, 0.0  # the drawn commands, held
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
    if variant.motor != 1.0:
        scale_motors(env, variant.motor)
    try:
        io, session = open_bundle(bundle, env)
        ctrl = Controller(io=io, session=session, num_robots=len(commands))  # env order = bundle order (checked)
        robot = io["articulations"]["robot"]
        default = np.asarray(robot["default_joint_pos"])
        scale = float(io["actions"]["joint_pos"]["scale"])
        motor = DcMotor(robot, variant.motor)
        rng = np.random.default_rng(seed)
        env.reset(seed=seed)
        env.commands = torch.as_tensor(commands, dtype=env.commands.dtype, device=env.device)
        ctrl.reset()
        acc = EpisodeAccumulator(commands, *joint_limits(robot["joint_names"]), env.step_dt, env.foot_radius)
        queue = [np.zeros((len(commands), len(default)), dtype=np.float32)] * variant.latency
        while acc.active.any():
            q = env.q.detach().cpu().numpy().astype(np.float64)
            qd = env.qd.detach().cpu().numpy().astype(np.float64)
            meas = {
                "base_lin_vel": rotate_inverse(q[:, 3:7], qd[:, 0:3]),
                "base_ang_vel": rotate_inverse(q[:, 3:7], qd[:, 3:6]),
                "projected_gravity": rotate_inverse(q[:, 3:7], np.tile([0.0, 0.0, -1.0], (len(q), 1))),
                "base_quat_xyzw": q[:, 3:7],  # a LEAPP export's input; a bundle's controller uses projected_gravity
                "joint_pos": q[:, 7:],
                "joint_vel": qd[:, 6:],
                "command": commands,
            }
            if variant.noise:
                meas = add_noise(meas, noise, rng)
            targets = ctrl.step(meas)
            actions = ctrl.last_action
            queue.append(actions)
            applied = queue.pop(0)
            # the drives get the targets of the delayed actions at the current gait phase
            target = (targets + scale * (applied - actions)).astype(np.float64)
            _, _, term, trunc, extras = env.step(torch.from_numpy(applied).to(env.device))
            terminal = extras["terminal_obs"].detach().cpu().numpy().astype(np.float64)
            q_after, qd_after = terminal[:, 12:24] + default, terminal[:, 24:36]
            with torch.no_grad():
                feet = env.foot_centres(env.body_q).cpu().numpy().astype(np.float64)
            acc.add(
                StepSample(
                    terminal[:, 0:3],
                    terminal[:, 3:6],
                    terminal[:, 6:9],
                    q_after,
                    qd_after,
                    motor.torque(target, q_after, qd_after),
                    feet,
                    term.cpu().numpy(),
                    trunc.cpu().numpy(),
                    env.q[:, 0:3].detach().cpu().numpy(),
                )
            )
    finally:
        env.close()
    return acc.episodes(), env.step_dt


def run_trace(bundle, path, levels, step_s, seed, noise=None) -> list[str]:
    """The Figure 6 analogue in MuJoCo: one nominal episode under a step schedule of forward commands."""
    from isaaclab_diffsim.deploy.sim2sim import parse_variant
    from isaaclab_diffsim.deploy.sim2sim.trace import step_schedule, write_trace

    runner = mujoco_runner(bundle, noise)
    rows = []
    ep = runner.episode(
        (levels[0], 0.0, 0.0), parse_variant("nominal"), len(levels) * step_s, seed, step_schedule(levels, step_s), rows
    )
    title = f"MuJoCo, nominal: commanded vs achieved base velocity ({'fell' if ep.fell else 'no fall'})"
    return write_trace(path, rows, {"bundle": bundle, "levels": levels, "step_s": step_s, "title": title})


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "bundle", help="deployment bundle folder (io.yaml, policy.onnx) or LEAPP export (its folder or YAML)"
    )
    parser.add_argument("--sim", choices=("mujoco", "diffsim"), required=True)
    parser.add_argument("--variants", default="nominal")
    parser.add_argument("--episodes", type=int, default=16)
    parser.add_argument("--episode_s", type=float, default=20.0, help="episode length [s] (the task's: 20)")
    parser.add_argument("--vx_range", type=float, nargs=2, default=FORWARD_VX_RANGE, help="forward command range [m/s]")
    parser.add_argument("--vy_range", type=float, nargs=2, default=(0.0, 0.0), help="lateral command range [m/s]")
    parser.add_argument("--yaw_range", type=float, nargs=2, default=(0.0, 0.0), help="yaw-rate command range [rad/s]")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--device", default="cpu", help="device of --sim diffsim (MuJoCo runs on the CPU)")
    parser.add_argument("--out", default=None, help="JSON file for the results")
    parser.add_argument(
        "--trace", default=None, help="JSON file (and a PNG beside it): commanded vs achieved velocity in MuJoCo"
    )
    parser.add_argument("--trace_levels", type=float, nargs="+", default=(0.0, 0.5, 1.0, 0.0), help="vx steps [m/s]")
    parser.add_argument("--trace_step_s", type=float, default=5.0, help="seconds per level of --trace_levels")
    parser.add_argument(
        "--terrain", action="store_true", help="MuJoCo on the bundle's generated terrain; --episodes per type and level"
    )
    parser.add_argument("--terrain_levels", type=int, nargs="+", default=None, help="levels (rows) to run; default all")
    parser.add_argument("--terrain_types", nargs="+", default=None, help="sub-terrain names to run; default all")
    parser.add_argument("--terrain_seed", type=int, default=None, help="regenerate with this seed, not the bundle's")
    parser.add_argument(
        "--terrain_proportions",
        nargs="+",
        default=None,
        metavar="NAME=P",
        help="these sub-terrains at these proportions, not the bundle's (e.g. the evaluation's mix)",
    )
    parser.add_argument(
        "--feet_only", action="store_true", help="MuJoCo: only the feet collide, as in the differentiable task"
    )
    args = parser.parse_args(argv)
    if args.episodes < 1:
        parser.error(f"--episodes must be >= 1, got {args.episodes}")
    if not (args.episode_s > 0 and math.isfinite(args.episode_s)):
        parser.error(f"--episode_s must be > 0, got {args.episode_s}")
    try:
        variants = parse_variants(args.variants)
    except ValueError as err:
        parser.error(str(err))
    if args.terrain and args.sim != "mujoco":
        parser.error(
            "--terrain runs in MuJoCo (--sim mujoco); ours per terrain: scripts/experiments/evaluate_terrain.py"
        )
    terrain_options = ("terrain_levels", "terrain_types", "terrain_seed", "terrain_proportions")
    given = [f"--{k}" for k in terrain_options if getattr(args, k) is not None]
    if given and not args.terrain:
        parser.error(f"{', '.join(given)} need --terrain")
    try:
        proportions = parse_proportions(args.terrain_proportions)
    except ValueError as err:
        parser.error(str(err))
    if args.feet_only and args.sim != "mujoco":
        parser.error("--feet_only is a MuJoCo option (--sim mujoco); the differentiable task collides the feet only")
    terrain = cells = None
    try:
        io, session = open_bundle(args.bundle)
        scan = height_scan_fields(io) is not None
        if isinstance(session, LeappSession) and any(v.noise for v in variants):
            raise BundleMismatchError(NOISE_NOT_LEAPP)
        if args.terrain:
            from isaaclab_diffsim.deploy.sim2sim.bundle_terrain import bundle_terrain

            terrain = bundle_terrain(io, args.terrain_seed, proportions)
    except (BundleMismatchError, ValueError) as err:
        raise SystemExit(f"[sim2sim] error: {err}") from None
    if terrain is not None:
        from isaaclab_diffsim.deploy.sim2sim.terrain_episodes import terrain_cells, terrain_report

        try:
            cells = terrain_cells(terrain, args.episodes, args.terrain_levels, args.terrain_types)
        except ValueError as err:
            parser.error(str(err))
    if args.trace and not args.trace_step_s > 0:
        parser.error(f"--trace_step_s must be > 0, got {args.trace_step_s}")
    for name in ("vx_range", "vy_range", "yaw_range"):
        lo, hi = getattr(args, name)
        if not (math.isfinite(lo) and math.isfinite(hi) and lo <= hi):
            parser.error(f"--{name} must be finite with low <= high, got {lo} {hi}")
    episodes = args.episodes if cells is None else len(cells)
    commands = draw_commands(episodes, tuple(args.vx_range), args.seed, tuple(args.vy_range), tuple(args.yaw_range))
    noise = task_noise_ranges(scan and args.sim == "mujoco") if any(v.noise for v in variants) else None
    if args.sim == "mujoco":
        run = functools.partial(run_mujoco, terrain=terrain, cells=cells, feet_only=args.feet_only)
    else:
        run = functools.partial(run_diffsim, device=args.device)
    results = {}
    where = "" if cells is None else f" on the bundle's terrain ({len(cells)} sub-terrain starts)"
    print(f"[sim2sim] {args.sim}, {episodes} episodes of {args.episode_s:g} s{where}, bundle {args.bundle}")
    columns = (
        ("falls", "fall_rate", "{:>7.2f}"),
        ("lin err", "tracking_error", "{:>9.3f}"),
        ("yaw err", "yaw_rate_error", "{:>9.3f}"),
        ("length s", "episode_length_s", "{:>9.1f}"),
        ("power W", "joint_power_w", "{:>9.0f}"),
        ("roll", "roll_rms", "{:>7.3f}"),
        ("pitch", "pitch_rms", "{:>7.3f}"),
        ("lim %", "joint_limit_fraction", "{:>7.1%}"),
        ("lim rad", "joint_limit_max_rad", "{:>9.3f}"),
        ("dtau Nm", "torque_change_rms", "{:>9.2f}"),
        ("slip m/s", "foot_slip_speed", "{:>9.3f}"),
        ("td/ft/s", "touchdowns_per_foot_s", "{:>8.2f}"),
        ("drift m", "drift_m", "{:>8.3f}"),
        ("wall s", "wall_s", "{:>8.1f}"),
    )
    print(f"{'variant':<14}" + "".join(f"{h:>{len(fmt.format(0.0))}}" for h, _, fmt in columns))
    for v in variants:
        t0 = time.perf_counter()
        episodes, dt = run(args.bundle, v, variant_commands(v, commands), args.episode_s, args.seed, noise)
        s = summarize(episodes, dt)
        s["wall_s"] = time.perf_counter() - t0
        per_episode = [e.__dict__ for e in episodes]
        if cells is not None:
            s["groups"] = terrain_report(terrain, cells, episodes)
            per_episode = [
                {**e, "level": c.level, "column": c.column, "type": c.type_name} for e, c in zip(per_episode, cells)
            ]
        results[v.name] = {**s, "per_episode": per_episode}
        print(f"{v.name:<14}" + "".join(fmt.format(s[k]) for _, k, fmt in columns), flush=True)
        for key, row in s.get("groups", {}).items():
            print(f"[sim2sim] {v.name} {key:28s} {row}", flush=True)
    if args.out:
        os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
        with open(args.out, "w") as f:
            json.dump({"sim": args.sim, "bundle": args.bundle, "args": vars(args), "variants": results}, f, indent=1)
        print(f"[sim2sim] results written to {args.out}")
    if args.trace:
        written = run_trace(args.bundle, args.trace, list(args.trace_levels), args.trace_step_s, args.seed)
        print(f"[sim2sim] velocity trace (MuJoCo) written to {', '.join(written)}")
    return results


if __name__ == "__main__":
    sys.exit(0 if main() is not None else 1)
