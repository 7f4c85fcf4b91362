"""Run a LEAPP pipeline for N episodes in Isaac Lab's ``LeappDeploymentEnv`` and report tracking error and falls.

    .venv/bin/isaaclab leapp export --rl_library rsl_rl --task DiffSim-Velocity-Flat-AnymalC --device cpu \
        --checkpoint logs/rsl_rl/.../model_299.pt --export_save_path exported_leapp agent.device=cpu
    .venv/bin/python scripts/deploy/leapp_deploy.py --task DiffSim-Velocity-Flat-AnymalC-Play \
        --pipeline exported_leapp/DiffSim-Velocity-Flat-AnymalC/DiffSim-Velocity-Flat-AnymalC.yaml \
        --episodes 8 --episode_s 10 physics=diffsim_hard [--out result.json]

What ``isaaclab leapp deploy`` does (Isaac Lab's task config and presets resolved by Hydra, the scene and physics
built from it, the pipeline's inputs read from the scene and the command manager, its outputs written to the robot),
but for a finite number of episodes: each starts with the task's reset events and a new command, and ends after
``--episode_s`` or when the robot falls (``isaaclab_diffsim.deploy.leapp_pipeline.episodes``). Prints one JSON line
of the metrics; ``--out`` writes it to a file. Any ``physics=``/``env.*`` override of the task is accepted.

The scene's actuators run the actuator the pipeline carries (``scripts/export.py --format leapp`` records the
differentiable task's gains and DC-motor envelope, which differ from the scene's ANYdrive); ``--kp`` / ``--kd``
override its gains, and the log says so. A pipeline without one (Isaac Lab's export) keeps the task's actuators.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import torch


def parse_args(argv=None):
    from isaaclab.app import add_launcher_args

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--task", required=True, help="registered task whose scene, commands and events are used")
    parser.add_argument("--pipeline", default=None, help="the LEAPP YAML written by the export")
    parser.add_argument(
        "--training_stack",
        default=None,
        metavar="CHECKPOINT",
        help="instead of a pipeline: the manager-based env with this rsl_rl checkpoint's policy (the stack the"
        " export came from), same episodes and metrics",
    )
    parser.add_argument("--episodes", type=int, default=4)
    parser.add_argument("--episode_s", type=float, default=None, help="episode length [s] (default: the task's)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--min_height", type=float, default=0.3, help="a fall: base below this height [m]")
    parser.add_argument(
        "--kp",
        type=float,
        default=None,
        help="PD stiffness [N m/rad] of every actuator of the scene, overriding the pipeline's actuator (default: the"
        " pipeline's, else the task's)",
    )
    parser.add_argument("--kd", type=float, default=None, help="PD damping [N m s/rad] of every actuator (as --kp)")
    parser.add_argument("--out", default=None, help="write the metrics as JSON here")
    add_launcher_args(parser)
    parser.set_defaults(device="cpu")
    args, hydra_args = parser.parse_known_args(argv)
    if (args.pipeline is None) == (args.training_stack is None):
        parser.error("give one of --pipeline and --training_stack")
    args.headless = True
    return args, hydra_args


def make_env(args, env_cfg, agent_cfg):
    """``LeappDeploymentEnv`` on the pipeline, or the training stack (after the simulation was launched)."""
    if args.training_stack is None:
        from isaaclab.envs import LeappDeploymentEnv

        return LeappDeploymentEnv(env_cfg, args.pipeline)
    import gymnasium as gym
    from isaaclab.utils import to_dict
    from isaaclab_rl.rsl_rl import RslRlVecEnvWrapper, check_rsl_rl_version, handle_deprecated_rsl_rl_cfg
    from rsl_rl.runners import OnPolicyRunner

    from isaaclab_diffsim.deploy.leapp_pipeline.training_stack import TrainingStackEpisodes

    env_cfg.scene.num_envs, agent_cfg.device = 1, args.device
    agent_cfg = handle_deprecated_rsl_rl_cfg(agent_cfg, check_rsl_rl_version())
    env = RslRlVecEnvWrapper(gym.make(args.task, cfg=env_cfg), clip_actions=agent_cfg.clip_actions)
    runner = OnPolicyRunner(env, to_dict(agent_cfg), log_dir=None, device=args.device)
    runner.load(args.training_stack, map_location=args.device)
    return TrainingStackEpisodes(env, runner.get_inference_policy(device=args.device))


def main(argv=None) -> int:
    from isaaclab_diffsim.deploy.leapp_pipeline import require_leapp

    require_leapp()
    from isaaclab.app import launch_simulation
    from isaaclab.utils.seed import configure_seed
    from isaaclab_tasks.utils.hydra import resolve_task_config

    import isaaclab_diffsim.tasks  # noqa: F401  (registers the DiffSim-* tasks)
    from isaaclab_diffsim.deploy.leapp_pipeline.actuator import deploy_actuators

    args, hydra_args = parse_args(argv)
    original_argv = sys.argv
    sys.argv = [original_argv[0]] + hydra_args  # Isaac Lab's Hydra reads the overrides from sys.argv
    try:
        agent_entry = "rsl_rl_cfg_entry_point" if args.training_stack else ""
        env_cfg, agent_cfg = resolve_task_config(args.task, agent_entry)
    finally:
        sys.argv = original_argv
    env_cfg.seed = args.seed
    robot = env_cfg.scene.robot
    robot.actuators, notes = deploy_actuators(robot.actuators, args.pipeline, args.kp, args.kd)
    for note in notes:
        print(f"[leapp_deploy] {note}", file=sys.stderr)
    env_cfg.sim.device = args.device
    configure_seed(args.seed)
    episode_s = args.episode_s if args.episode_s is not None else env_cfg.episode_length_s
    with launch_simulation(env_cfg, args):
        from isaaclab_diffsim.deploy.leapp_pipeline.episodes import run_episodes

        env = make_env(args, env_cfg, agent_cfg)
        try:
            start = time.perf_counter()
            max_steps = max(1, round(episode_s / env.step_dt))
            metrics = run_episodes(env, args.episodes, max_steps, min_height=args.min_height)
            metrics["wall_s"] = time.perf_counter() - start
        finally:
            (env.env if args.training_stack else env).close()
    metrics.update(task=args.task, pipeline=args.pipeline, training_stack=args.training_stack)
    metrics.update(overrides=hydra_args, seed=args.seed)
    line = json.dumps(metrics)
    print(line)
    if args.out:
        with open(args.out, "w") as f:
            f.write(line + "\n")
    return 0


if __name__ == "__main__":
    torch.set_num_threads(1)
    raise SystemExit(main())
