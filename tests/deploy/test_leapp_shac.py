"""LEAPP export of a policy of the differentiable task through the env's annotations: the pipeline (onnxruntime,
its own last-action and gait-clock state) returns the env's joint targets on the same states."""

import pytest
import torch

pytest.importorskip("leapp")

from isaaclab_diffsim.deploy.leapp_pipeline.shac_export import export_leapp, prepare_env_cfg_for_export  # noqa: E402
from isaaclab_diffsim.envs.rotations import quat_rotate_inverse  # noqa: E402
from isaaclab_diffsim.tasks.direct.locomotion.velocity import DiffVelocityEnv  # noqa: E402
from isaaclab_diffsim.tasks.task_cfgs import load_task_cfgs  # noqa: E402

TASKS = ("DiffSim-Velocity-Flat-AnymalC-Direct", "DiffSim-Velocity-Flat-AnymalC-Trot-Direct")
"""The default task (no gait clock) and the trot task (clock and trajectory generator in the graph)."""
TARGET_ATOL = 1e-5
"""Joint position targets [rad]: the ONNX pipeline against the env's torch targets."""
STEPS = 15


def _inputs(env, node: str) -> dict:
    """The pipeline's inputs from the env's state, as a robot (or the manager-based scene) measures them."""
    q, qd = env.q.detach(), env.qd.detach()
    quat = q[:, 3:7]
    values = {
        "robot_root_quat_w": quat,
        "robot_root_lin_vel_b": quat_rotate_inverse(quat, qd[:, 0:3]),
        "robot_root_ang_vel_b": quat_rotate_inverse(quat, qd[:, 3:6]),
        "base_velocity": env.commands,
        "robot_joint_pos": q[:, 7:],
        "robot_joint_vel": qd[:, 6:],
    }
    return {f"{node}/{k}": v.clone() for k, v in values.items()}


@pytest.mark.integration
@pytest.mark.parametrize("TASK", TASKS)
def test_shac_leapp_pipeline_matches_env(TASK, tmp_path, one_torch_thread):
    """Trace a random policy on the task (URDF model: no Isaac Lab scene needed), then run the export beside the env
    for STEPS steps from a reset: targets equal within TARGET_ATOL, the trot task's trajectory generator included."""
    from leapp import InferenceManager

    env_cfg, _ = load_task_cfgs(TASK, "shac_cfg_entry_point")
    env_cfg.asset_source = "urdf"
    prepare_env_cfg_for_export(env_cfg)
    clock = "Trot" in TASK
    assert (env_cfg.gait.period_s > 0 and env_cfg.gait.joint_swing_scale > 0) == clock
    env = DiffVelocityEnv(env_cfg)
    torch.manual_seed(0)
    policy = torch.nn.Sequential(torch.nn.Linear(env.num_obs, 32), torch.nn.ELU(), torch.nn.Linear(32, 12))
    with torch.no_grad():
        policy[-1].weight.mul_(0.1)
    pipeline = export_leapp(env, policy, str(tmp_path), TASK, env.cfg.to_dict(), "shac")
    assert env.leapp_node is None

    inference = InferenceManager(pipeline)
    inference.reset()
    worst = 0.0
    with torch.no_grad():
        obs = env.reset()
        for _ in range(STEPS):
            got = inference.run_policy(_inputs(env, TASK))[f"{TASK}/joint_pos"]
            obs, _, terminated, truncated, _ = env.step(policy(obs))
            targets = env._targets_leg
            assert not bool((terminated | truncated).any()), "the episode ended: the comparison needs one episode"
            worst = max(worst, float((torch.as_tensor(got) - targets).abs().max()))
    print(f"max |LEAPP - env| joint target over {STEPS} steps: {worst:.3g} rad")
    assert worst < TARGET_ATOL
