"""A SHAC runner that continues a training run from one of its checkpoints, for measurements on the actor's
gradient (``scripts/experiments/actor_gradient_snr.py``, ``scripts/experiments/actor_loss_terms.py``)."""

from __future__ import annotations

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
        runner.close()
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
