"""Writing a deployment bundle (``policy.onnx``, ``policy.pt``, ``io.yaml``) and a run's ``params/`` files."""

from __future__ import annotations

import os
import shutil
import tempfile

import torch
from torch import nn

from .controller import DeployedController
from .io_spec import build_io, write_io

ONNX_OPSET = 18


def controller_for_env(env, policy: nn.Module, action_clip: float | None = None) -> DeployedController:
    """The :class:`DeployedController` of ``policy`` (raw obs -> actions) on ``env``'s joints, scale and gait."""
    cfg = env.cfg
    return DeployedController(
        policy,
        cfg.action_scale,
        env.default_leg.detach().cpu(),
        env.step_dt,
        gait_period_s=cfg.gait.period_s,
        joint_swing_scale=cfg.gait.joint_swing_scale,
        joint_phase_offsets=env.gait_offsets[env.joint_legs].detach().cpu(),
        action_clip=action_clip,
    ).eval()


def export_bundle(
    env, policy: nn.Module, out_dir: str, train_env_cfg: dict, algorithm: str, action_clip: float | None = None
) -> dict:
    """Write ``policy.onnx``, ``policy.pt`` (TorchScript) and ``io.yaml`` into ``out_dir``; returns their paths.

    ``policy`` maps raw observations (gait clock included when the env has one) to actions, on the CPU;
    ``train_env_cfg`` is the env cfg of training as a dict (its contact model and gait go into io.yaml). An env
    with ``terrain_oracle`` is refused (ValueError).
    """
    if getattr(env.cfg, "terrain_oracle", False):
        raise ValueError("env.terrain_oracle: the policy observes the sub-terrain type, which a robot does not know")
    out_dir = os.path.abspath(out_dir)
    parent = os.path.dirname(out_dir)
    names = {"onnx": "policy.onnx", "torchscript": "policy.pt", "io": "io.yaml"}
    if os.path.isdir(out_dir) and set(os.listdir(out_dir)) - set(names.values()):
        raise FileExistsError(
            f"bundle folder {out_dir} holds files other than a bundle's {sorted(names.values())}: "
            "choose a new or empty folder"
        )
    if os.path.exists(out_dir) and not os.path.isdir(out_dir):
        raise FileExistsError(f"bundle folder {out_dir} is a file")
    os.makedirs(parent, exist_ok=True)
    controller = controller_for_env(env, policy, action_clip)
    io = build_io(env, train_env_cfg, {"algorithm": algorithm, "action_clip": action_clip})
    num_obs = io["controller"]["inputs"][0]["shape"][1]
    obs, step = torch.zeros(1, num_obs), torch.zeros(1, 1)
    staging = tempfile.mkdtemp(prefix=f".{os.path.basename(out_dir)}.writing-", dir=parent)
    try:  # written beside the bundle, then swapped in: a failed export leaves the old bundle whole
        staged = {k: os.path.join(staging, f) for k, f in names.items()}
        with torch.no_grad():
            torch.onnx.export(
                controller,
                (obs, step),
                staged["onnx"],
                input_names=["obs", "step"],
                output_names=["joint_pos_target", "actions"],
                opset_version=ONNX_OPSET,
                dynamo=False,
                dynamic_axes={"obs": {0: "N"}, "step": {0: "N"}, "joint_pos_target": {0: "N"}, "actions": {0: "N"}},
            )
            torch.jit.script(controller).save(staged["torchscript"])
        write_io(io, staged["io"])
        _swap_in(staging, out_dir)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return {k: os.path.join(out_dir, f) for k, f in names.items()}


def _swap_in(staging: str, out_dir: str) -> None:
    """Replace ``out_dir`` by the complete ``staging`` folder (renames on one file system)."""
    if not os.path.exists(out_dir):
        os.rename(staging, out_dir)
        return
    old = tempfile.mkdtemp(prefix=f".{os.path.basename(out_dir)}.old-", dir=os.path.dirname(out_dir))
    os.rmdir(old)
    os.rename(out_dir, old)
    try:
        os.rename(staging, out_dir)
    except BaseException:
        os.rename(old, out_dir)
        raise
    shutil.rmtree(old, ignore_errors=True)


def dump_params(log_dir: str, env_cfg, agent_cfg) -> None:
    """``<log_dir>/params/env.yaml`` and ``agent.yaml``, as Isaac Lab's train scripts write them."""
    from isaaclab.utils.io import dump_yaml

    dump_yaml(os.path.join(log_dir, "params", "env.yaml"), env_cfg)
    dump_yaml(os.path.join(log_dir, "params", "agent.yaml"), agent_cfg)
