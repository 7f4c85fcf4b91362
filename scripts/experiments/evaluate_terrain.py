"""Evaluate a rough-task checkpoint per terrain type and level: tracking error and fall rate, as JSON.

    .venv/bin/python scripts/experiments/evaluate_terrain.py --algo shac --checkpoint RUN/model_1000.pt \
        --num_envs 100 --out eval_terrain.json

The ``-Play`` configuration of the rough task (hard contact, Isaac Lab's omnidirectional and heading commands, every
level at startup) on the terrain of ``--seed``; each env's first episode counts (``rl.evaluation.evaluate``), on the
(level, type) it started on. The terrain keeps the generator's curriculum layout (a level per row, a type per column),
which ``terrain.curriculum`` also sets, so the curriculum stays on. ``scripts/deploy/sim2sim.py BUNDLE --sim mujoco
--terrain`` reports MuJoCo's in the same layout. ``--flat`` makes every sub-terrain a plane (Isaac Lab's
``MeshPlaneTerrainCfg``) on the same grid, with the same commands: what the policy does without the terrain.
``--flatten_scan`` keeps the terrain and gives the policy a scan with every point at the mean of its env's scan (a flat
ground at the mean height under the grid): the policy keeps its height over the ground and loses the terrain's shape,
which measures how much it uses the shape. ``--oracle_type NAME`` tells a policy trained with ``env.terrain_oracle``
that every env is on sub-terrain NAME: how much it uses what the oracle tells it. A fall is a base below
``min_base_height`` above the ground under it or tilted past ``max_gravity_z``; ``tilted_fall_rate`` is the share of
episodes whose fall had the base tilted; ``left_tile_rate`` the share whose base left its sub-terrain tile (its group
then also counts its neighbours'). ``--forward_commands`` gives every env the commands of ``sim2sim.py``'s MuJoCo
episodes instead: a forward command uniform in ``FORWARD_VX_RANGE`` held over the episode, no lateral, yaw-rate or
heading command, so ours and MuJoCo's tables of the same terrain compare the same kind of commands. ``speed_profile``
and ``direction_profile``: every evaluated step's tracking by command speed and by command direction (forward, lateral,
backward; ``rl.speed_profile``); ``all_commands`` pools them: its ``command_speed`` is the tracking error of a robot
that stands still; ``type_profile`` and ``level_profile`` give the same per sub-terrain type and level the env started
on (means over steps, where the groups' tracking errors are means over episodes).
"""

from __future__ import annotations

import argparse
import json
import os

import torch
from policy_env import add_policy_arguments, make_policy_env

from isaaclab_diffsim.deploy.sim2sim.commands import FORWARD_VX_RANGE
from isaaclab_diffsim.rl.evaluation import evaluate
from isaaclab_diffsim.rl.speed_profile import EnvGroupProfile, along_summary, pooled
from isaaclab_diffsim.terrains.grid_groups import column_sub_terrains, terrain_groups


def flattened_scan_policy(policy, columns: slice):
    """``policy`` fed observations whose height-scan ``columns`` all read their row's mean."""

    def act(obs: torch.Tensor) -> torch.Tensor:
        obs = obs.clone()
        obs[:, columns] = obs[:, columns].mean(dim=1, keepdim=True)
        return policy(obs)

    return act


def told_type_policy(policy, columns: slice, told: int):
    """``policy`` fed observations whose terrain-oracle ``columns`` all say sub-terrain ``told`` (its one-hot)."""

    def act(obs: torch.Tensor) -> torch.Tensor:
        obs = obs.clone()
        obs[:, columns] = 0.0
        obs[:, columns.start + told] = 1.0
        return policy(obs)

    return act


def use_forward_commands(env_cfg) -> None:
    """sim2sim's commands (:data:`FORWARD_VX_RANGE`) on ``env_cfg``: forward only, one per episode."""
    c = env_cfg.commands
    c.lin_vel_x, c.lin_vel_y, c.ang_vel_z = FORWARD_VX_RANGE, (0.0, 0.0), (0.0, 0.0)
    c.heading_command, c.rel_standing_envs = False, 0.0
    c.resampling_time_s = 2.0 * env_cfg.episode_length_s  # never within an episode: a timed-out one resets first


class FirstEpisodeTilt:
    """Whether each env's first episode ended in a failure with the base tilted (``env.failure_tilted``), read
    after every ``env.step`` (``evaluate``'s ``step_callback``) from the env's done flags of that step."""

    def __init__(self, env):
        self.env = env
        self.ended = torch.zeros(env.num_envs, dtype=torch.bool, device=env.device)
        self.tilted = torch.zeros_like(self.ended)

    def __call__(self):
        env = self.env
        first = ~self.ended & (env.reset_terminated | env.reset_time_outs)
        self.tilted |= first & env.reset_terminated & env.failure_tilted
        self.ended |= first


class FirstEpisodeExcursion:
    """How far each env's base went from its sub-terrain's origin (the tile's centre) along x and y in its first
    episode, read after every ``env.step`` (``evaluate``'s ``step_callback``); the step that ends the episode has
    already reset the env and is not read. ``left_tile``: the base passed the edge of its ``tile_size`` tile, so the
    episode's (type, level) group also counts terrain of its neighbours."""

    def __init__(self, env, tile_size: tuple[float, float]):
        self.env = env
        self.half = torch.tensor(tile_size, dtype=torch.float32, device=env.device) / 2
        self.ended = torch.zeros(env.num_envs, dtype=torch.bool, device=env.device)
        self.reach = torch.zeros(env.num_envs, 2, dtype=torch.float32, device=env.device)

    def __call__(self):
        env = self.env
        done = env.reset_terminated | env.reset_time_outs
        live = ~self.ended & ~done
        offset = (env.q[:, 0:2].detach() - env.env_origins[:, 0:2]).abs()
        self.reach = torch.where(live[:, None], torch.maximum(self.reach, offset), self.reach)
        self.ended |= done

    @property
    def left_tile(self) -> torch.Tensor:
        return (self.reach > self.half).any(dim=1)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_policy_arguments(p, contact_models="hard", num_envs=100)
    p.set_defaults(task="DiffSim-Velocity-Rough-AnymalC-Direct-Play")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--flat", action="store_true", help="every sub-terrain a plane: the policy without the terrain")
    p.add_argument(
        "--flatten_scan",
        action="store_true",
        help="every height-scan point reads the mean of its env's scan: the policy without the terrain's shape",
    )
    p.add_argument(
        "--oracle_type",
        default=None,
        help="with env.terrain_oracle: every env is told this sub-terrain type (how much the policy uses the oracle)",
    )
    p.add_argument(
        "--forward_commands",
        action="store_true",
        help="sim2sim.py's MuJoCo commands: forward only, uniform in FORWARD_VX_RANGE, one per episode",
    )
    args = p.parse_args()

    def configure(env_cfg):
        if getattr(env_cfg, "terrain", None) is None:
            raise SystemExit(
                f"{args.task} has no generated terrain (env.terrain): evaluate_terrain.py needs a rough task"
            )
        env_cfg.seed = args.seed
        if args.flat:
            if getattr(env_cfg, "terrain_oracle", False):
                raise SystemExit("--flat with env.terrain_oracle: a plane has none of the sub-terrain types observed")
            env_cfg.terrain.use_flat_ground()
        if args.forward_commands:
            use_forward_commands(env_cfg)
        if args.oracle_type is not None:
            names = list(env_cfg.terrain.generator.sub_terrains)
            if not getattr(env_cfg, "terrain_oracle", False):
                raise SystemExit("--oracle_type: the policy has no terrain oracle (env.terrain_oracle=true)")
            if args.oracle_type not in names:
                raise SystemExit(f"--oracle_type: unknown sub-terrain {args.oracle_type!r}; one of {names}")

    env, policy, _ = make_policy_env(args, configure)
    if args.flatten_scan:
        if env.scan_columns is None:
            raise SystemExit(f"--flatten_scan: {args.task} observes no height scan (env.height_scan)")
        policy = flattened_scan_policy(policy, env.scan_columns)
    if args.oracle_type is not None:
        told = list(env.cfg.terrain.generator.sub_terrains).index(args.oracle_type)
        policy = told_type_policy(policy, env.terrain_type_columns, told)
    env.set_contact_model(args.contact_models.split(",")[0])
    torch.manual_seed(args.seed)
    env.reset(seed=args.seed)
    levels, types = env.terrain_level.cpu().numpy(), env.terrain_levels.types.cpu().numpy()
    tilt = FirstEpisodeTilt(env)
    excursion = FirstEpisodeExcursion(env, tuple(env.cfg.terrain.generator.size))

    def after_step():
        tilt()
        excursion()

    gen = env.cfg.terrain.generator
    type_profile = EnvGroupProfile(torch.as_tensor(column_sub_terrains(gen))[types], list(gen.sub_terrains))
    level_profile = EnvGroupProfile(torch.as_tensor(levels), [str(lv) for lv in range(gen.num_rows)])
    result = evaluate(
        env, policy, env.num_envs, progress=False, step_callback=after_step, profiles=(type_profile, level_profile)
    )
    tilted_falls = result.falls & tilt.tilted.cpu().numpy()
    left_tile = float(excursion.left_tile.float().mean())
    print(
        f"[evaluate] all: {result.summary()}, tilted falls {100 * tilted_falls.mean():.1f} %, left their tile"
        f" {100 * left_tile:.1f} %",
        flush=True,
    )
    rows = terrain_groups(gen, types, levels, result.tracking_errors, result.falls, tilted_falls)
    for key, row in rows.items():
        print(f"[evaluate] {key:28s} {row}", flush=True)
    for row in result.speed_profile:
        print(f"[evaluate] command speed {row}", flush=True)
    for row in result.direction_profile:
        print(f"[evaluate] command direction {row}", flush=True)
    for row in type_profile.rows():
        print(f"[evaluate] sub-terrain type {row}", flush=True)
    print(f"[evaluate] {along_summary(result.speed_profile)}", flush=True)
    out = {
        "checkpoint": os.path.abspath(args.checkpoint),
        "flatten_scan": args.flatten_scan,
        "forward_commands": args.forward_commands,
        "oracle_type": args.oracle_type,
        "summary": result.summary(),
        "tilted_fall_rate": float(tilted_falls.mean()),
        "left_tile_rate": left_tile,
        "groups": rows,
        "speed_profile": result.speed_profile,
        "direction_profile": result.direction_profile,
        "all_commands": pooled(result.speed_profile),
        "type_profile": type_profile.rows(),
        "level_profile": level_profile.rows(),
    }
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
