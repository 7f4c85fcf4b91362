"""Evaluate a trained checkpoint (SHAC or PPO) for M episodes under a chosen contact model.

    .venv/bin/python scripts/play.py --algo shac --checkpoint logs/shac/.../model_200.pt \
        --contact_model hard --episodes 64 --plot joints.png

Prints mean return +- std, mean linear-velocity tracking error and fall rate over the first episode of each env
(see :func:`~isaaclab_diffsim.rl.evaluation.evaluate`). Uses the task's -Play
configuration (forward-velocity commands in [-1, 1] m/s, no pushes); overrides as in train.py.

Deployment-loop check: ``--onnx BUNDLE_DIR`` (instead of ``--checkpoint``) drives the simulation through the
bundle's ``policy.onnx`` with onnxruntime only, its observations built from the simulated state as ``io.yaml``
declares; a bundle whose joint order, observation terms/size, gait or dt differ from the task's is refused.

Visual debugging (docs/visual_debugging.md):

    --record out.usd [--record_envs 4 --record_steps 500]   time-sampled USD of the evaluation's first steps:
                                                            robots, per-foot force/distance/weight arrows
    --record_grad_horizon 12                                 record a differentiated rollout instead (after the
                                                            evaluation): per-step actor-gradient magnitude
    --viz newton_gl[,rerun,viser]                            Isaac Lab's visualizers on the evaluation
    --video out.gif [--video_length 200]                     frames of the newton_gl visualizer
"""

from __future__ import annotations

import argparse
import os
import time

import gymnasium as gym
import numpy as np
import torch

from isaaclab_diffsim.assets.anymal_c_usd import AssetCacheError
from isaaclab_diffsim.deploy import BundleMismatchError, OnnxBundlePolicy, open_bundle
from isaaclab_diffsim.rl.checkpoints import CheckpointError
from isaaclab_diffsim.rl.evaluation import evaluate
from isaaclab_diffsim.rl.policy_loading import AGENT_ENTRY, ALGO_NAMES, checkpoint_algorithm, load_policy
from isaaclab_diffsim.rl.run_checks import RunError, check_device
from isaaclab_diffsim.solver import CONTACT_MODELS
from isaaclab_diffsim.tasks.task_cfgs import resolve_task_cfgs


def joint_rows_by_leg(joint_names: list[str]) -> dict[str, list[tuple[int, str]]]:
    """Columns of the joint trace grouped by leg: {"LF": [(column, "HAA"), ...], ...}, in the model's joint order
    (``env.layout.joint_names``, e.g. ``LF_HAA``; the legs' order differs between asset sources)."""
    legs: dict[str, list[tuple[int, str]]] = {}
    for col, name in enumerate(joint_names):
        leg, _, joint = name.partition("_")
        legs.setdefault(leg, []).append((col, joint))
    return legs


def plot_joints(trace, joint_names, step_dt, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    legs = joint_rows_by_leg(joint_names)
    t = [i * step_dt for i in range(len(trace))]
    fig, axes = plt.subplots(len(legs), 1, sharex=True, figsize=(9, 8))
    for ax, (leg, joints) in zip(axes, legs.items()):
        for col, joint in joints:
            ax.plot(t, trace[:, col], label=joint)
        ax.set_ylabel(f"{leg} [rad]")
        ax.legend(loc="upper right", fontsize=7)
    axes[-1].set_xlabel("time [s]")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    print(f"[play] joint trajectories of env 0 written to {path}")


def make_recording(env, args, finish):
    """A step callback recording the first ``--record_steps`` steps of the evaluation into ``--record``."""
    from isaaclab_diffsim.recording import RolloutRecorder

    steps = args.record_steps or env.max_episode_length
    recorder = RolloutRecorder(env, args.record, args.record_envs, geometry=args.record_geometry)
    t0 = time.perf_counter()

    def step():
        if recorder.frames < steps:
            recorder.add_step()

    def save():
        path = recorder.save()
        print(
            f"[play] recorded {recorder.frames} frames of {recorder.record_envs} robots to {path} "
            f"({os.path.getsize(path) / 1e6:.1f} MB, {time.perf_counter() - t0:.1f} s with the evaluation)"
        )

    finish.append(save)
    return step


def record_with_gradients(env, policy, args):
    """A fresh rollout differentiated in horizons of ``--record_grad_horizon`` steps, recorded into ``--record``."""
    from isaaclab_diffsim.recording import RolloutRecorder, record_differentiated_rollout

    steps = args.record_steps or env.max_episode_length
    env.reset()
    recorder = RolloutRecorder(env, args.record, args.record_envs, geometry=args.record_geometry)
    t0 = time.perf_counter()
    norms = record_differentiated_rollout(env, policy, recorder, steps, args.record_grad_horizon)
    path = recorder.save()
    print(
        f"[play] recorded {recorder.frames} differentiated frames (horizon {args.record_grad_horizon}) to {path} "
        f"({os.path.getsize(path) / 1e6:.1f} MB, {time.perf_counter() - t0:.1f} s); |dJ/da_t| median "
        f"{float(np.median(norms)):.3g}, max {float(np.max(norms)):.3g}"
    )


def make_visualizer_step(env, args, finish):
    """A step callback driving Isaac Lab's visualizers (and collecting ``--video`` frames)."""
    from isaaclab_diffsim.recording.isaaclab_viz import IsaacLabVisualizers, write_video

    viz = IsaacLabVisualizers(env)
    frames = []

    def step():
        viz.step()
        if args.video and len(frames) < args.video_length:
            frames.append(viz.frame())

    if args.video:
        finish.append(
            lambda: print(f"[play] video: {write_video(frames, args.video, 1.0 / env.step_dt)} ({len(frames)} frames)")
        )
    return step


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--task", default="DiffSim-Velocity-Flat-AnymalC-Direct-Play")
    parser.add_argument("--algo", choices=sorted(AGENT_ENTRY), default="shac")
    parser.add_argument("--checkpoint", default=None, help="checkpoint to evaluate (or --onnx)")
    parser.add_argument(
        "--onnx",
        default=None,
        help="deployment bundle directory: drive the env through its "
        "policy.onnx with onnxruntime only, observations built as its io.yaml says",
    )
    parser.add_argument("--contact_model", choices=sorted(CONTACT_MODELS), default="hard")
    parser.add_argument("--episodes", type=int, default=64)
    parser.add_argument("--num_envs", type=int, default=None, help="default: --episodes (one round of episodes)")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--plot", default=None, help="PNG path for a joint-trajectory plot")
    parser.add_argument("--record", default=None, help="USD path (.usd/.usda/.usdc) for a recording of the rollout")
    parser.add_argument(
        "--record_envs", type=int, default=None, help="robots to record (the first ones; default: min(4, envs))"
    )
    parser.add_argument("--record_steps", type=int, default=None, help="steps to record (default: one episode)")
    parser.add_argument(
        "--record_geometry",
        choices=("all", "visual"),
        default="all",
        help="the model's shapes on the robot's bodies: all of them, or only those flagged visible",
    )
    parser.add_argument(
        "--record_grad_horizon",
        type=int,
        default=0,
        help="> 0: record a rollout differentiated in horizons of this length (gradient magnitudes)",
    )
    parser.add_argument("--viz", default=None, help="Isaac Lab visualizers, comma-separated: newton_gl, rerun, viser")
    parser.add_argument(
        "--video", default=None, help="animated GIF of the newton_gl visualizer (needs --viz newton_gl)"
    )
    parser.add_argument("--video_length", type=int, default=200, help="steps in the video")
    parser.add_argument(
        "--debug", action="store_true", help="show the traceback of a usage, checkpoint or bundle error"
    )
    parser.add_argument("overrides", nargs="*")
    args = parser.parse_args()
    if (args.checkpoint is None) == (args.onnx is None):
        parser.error("give exactly one of --checkpoint and --onnx")
    if args.onnx and args.record_grad_horizon > 0:
        parser.error("--record_grad_horizon differentiates the policy: it needs --checkpoint, not --onnx")
    if args.episodes < 1:
        parser.error(f"--episodes must be >= 1, got {args.episodes}")
    if args.num_envs is not None and args.num_envs < 1:
        parser.error(f"--num_envs must be >= 1, got {args.num_envs}")
    num_envs = args.episodes if args.num_envs is None else args.num_envs
    if args.record_envs is None:
        args.record_envs = min(4, num_envs)
    elif not 1 <= args.record_envs <= num_envs:
        parser.error(f"--record_envs must be in [1, {num_envs}] (the envs played), got {args.record_envs}")
    torch.set_num_threads(1)
    try:
        play(args, num_envs)
    except (RunError, CheckpointError, BundleMismatchError, AssetCacheError) as err:
        if args.debug:
            raise
        raise SystemExit(f"[play] error: {err}") from None


def play(args, num_envs: int) -> None:
    check_device(args.device)
    if args.onnx:
        open_bundle(args.onnx)  # before the env is built: a missing or unreadable bundle fails fast
    else:
        written_by, _ = checkpoint_algorithm(args.checkpoint)
        if written_by != args.algo:
            raise RunError(
                f"checkpoint {args.checkpoint} was written by {ALGO_NAMES[written_by]}, not "
                f"{ALGO_NAMES[args.algo]}: play it with --algo {written_by}"
            )
    env_cfg, agent_cfg = resolve_task_cfgs(args.task, AGENT_ENTRY[args.algo], args.overrides)
    env_cfg.device = agent_cfg.device = args.device
    env_cfg.num_envs = num_envs
    env_cfg.solver_cfg.contact_model = args.contact_model
    viz = [v for v in args.viz.split(",") if v] if args.viz else []
    if args.video and "newton_gl" not in viz:
        raise SystemExit("--video records the newton_gl visualizer's frames: add --viz newton_gl")
    if viz:
        from isaaclab_diffsim.recording.isaaclab_viz import request_visualizers

        try:
            request_visualizers(viz)
        except (ValueError, ImportError) as err:
            raise SystemExit(f"[play] {err}") from err
    env = gym.make(args.task, cfg=env_cfg).unwrapped
    if args.onnx:
        try:
            policy = OnnxBundlePolicy(args.onnx, env)
        except BundleMismatchError as err:
            raise SystemExit(f"[play] bundle {args.onnx} does not fit task {args.task}: {err}") from err
    else:
        policy = load_policy(args.algo, env, agent_cfg, args.checkpoint, args.device)
    callbacks, finish = [], []
    if args.record and args.record_grad_horizon <= 0:
        callbacks.append(make_recording(env, args, finish))
    if viz:
        callbacks.append(make_visualizer_step(env, args, finish))
    env.reset(seed=env_cfg.seed)  # the same episodes whatever loading the policy drew from the env's generator
    t0 = time.perf_counter()
    result = evaluate(
        env, policy, args.episodes, step_callback=(lambda: [c() for c in callbacks]) if callbacks else None
    )
    source = f"onnx {args.onnx}" if args.onnx else f"{args.algo} {os.path.basename(args.checkpoint)}"
    print(f"[play] {source}, {args.contact_model} contact: {result.summary()} ({time.perf_counter() - t0:.1f} s)")
    if args.onnx:
        print(
            f"[play] onnx controller vs env: max |joint_pos_target - env target| {policy.max_target_error:.3g} rad, "
            f"max |built obs - env obs| {policy.max_obs_error:.3g}"
        )
    for f in finish:
        f()
    if args.record and args.record_grad_horizon > 0:
        record_with_gradients(env, policy, args)
    if args.plot:
        plot_joints(result.joint_trace, env.layout.joint_names, env.step_dt, args.plot)


if __name__ == "__main__":
    main()
