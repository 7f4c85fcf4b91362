"""What the actor gradient of a trained SHAC policy asks of the robot: feet, base and speed along the descent.

    .venv/bin/python scripts/tools/gradient_direction.py logs/<run>/model_500.pt [more checkpoints] \
        --command 0.6 --num_envs 64 --horizons 10 [env.<field>=value ...]

Per checkpoint, on the task's training env (its contact model and randomisation; pushes and leg kicks off) with
every env commanded ``--command`` m/s forward: ``--warmup_s`` of the deterministic policy, then ``--horizons``
consecutive SHAC horizons. For each, the actor loss's gradient with respect to the horizon's actions and the
first-order change along its steepest descent (``isaaclab_diffsim.diagnostics.gradient_direction``) of the mean
and highest foot height, the number of airborne feet, the base height and the forward velocity; the loss's own
change checks the gradient against finite differences. Prints per checkpoint the mean and spread over the horizons.
"""

from __future__ import annotations

import argparse
import statistics

import torch

from isaaclab_diffsim.diagnostics import MEASURES, build_runner, gradient_direction

TASK = "DiffSim-Velocity-Flat-AnymalC-Direct"


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("checkpoints", nargs="+", help="SHAC checkpoints (model_<it>.pt)")
    p.add_argument("--task", default=TASK)
    p.add_argument("--command", type=float, default=0.6, help="forward velocity command of every env [m/s]")
    p.add_argument("--num_envs", type=int, default=64)
    p.add_argument("--horizons", type=int, default=10)
    p.add_argument("--warmup_s", type=float, default=2.0, help="policy rollout before the first horizon [s]")
    p.add_argument("--eps", type=float, default=0.005, help="root-mean-square action shift of the replay")
    p.add_argument("--airborne_height", type=float, default=0.02, help="a foot above this is airborne [m]")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--torch_threads", type=int, default=1)
    p.add_argument("overrides", nargs="*", help="env.<field>=value / agent.<field>=value")
    args = p.parse_intermixed_args(argv)
    for name in ("num_envs", "horizons"):
        if getattr(args, name) < 1:
            p.error(f"--{name} must be at least 1, got {getattr(args, name)}")
    if not args.eps > 0.0:
        p.error(f"--eps must be positive, got {args.eps}")
    return args


def command_overrides(vx: float) -> list[str]:
    """Every env commanded ``vx`` forward for the whole run, no standing envs, no pushes or kicks."""
    return [
        f"env.commands.lin_vel_x=({vx},{vx})",
        "env.commands.lin_vel_y=(0.0,0.0)",
        "env.commands.ang_vel_z=(0.0,0.0)",
        "env.commands.heading_command=false",
        "env.commands.rel_standing_envs=0.0",
        "env.commands.resampling_time_s=1000.0",
        "env.events.push_velocity=0.0",
        "env.events.leg_kick_velocity=0.0",
    ]


@torch.no_grad()
def warm_up(runner, steps: int) -> None:
    """``steps`` steps of the deterministic policy from the env's current state."""
    policy, env = runner.get_inference_policy(), runner.env
    obs = env.get_observations().to(runner.device)
    for _ in range(steps):
        obs = env.step(policy(obs).to(env.device))[0].to(runner.device)


def spread(values: list[float]) -> str:
    mean = statistics.fmean(values)
    sd = statistics.stdev(values) if len(values) > 1 else 0.0
    return f"{mean:+.4g} +- {sd:.2g}"


def main(argv=None) -> None:
    args = parse_args(argv)
    torch.set_num_threads(args.torch_threads)
    for path in args.checkpoints:
        torch.manual_seed(args.seed)
        runner = build_runner(
            args.task, overrides=command_overrides(args.command) + args.overrides, num_envs=args.num_envs
        )
        runner.load(path, load_optimizer=False, restore_rng=False, restore_env=False)
        runner.env.reset(seed=args.seed)
        warm_up(runner, round(args.warmup_s / runner.env.step_dt))
        rows = []
        for h in range(args.horizons):
            r = gradient_direction(runner, args.eps, args.airborne_height)
            rows.append(r)
            print(
                f"[gradient_direction] horizon {h}: loss {r.loss:.5g}, |g| {r.grad_norm:.3g}, loss slope measured "
                f"{r.loss_slope:.4g} predicted {r.predicted_loss_slope:.4g}",
                flush=True,
            )
        ratio = [r.loss_slope / r.predicted_loss_slope for r in rows]
        print(f"\n{path} at {args.command} m/s ({args.num_envs} envs, {args.horizons} horizons, eps {args.eps}):")
        print(f"  loss slope measured / predicted: {spread(ratio)}")
        for name in MEASURES:
            values = [r.measures[name] for r in rows]
            slopes = [r.slopes[name] for r in rows]
            print(f"  {name:18s} value {spread(values):>20s}   change per eps along the descent {spread(slopes)}")
        runner.env.close()


if __name__ == "__main__":
    main()
