"""Train a policy on a DiffSim task with SHAC (analytic gradients) or rsl_rl's PPO, export it, evaluate it.

    .venv/bin/python scripts/train.py --task DiffSim-Velocity-Flat-AnymalC-Direct --algo shac \
        --num_envs 64 --max_iterations 200 agent.horizon=12 env.solver_cfg.contact_model=smoothed

Overrides are Isaac Lab's: ``env.<field>=value`` / ``agent.<field>=value`` (nested fields with dots), resolved by
Isaac Lab's hydra task-config helper; an unknown key or a value of the wrong type is refused before, and both configs
are validated after them (a bad value is an error naming the field). The flags (--num_envs, --seed, ...) win over
overrides of the same field, as in Isaac Lab's train scripts. The configs are written to ``<log_dir>/params/env.yaml``
and ``agent.yaml``. After training the deployment bundle (``policy.onnx``, ``policy.pt``: the complete controller
with normaliser, action scale, default pose and gait generator; ``io.yaml``: its inputs and outputs, see
``isaaclab_diffsim.deploy``) is written into ``<log_dir>/exported`` and, unless ``--eval_episodes 0``, evaluated
in hard contact with
forward-velocity commands (the play configuration).

Resuming (``--resume <checkpoint>``, or ``agent.resume=True`` with ``agent.load_run``/``agent.load_checkpoint`` as in
Isaac Lab) finishes the original run: training continues up to ``max_iterations`` iterations in total.

Several processes (one per GPU, or CPU processes on gloo) train one policy with ``--distributed`` under torchrun:

    torchrun --standalone --nnodes 1 --nproc_per_node 2 scripts/train.py --distributed --device cuda ...

Each rank steps ``--num_envs`` envs of its own, seeded ``seed + rank``; ``--device cuda`` means the rank's GPU
(``cuda:<LOCAL_RANK>``). Rank 0 logs, checkpoints, exports and evaluates (see docs/distributed.md).

Ctrl-C or SIGTERM saves the last completed iteration as ``model_<it>_interrupted.pt`` and exits with status 130 /
143 (128 + the signal) without export or evaluation (``--eval_on_interrupt`` does both anyway).
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import time

import gymnasium as gym
import torch
from isaaclab.utils.seed import configure_seed

from isaaclab_diffsim.assets.anymal_c_usd import AssetCacheError
from isaaclab_diffsim.deploy import dump_params, export_bundle
from isaaclab_diffsim.rl import distributed
from isaaclab_diffsim.rl.checkpoints import CheckpointError
from isaaclab_diffsim.rl.interrupts import exit_code
from isaaclab_diffsim.rl.policy_loading import AGENT_ENTRY
from isaaclab_diffsim.rl.run_checks import RunError, check_device, check_resume, refuse_overwrite, resolve_resume
from isaaclab_diffsim.rl.warm_start_stage import finished_checkpoint, stage_command, stage_dir
from isaaclab_diffsim.tasks.task_cfgs import resolve_task_cfgs
from isaaclab_diffsim.utils.run_dir import new_run_dir


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--task", default="DiffSim-Velocity-Flat-AnymalC-Direct")
    parser.add_argument("--algo", choices=sorted(AGENT_ENTRY), default="shac")
    parser.add_argument("--device", default="cpu", help="cpu, cuda or cuda:<i> (with --distributed: the rank's GPU)")
    parser.add_argument(
        "--distributed", action="store_true", help="one process per device under torchrun (gloo on cpu, nccl on cuda)"
    )
    parser.add_argument("--num_envs", type=int, default=None)
    parser.add_argument("--max_iterations", type=int, default=None)
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument(
        "--resume", default=None, help="checkpoint file to resume from, or 'auto': the latest checkpoint of --log_dir"
    )
    parser.add_argument("--log_root", default="logs")
    parser.add_argument(
        "--log_dir", default=None, help="exact run directory (default: <log_root>/<algo>/<experiment>/<time>)"
    )
    parser.add_argument("--eval_episodes", type=int, default=64, help="first episode of each env (see evaluate())")
    parser.add_argument("--eval_on_interrupt", action="store_true", help="export and evaluate even when interrupted")
    parser.add_argument("--torch_threads", type=int, default=1, help="Warp's CPU kernels run on one thread")
    parser.add_argument("--debug", action="store_true", help="show the traceback of a usage or checkpoint error")
    parser.add_argument("overrides", nargs="*", help="env.<field>=value / agent.<field>=value")
    return parser.parse_args()


def configure(args):
    if args.max_iterations is not None and args.max_iterations < 1:
        raise RunError(
            f"--max_iterations must be >= 1, got {args.max_iterations} (to evaluate a checkpoint without "
            "training: scripts/play.py --checkpoint CKPT)"
        )
    if args.num_envs is not None and args.num_envs < 1:
        raise RunError(f"--num_envs must be >= 1, got {args.num_envs}")
    check_device(args.device)
    env_cfg, agent_cfg = resolve_task_cfgs(args.task, AGENT_ENTRY[args.algo], args.overrides)
    env_cfg.device = agent_cfg.device = args.device
    if args.num_envs is not None:
        env_cfg.num_envs = args.num_envs
    if args.max_iterations is not None:
        agent_cfg.max_iterations = args.max_iterations
    if args.seed is not None:
        env_cfg.seed = agent_cfg.seed = args.seed
    try:
        env_cfg.validate_values()
        if args.algo == "shac":
            agent_cfg.validate_values()
        else:
            validate_ppo_cfg(agent_cfg)
    except ValueError as err:
        raise SystemExit(f"invalid configuration: {err}") from err
    return env_cfg, agent_cfg


def validate_ppo_cfg(agent_cfg) -> None:
    """The fields of rsl_rl's runner cfg that this script acts on (rsl_rl checks its algorithm's own)."""
    clip = agent_cfg.clip_actions
    if clip is not None and not (isinstance(clip, (int, float)) and clip > 0):
        raise ValueError(f"agent.clip_actions must be a positive number or None, got {clip!r}")
    for name in ("num_steps_per_env", "save_interval"):
        v = getattr(agent_cfg, name)
        if not (isinstance(v, int) and v >= 1):
            raise ValueError(f"agent.{name} must be an integer >= 1, got {v!r}")
    if not (isinstance(agent_cfg.max_iterations, int) and agent_cfg.max_iterations >= 0):
        raise ValueError(f"agent.max_iterations must be an integer >= 0, got {agent_cfg.max_iterations!r}")


def resume_path(args, agent_cfg) -> str | None:
    """``--resume``, else the checkpoint ``agent.resume``/``load_run``/``load_checkpoint`` select (Isaac Lab's rule)."""
    if args.resume:
        return args.resume
    if not agent_cfg.resume:
        return None
    from isaaclab_tasks.utils.parse_cfg import get_checkpoint_path

    root = os.path.abspath(os.path.join(args.log_root, args.algo, agent_cfg.experiment_name))
    return get_checkpoint_path(root, agent_cfg.load_run, agent_cfg.load_checkpoint)


def export_dir(log_dir: str) -> str:
    return os.path.join(log_dir, "exported")


def exportable(env) -> bool:
    """False, saying so, for a diagnostic policy that observes what a robot cannot (``env.terrain_oracle``)."""
    if getattr(env.cfg, "terrain_oracle", False):
        print("[train] not exported: env.terrain_oracle observes the sub-terrain type (a diagnostic)", flush=True)
        return False
    return True


def train_shac(env, agent_cfg, log_dir, args):
    from isaaclab_diffsim.rl.shac import resolve_class

    runner = resolve_class(agent_cfg.class_name)(env, agent_cfg, log_dir=log_dir, device=args.device)
    if args.resume:
        runner.load(args.resume)  # every rank (each restores its own RNG/env state when the file holds it)
        print(f"[train] resumed from {args.resume} at iteration {runner.current_learning_iteration}")
    elif agent_cfg.warm_start:
        runner.warm_start(agent_cfg.warm_start)
    runner.learn()  # up to max_iterations in total
    if (runner.interrupted and not args.eval_on_interrupt) or log_dir is None:  # log_dir None: ranks > 0
        return runner, None
    if exportable(env):
        export_bundle(env, runner.get_inference_policy("cpu"), export_dir(log_dir), env.cfg.to_dict(), "shac")
    return runner, runner.get_inference_policy()


def train_ppo(env, agent_cfg, log_dir, args):
    from isaaclab_diffsim.rl.ppo_runner import make_ppo_runner

    runner = make_ppo_runner(env, agent_cfg, log_dir, args.device)
    if args.resume:
        runner.load(args.resume)
        print(f"[train] resumed from {args.resume}: {runner.completed_iterations} iterations done")
    runner.learn(init_at_random_ep_len=True)  # up to max_iterations in total
    if (runner.interrupted and not args.eval_on_interrupt) or log_dir is None:  # log_dir None: ranks > 0
        return runner, None
    if exportable(env):
        clip = runner.env.clip_actions
        export_bundle(env, runner.deploy_actor(), export_dir(log_dir), env.cfg.to_dict(), "ppo", action_clip=clip)
    return runner, runner.act_policy(args.device)


def main():
    args = parse_args()
    rank = 0
    if args.distributed:
        try:
            info = distributed.init_distributed(args.device)
        except (RuntimeError, ValueError) as err:
            raise SystemExit(f"[train] {err}") from err
        args.device, rank = info.device, info.rank
    try:
        run(args, rank)
    except (RunError, CheckpointError, AssetCacheError) as err:
        if args.debug:
            raise
        raise SystemExit(f"[train] error: {err}") from None
    finally:
        distributed.shutdown()


def preflight(args, env_cfg, agent_cfg) -> None:
    """Everything that can be checked before the env is built: the checkpoint to resume or warm start from and the
    run folder."""
    args.resume = resolve_resume(args.resume, args.log_dir)
    if args.resume is None:
        args.resume = resume_path(args, agent_cfg)
    if args.resume is not None:
        for line in check_resume(args.resume, args.algo, env_cfg, agent_cfg):
            print(f"[train] resume: differs from the checkpoint's settings: {line}", flush=True)
    if args.log_dir:
        refuse_overwrite(args.log_dir, args.resume)
    warm = getattr(agent_cfg, "warm_start", None)
    if warm and args.resume is None and not os.path.isfile(warm):
        raise SystemExit(f"[train] error: agent.warm_start: no checkpoint file {warm}")
    first = getattr(agent_cfg, "warm_start_task", None)
    if first and not warm and args.resume is None:
        if first not in gym.registry:
            raise SystemExit(f"[train] error: agent.warm_start_task: unknown task {first!r}")
        if args.distributed:
            raise SystemExit(
                f"[train] error: agent.warm_start_task ({first}) trains a first stage in one process: train it "
                "first and pass agent.warm_start=<its checkpoint>, or set agent.warm_start_task=null"
            )


def warm_start_stage(args, env_cfg, agent_cfg, log_dir: str) -> None:
    """``agent.warm_start_task``: train that task first in ``<log_dir>/warm_start`` (this script in a subprocess;
    resumed when it holds a checkpoint, skipped once finished) and warm start from its last checkpoint. SIGTERM is
    passed on to the stage; Ctrl-C reaches it from the terminal."""
    folder = stage_dir(log_dir)
    done = finished_checkpoint(folder)
    if done is None:
        cmd = stage_command(
            sys.executable,
            os.path.abspath(__file__),
            agent_cfg,
            folder,
            seed=env_cfg.seed,
            device=args.device,
            num_envs=args.num_envs,
            torch_threads=args.torch_threads,
            overrides=args.overrides,
        )
        print(f"[train] warm-start stage: {agent_cfg.warm_start_task} in {folder}", flush=True)
        proc = subprocess.Popen(cmd)
        previous = {
            signal.SIGTERM: signal.signal(signal.SIGTERM, lambda s, _f: proc.send_signal(s)),
            signal.SIGINT: signal.signal(signal.SIGINT, signal.SIG_IGN),
        }
        try:
            code = proc.wait()
        finally:
            for s, h in previous.items():
                signal.signal(s, h)
        if code != 0:
            print(f"[train] warm-start stage stopped (status {code}); the same command continues it", flush=True)
            sys.exit(code)
        done = finished_checkpoint(folder)
        if done is None:
            raise RunError(f"the warm-start stage in {folder} ended without its final checkpoint and bundle")
    agent_cfg.warm_start = done


def run(args, rank: int) -> None:
    env_cfg, agent_cfg = configure(args)
    env_cfg.seed = env_cfg.seed + rank  # each rank its own envs and noise; rank 0's networks are broadcast
    configure_seed(env_cfg.seed)  # torch, numpy, python (checkpoints store all three)
    torch.set_num_threads(args.torch_threads)
    preflight(args, env_cfg, agent_cfg)
    if rank > 0:
        log_dir = None  # rank 0 alone logs, checkpoints, exports and evaluates
    elif args.log_dir:
        log_dir = os.path.abspath(args.log_dir)
        os.makedirs(log_dir, exist_ok=True)
    else:
        stamp = time.strftime("%Y-%m-%d_%H-%M-%S") + (f"_{agent_cfg.run_name}" if agent_cfg.run_name else "")
        log_dir = new_run_dir(os.path.join(args.log_root, args.algo, agent_cfg.experiment_name), stamp)
    if log_dir is not None and args.resume is None and getattr(agent_cfg, "warm_start_task", None):
        if not agent_cfg.warm_start:
            warm_start_stage(args, env_cfg, agent_cfg, log_dir)
    if log_dir is not None:
        dump_params(log_dir, env_cfg, agent_cfg)  # <log_dir>/params/env.yaml, agent.yaml (Isaac Lab's layout)
    ranks = f" per rank x {distributed.world_size()} ranks" if distributed.is_multi_process() else ""
    if rank == 0:
        print(
            f"[train] task {args.task}, algo {args.algo}, {env_cfg.num_envs} envs{ranks}, contact "
            f"{env_cfg.solver_cfg.contact_model}, {agent_cfg.max_iterations} iterations, logs in {log_dir}",
            flush=True,
        )
    env = gym.make(args.task, cfg=env_cfg).unwrapped
    t0 = time.time()
    train = train_shac if args.algo == "shac" else train_ppo
    runner, policy = train(env, agent_cfg, log_dir, args)
    if runner.interrupted and (policy is None or rank > 0):  # the checkpoint is saved: stop here
        if rank == 0:
            print(
                f"[train] interrupted after {time.time() - t0:.0f} s; resume with --resume {runner.last_checkpoint}",
                flush=True,
            )
        sys.exit(exit_code(runner.interrupt_signal))
    if rank > 0:
        return
    oracle = getattr(env.cfg, "terrain_oracle", False)  # not exported (exportable)
    where = "" if oracle else f"; exported policy to {export_dir(log_dir)}"
    print(f"[train] done in {time.time() - t0:.0f} s{where}", flush=True)
    if args.eval_episodes > 0:
        from isaaclab_diffsim.rl.evaluation import evaluate
        from isaaclab_diffsim.rl.speed_profile import along_summary, profile_summary

        env.set_contact_model("hard")
        env.cfg.use_evaluation_settings()  # the -Play settings
        result = evaluate(env, policy, args.eval_episodes)
        c = env.cfg.commands
        heading = ", heading commands" if c.heading_command else ""
        print(
            f"[eval] hard contact, commands vx {c.lin_vel_x} vy {c.lin_vel_y} m/s, yaw {c.ang_vel_z} rad/s{heading}: "
            f"{result.summary()}",
            flush=True,
        )
        print(f"[eval] speed along the command by command speed: {profile_summary(result.speed_profile)}", flush=True)
        print(f"[eval] by command direction: {profile_summary(result.direction_profile)}", flush=True)
        print(f"[eval] {along_summary(result.speed_profile)}", flush=True)
    if runner.interrupted:  # --eval_on_interrupt
        sys.exit(exit_code(runner.interrupt_signal))


if __name__ == "__main__":
    main()
