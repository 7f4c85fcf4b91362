"""A SHAC runner that continues a training run from one of its checkpoints, for measurements on the actor's
gradient (``scripts/experiments/actor_gradient_snr.py``, ``scripts/experiments/actor_loss_terms.py``)."""

from __future__ import annotations

import argparse
import json
import os
import re

import torch

from ..rl.checkpoints import env_cfg_dict, load_checkpoint
from ..rl.shac import ShacRunner
from .horizon_replay import build_runner

REQUIRED = ("model_state_dict", "cfg", "env_cfg")
OVERRIDE = re.compile(r"^[+~]?(env|agent)\.[^=]+=")
"""A trailing ``env.x=...`` / ``agent.x=...`` override on a script's command line."""
IGNORED = ("num_envs", "seed")
"""Env config fields that may differ from the checkpoint's."""


def checkpoint_parser(doc: str, task: str, horizons: int) -> argparse.ArgumentParser:
    """The command line of a measurement on checkpoints: ``CKPT [CKPT ...]`` then ``env.x=...``/``agent.x=...``
    overrides, ``--task``, ``--horizons``, ``--num_envs``, ``--warmup_steps``, ``--torch_threads``, ``--out``; a
    script adds its own options, then calls :func:`parse_checkpoint_args`."""
    p = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("checkpoints", nargs="+", help="SHAC checkpoints (model_<it>.pt), then the overrides")
    p.add_argument("--task", default=task)
    p.add_argument("--horizons", type=int, default=horizons)
    p.add_argument("--num_envs", type=int, default=None, help="default: the checkpoint's (its env state restored)")
    p.add_argument("--warmup_steps", type=int, default=150, help="policy steps after a reset (another --num_envs)")
    p.add_argument("--torch_threads", type=int, default=1, help="as scripts/train.py")
    p.add_argument("--out", default=None, help="JSON file for the records (none: print only)")
    return p


def parse_checkpoint_args(parser: argparse.ArgumentParser, argv=None) -> argparse.Namespace:
    """Parse :func:`checkpoint_parser`'s command line: ``overrides`` split from ``checkpoints``; a usage error for
    no checkpoint, fewer than 1 horizon, fewer than 2 envs or a negative warm-up."""
    args = parser.parse_intermixed_args(argv)
    args.overrides = [a for a in args.checkpoints if OVERRIDE.match(a)]
    args.checkpoints = [a for a in args.checkpoints if not OVERRIDE.match(a)]
    if not args.checkpoints:
        parser.error("no checkpoint given")
    if args.horizons < 1:
        parser.error(f"--horizons must be at least 1, got {args.horizons}")
    if args.num_envs is not None and args.num_envs < 2:
        parser.error(f"--num_envs must be at least 2, got {args.num_envs}")
    if args.warmup_steps < 0:
        parser.error(f"--warmup_steps must be at least 0, got {args.warmup_steps}")
    return args


def checkpoint_runners(args: argparse.Namespace, script: str):
    """For each checkpoint of :func:`parse_checkpoint_args`'s ``args``: (path, runner, checkpoint state), the runner
    from :func:`runner_from_checkpoint` and closed when the caller moves on; SystemExit naming ``script`` for a
    checkpoint that cannot be used."""
    torch.set_num_threads(args.torch_threads)
    for path in args.checkpoints:
        try:
            runner, state = runner_from_checkpoint(path, args.task, args.overrides, args.num_envs, args.warmup_steps)
        except ValueError as err:
            raise SystemExit(f"{script}: {err}") from None
        try:
            yield path, runner, state
        finally:
            close_runner(runner)


def write_records(out: str | None, records: dict) -> None:
    """Write the per-checkpoint ``records`` as JSON to ``out`` (``--out``; None: nothing)."""
    if out:
        os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
        with open(out, "w") as f:
            json.dump(records, f, indent=1)


def config_differences(saved: dict, built: dict, prefix: str = "") -> list[str]:
    """Dotted names of the fields whose values differ between two ``to_dict()`` forms (functions compared by name)."""
    out = []
    for key in sorted(set(saved) | set(built), key=str):
        a, b = saved.get(key), built.get(key)
        if isinstance(a, dict) and isinstance(b, dict):
            out += config_differences(a, b, f"{prefix}{key}.")
        elif a != b and not (callable(b) and getattr(b, "__name__", None) == str(a).rsplit(":", 1)[-1]):
            out.append(f"{prefix}{key}")
    return out


def close_runner(runner: ShacRunner) -> None:
    """Close the runner and its env: the registered tasks build an Isaac Lab scene, one per process at a time, so the
    next checkpoint's env can only be built once this one is closed."""
    runner.close()
    runner.env.close()


def warm_up(runner: ShacRunner, steps: int) -> None:
    """Reset the envs and run the stochastic policy ``steps`` steps without a graph."""
    env, norm = runner.env, runner.alg.obs_normalizer
    stats = norm.snapshot() if norm is not None else None
    obs = env.reset()
    with torch.no_grad():
        for _ in range(steps):
            obs_n = obs.to(runner.device) if norm is None else norm.normalize(obs.to(runner.device), stats)
            obs = env.step(runner.alg.policy.act(obs_n).to(env.device))[0]
    env.detach()


def runner_from_checkpoint(
    path: str, task: str, overrides: list[str], num_envs: int | None = None, warmup_steps: int = 150
) -> tuple[ShacRunner, dict]:
    """(runner, checkpoint state): a fresh env of ``task`` with the trailing ``overrides``, which must give the env
    config stored in the checkpoint (seed and env count aside) except in the fields they name; the checkpoint's
    policy, normaliser and critics loaded. With the checkpoint's own number of envs (``num_envs`` None) its env
    and RNG state are restored, so horizons continue the training run from that iteration; with another count the
    envs start from a reset and the policy runs ``warmup_steps`` steps first. ValueError for a file that is not a
    SHAC checkpoint or an env config the overrides do not give, naming the fields."""
    state = load_checkpoint(path, REQUIRED, "SHAC runner", map_location="cpu")
    own_envs = int(state["env_cfg"]["num_envs"])
    num_envs = own_envs if num_envs is None else num_envs
    runner = build_runner(task, agent_cfg=state["cfg"], overrides=overrides, num_envs=num_envs)
    named = [o.split("=", 1)[0].lstrip("+~")[len("env.") :] for o in overrides if o.lstrip("+~").startswith("env.")]
    diff = [
        k
        for k in config_differences(state["env_cfg"], env_cfg_dict(runner.env))
        if k not in IGNORED and not any(k == n or k.startswith(n + ".") for n in named)
    ]
    if diff:
        close_runner(runner)
        raise ValueError(
            f"{path} was trained with another env config than {task} with these overrides: "
            f"{', '.join(diff[:8])}{' ...' if len(diff) > 8 else ''} (pass the run's overrides)"
        )
    runner.load(path, load_optimizer=False, restore_env=num_envs == own_envs)
    if state.get("kappa") is not None:  # the kappa schedule's value at that iteration
        runner.env.set_kappa(float(state["kappa"]))
    if num_envs != own_envs:
        warm_up(runner, warmup_steps)
    return runner, state
