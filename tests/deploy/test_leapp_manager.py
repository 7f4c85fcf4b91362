"""Isaac Lab's LEAPP path on the manager-based task: a tiny rsl_rl PPO checkpoint, ``isaaclab leapp export``, and
the exported pipeline's joint targets against the training stack's on the same observations."""

import importlib.metadata
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

pytest.importorskip("leapp")
pytest.importorskip("isaaclab_tasks")

import gymnasium as gym  # noqa: E402
import yaml  # noqa: E402
from isaaclab_tasks.utils.hydra import resolve_presets  # noqa: E402

import isaaclab_diffsim.tasks  # noqa: E402, F401  (registers the task ids)
from isaaclab_diffsim.tasks.task_cfgs import load_task_cfgs  # noqa: E402

TASK = "DiffSim-Velocity-Flat-AnymalC"
ROOT = Path(__file__).resolve().parents[2]
TARGET_ATOL = 1e-5
"""Joint position targets [rad]: LEAPP's ONNX graph against rsl_rl's torch actor + Isaac Lab's action term."""
STEPS = 20


def _env_and_agent_cfg(task: str, num_envs: int):
    env_cfg, agent_cfg = load_task_cfgs(task, "rsl_rl_cfg_entry_point")
    env_cfg = resolve_presets(env_cfg)  # the default preset (diffsim_smoothed)
    env_cfg.scene.num_envs, env_cfg.sim.device, agent_cfg.device = num_envs, "cpu", "cpu"
    from isaaclab_rl.rsl_rl import handle_deprecated_rsl_rl_cfg

    return env_cfg, handle_deprecated_rsl_rl_cfg(agent_cfg, importlib.metadata.version("rsl-rl-lib"))


def _runner(env, agent_cfg, log_dir):
    from isaaclab.utils import to_dict
    from rsl_rl.runners import OnPolicyRunner

    runner = OnPolicyRunner(env, to_dict(agent_cfg), log_dir=log_dir, device="cpu")
    runner.logger.git_status_repos = []
    return runner


def _train_checkpoint(tmp_path) -> str:
    """One PPO iteration of 4 envs x 4 steps, saved as ``model_1.pt``."""
    from isaaclab_rl.rsl_rl import RslRlVecEnvWrapper

    env_cfg, agent_cfg = _env_and_agent_cfg(TASK, 4)
    agent_cfg.num_steps_per_env = 4
    env = RslRlVecEnvWrapper(gym.make(TASK, cfg=env_cfg), clip_actions=agent_cfg.clip_actions)
    try:
        runner = _runner(env, agent_cfg, str(tmp_path / "run"))
        runner.learn(num_learning_iterations=1)
        path = str(tmp_path / "run" / "model_1.pt")
        runner.save(path)
    finally:
        env.close()
    return path


def _export(checkpoint: str, out: Path) -> Path:
    cmd = [
        os.path.join(os.path.dirname(sys.executable), "isaaclab"),
        *("leapp", "export", "--rl_library", "rsl_rl", "--task", TASK, "--device", "cpu"),
        *("--checkpoint", checkpoint, "--export_save_path", str(out), "--disable_graph_visualization"),
        "agent.device=cpu",
    ]
    env = {**os.environ, "PYTHONPATH": str(ROOT / "source" / "isaaclab_diffsim")}
    proc = subprocess.run(cmd, cwd=out.parent, env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return out / TASK / f"{TASK}.yaml"


def _read_inputs(desc: dict, env) -> dict:
    """The pipeline's inputs from the scene and the command manager, as ``LeappDeploymentEnv`` reads them."""
    node = next(iter(desc["models"]))
    robot, inputs = env.unwrapped.scene["robot"], {}
    for inp in desc["models"][node]["inputs"]:
        conn = inp.get("isaaclab_connection")
        if conn is None:
            continue
        kind, *rest = conn.split(":")
        if kind == "state":
            assert rest[0] == "robot", conn
            inputs[f"{node}/{inp['name']}"] = getattr(robot.data, rest[1]).torch.clone()
        else:
            inputs[f"{node}/{inp['name']}"] = env.unwrapped.command_manager.get_command(rest[0]).clone()
    return inputs


@pytest.mark.integration
def test_leapp_export_matches_training_stack(tmp_path, one_torch_thread):
    """Train (1 iteration), export with ``isaaclab leapp export``, then step the -Play task with the training
    stack's policy while the LEAPP pipeline (onnxruntime, its own last-action state) runs on the same scene
    state: its joint targets equal the action term's processed actions within TARGET_ATOL for STEPS steps."""
    from isaaclab_rl.rsl_rl import RslRlVecEnvWrapper
    from leapp import InferenceManager

    checkpoint = _train_checkpoint(tmp_path)
    pipeline = _export(checkpoint, tmp_path / "leapp")
    desc = yaml.safe_load(pipeline.read_text().split("\n\nsystem information")[0])
    node = next(iter(desc["models"]))
    connections = {i.get("isaaclab_connection") for i in desc["models"][node]["inputs"]}
    assert {"state:robot:root_lin_vel_b", "state:robot:joint_pos", "command:base_velocity"} <= connections

    env_cfg, agent_cfg = _env_and_agent_cfg(f"{TASK}-Play", 1)
    env = RslRlVecEnvWrapper(gym.make(f"{TASK}-Play", cfg=env_cfg), clip_actions=agent_cfg.clip_actions)
    try:
        runner = _runner(env, agent_cfg, None)
        runner.load(checkpoint, map_location="cpu")
        policy = runner.get_inference_policy(device="cpu")
        inference = InferenceManager(str(pipeline))
        inference.reset()
        obs = env.get_observations()
        term = env.unwrapped.action_manager.get_term("joint_pos")
        worst = 0.0
        for _ in range(STEPS):
            with torch.inference_mode():
                got = inference.run_policy(_read_inputs(desc, env))[f"{node}/joint_pos"]
                obs, _, dones, _ = env.step(policy(obs))
            assert not bool(dones.any()), "the episode ended: the comparison needs one episode"
            worst = max(worst, float((torch.as_tensor(got) - term.processed_actions).abs().max()))
        print(f"max |LEAPP - training stack| joint target over {STEPS} steps: {worst:.3g} rad")
        np.testing.assert_array_less(worst, TARGET_ATOL)
    finally:
        env.close()
