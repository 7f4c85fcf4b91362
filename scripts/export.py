"""Write the deployment bundle of a SHAC or rsl_rl PPO checkpoint: ``policy.onnx``, ``policy.pt`` and ``io.yaml``.

    .venv/bin/python scripts/export.py --checkpoint logs/shac/.../model_200.pt [--out DIR]
    .venv/bin/python scripts/export.py --checkpoint logs/ppo/.../model_299.pt

The algorithm is told from the checkpoint's keys. The env is rebuilt (one env, CPU) from the env cfg the checkpoint
carries (``env_cfg``), or else from the run's ``params/env.yaml``; the agent cfg from the checkpoint's ``cfg``, or
else ``params/agent.yaml`` (the networks' sizes and PPO's action clip come from it). The bundle's controller takes
the observation terms and the step counter that ``io.yaml`` declares and returns joint position targets in its
joint order (see ``isaaclab_diffsim.deploy``). Default ``--out``: ``exported/`` next to the checkpoint.

``--format leapp`` writes a LEAPP pipeline instead (``<out>/<task>/<task>.yaml`` + ONNX, default ``--out``:
``exported_leapp/``), traced through the differentiable env's LEAPP annotations
(``isaaclab_diffsim.deploy.leapp_pipeline``); no io.yaml: the io spec goes into the LEAPP YAML
(``pipeline.configs.isaaclab_diffsim_io``), which ``isaaclab_diffsim.deploy.Controller`` and
``scripts/deploy/sim2sim.py`` read. ``scripts/deploy/leapp_deploy.py`` runs it on the manager-based task's scene.
It needs the ``leapp`` extra. PPO checkpoints of the manager-based task export with Isaac Lab's own
``isaaclab leapp export --rl_library rsl_rl --task DiffSim-Velocity-Flat-AnymalC``.
"""

from __future__ import annotations

import argparse
import os

import gymnasium as gym
import torch
from isaaclab.utils.dict import update_class_from_dict

from isaaclab_diffsim.deploy import export_bundle
from isaaclab_diffsim.rl.checkpoints import CheckpointError, checkpoint_error
from isaaclab_diffsim.rl.policy_loading import AGENT_ENTRY, checkpoint_algorithm
from isaaclab_diffsim.rl.ppo_runner import load_ppo_runner
from isaaclab_diffsim.rl.shac import ShacRunner
from isaaclab_diffsim.tasks.task_cfgs import load_task_cfgs
from isaaclab_diffsim.utils.leapp_support import require_leapp


def stored_cfg(path: str, state: dict, key: str, params_file: str) -> dict | None:
    """The checkpoint's ``state[key]``, else ``params/<params_file>`` of its run directory, else None."""
    if state.get(key) is not None:
        return state[key]
    params = os.path.join(os.path.dirname(os.path.abspath(path)), "params", params_file)
    if os.path.isfile(params):
        from isaaclab.utils.io import load_yaml

        return load_yaml(params)
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--checkpoint", required=True)
    parser.add_argument("--out", default=None, help="bundle directory (default: <checkpoint dir>/exported)")
    parser.add_argument("--task", default="DiffSim-Velocity-Flat-AnymalC-Direct")
    parser.add_argument("--format", choices=("bundle", "leapp"), default="bundle")
    parser.add_argument("--debug", action="store_true", help="show the traceback of an error")
    args = parser.parse_args()
    torch.set_num_threads(1)
    try:
        export(args)
    except (CheckpointError, OSError, ImportError) as err:
        if args.debug:
            raise
        raise SystemExit(f"[export] error: {err}") from None


def export(args) -> None:
    algo, state = checkpoint_algorithm(args.checkpoint)
    env_cfg, agent_cfg = load_task_cfgs(args.task, AGENT_ENTRY[algo])
    train_env = stored_cfg(args.checkpoint, state, "env_cfg", "env.yaml")
    if train_env is None:
        raise checkpoint_error(
            args.checkpoint,
            "carries no env cfg and its run has no params/env.yaml: cannot tell"
            " the joint order, gains and gait the policy was trained with",
        )
    update_class_from_dict(env_cfg, train_env)
    train_agent = stored_cfg(args.checkpoint, state, "cfg", "agent.yaml")
    if train_agent is not None:
        update_class_from_dict(agent_cfg, train_agent)
    env_cfg.num_envs, env_cfg.device, agent_cfg.device = 1, "cpu", "cpu"
    if args.format == "leapp":
        from isaaclab_diffsim.deploy.leapp_pipeline.shac_export import prepare_env_cfg_for_export

        require_leapp()
        prepare_env_cfg_for_export(env_cfg)
    env = gym.make(args.task, cfg=env_cfg).unwrapped
    default_out = "exported_leapp" if args.format == "leapp" else "exported"
    out = args.out or os.path.join(os.path.dirname(os.path.abspath(args.checkpoint)), default_out)
    if args.format == "leapp":
        from isaaclab_diffsim.deploy.leapp_pipeline.shac_export import export_leapp

        policy, clip = load_policy(env, agent_cfg, algo, args.checkpoint)
        path = export_leapp(env, policy, out, args.task.split(":")[-1], env_cfg.to_dict(), algo, action_clip=clip)
        env.close()
        print(f"[export] {algo} checkpoint {args.checkpoint} -> LEAPP pipeline {path}")
        return
    if algo == "shac":
        runner = ShacRunner(env, agent_cfg, log_dir=None, device="cpu")
        runner.load(args.checkpoint, load_optimizer=False, restore_rng=False, restore_env=False)
        paths = export_bundle(env, runner.get_inference_policy("cpu"), out, env_cfg.to_dict(), "shac")
    else:
        runner = load_ppo_runner(env, agent_cfg, args.checkpoint, device="cpu")
        paths = export_bundle(
            env, runner.deploy_actor(), out, env_cfg.to_dict(), "ppo", action_clip=runner.env.clip_actions
        )
    env.close()
    print(f"[export] {algo} checkpoint {args.checkpoint} -> {', '.join(paths.values())}")


def load_policy(env, agent_cfg, algo: str, checkpoint: str) -> tuple[torch.nn.Module, float | None]:
    """The checkpoint's deterministic policy on raw observations (normaliser included, PPO's action clip folded
    in), on the CPU, and that action clip (None: none)."""
    if algo == "shac":
        runner = ShacRunner(env, agent_cfg, log_dir=None, device="cpu")
        runner.load(checkpoint, load_optimizer=False, restore_rng=False, restore_env=False)
        return runner.get_inference_policy("cpu"), None
    runner = load_ppo_runner(env, agent_cfg, checkpoint, device="cpu")
    actor, clip = runner.deploy_actor(), runner.env.clip_actions
    return (actor, None) if clip is None else (_Clipped(actor, float(clip)), float(clip))


class _Clipped(torch.nn.Module):
    """``clamp(policy(obs), -clip, clip)``: PPO's action clip, part of what the env received in training."""

    def __init__(self, policy: torch.nn.Module, clip: float):
        super().__init__()
        self.policy, self.clip = policy, clip

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        return torch.clamp(self.policy(obs), -self.clip, self.clip)


if __name__ == "__main__":
    main()
