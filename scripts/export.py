"""Write the deployment bundle of a SHAC checkpoint: ``policy.onnx``, ``policy.pt`` and ``io.yaml``.

    .venv/bin/python scripts/export.py --checkpoint logs/shac/.../model_200.pt [--out DIR]

The env is rebuilt (one env, CPU) from the env cfg the checkpoint carries (``env_cfg``), or else from the run's
``params/env.yaml``; the agent cfg from the checkpoint's ``cfg``. The bundle's controller takes the observation
terms and the step counter that ``io.yaml`` declares and returns joint position targets in its joint order (see
``isaaclab_diffsim.deploy``). Default ``--out``: ``exported/`` next to the checkpoint.
"""

from __future__ import annotations

import argparse
import os

import gymnasium as gym
import torch
from isaaclab.utils.dict import update_class_from_dict

from isaaclab_diffsim.deploy import export_bundle
from isaaclab_diffsim.rl.checkpoints import checkpoint_error, load_checkpoint
from isaaclab_diffsim.rl.shac import ShacRunner
from isaaclab_diffsim.utils.cli import load_task_cfgs


def stored_env_cfg(path: str, state: dict) -> dict:
    """The env cfg of training: the checkpoint's ``env_cfg``, else ``params/env.yaml`` of its run directory."""
    if state.get("env_cfg") is not None:
        return state["env_cfg"]
    params = os.path.join(os.path.dirname(os.path.abspath(path)), "params", "env.yaml")
    if os.path.isfile(params):
        from isaaclab.utils.io import load_yaml

        return load_yaml(params)
    raise checkpoint_error(path, f"carries no env cfg and there is no {params}: cannot tell the joint order, gains"
                                 " and gait the policy was trained with")  # fmt: skip


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--checkpoint", required=True)
    parser.add_argument("--out", default=None, help="bundle directory (default: <checkpoint dir>/exported)")
    parser.add_argument("--task", default="DiffSim-Velocity-Flat-AnymalC-Direct")
    args = parser.parse_args()
    torch.set_num_threads(1)
    state = load_checkpoint(args.checkpoint, ShacRunner.CHECKPOINT_KEYS, "SHAC runner", map_location="cpu")
    env_cfg, agent_cfg = load_task_cfgs(args.task, "shac_cfg_entry_point")
    train_env = stored_env_cfg(args.checkpoint, state)
    update_class_from_dict(env_cfg, train_env)
    if state.get("cfg") is not None:
        update_class_from_dict(agent_cfg, state["cfg"])
    env_cfg.num_envs, env_cfg.device, agent_cfg.device = 1, "cpu", "cpu"
    env = gym.make(args.task, cfg=env_cfg).unwrapped
    runner = ShacRunner(env, agent_cfg, log_dir=None, device="cpu")
    runner.load(args.checkpoint, load_optimizer=False, restore_rng=False, restore_env=False)
    out = args.out or os.path.join(os.path.dirname(os.path.abspath(args.checkpoint)), "exported")
    paths = export_bundle(env, runner.get_inference_policy("cpu"), out, env_cfg.to_dict(), "shac")
    env.close()
    print(f"[export] {args.checkpoint} -> {', '.join(paths.values())}")


if __name__ == "__main__":
    main()
