"""Isaac Lab's manager-based rough ANYmal C task (DiffSim-Velocity-Rough-AnymalC) on the DiffSim backend: Isaac Lab's
own env smoke test passes on it, robots stand on the generated terrain (the feet carry the weight, the base at its
standing height over the terrain under it), the height-scan observation sees that terrain, and the terrain-relative
fall termination."""

import os
import sys
from types import SimpleNamespace

import gymnasium as gym
import isaaclab
import pytest
import torch

pytest.importorskip("isaaclab_tasks")

from isaaclab.envs import ManagerBasedRLEnv  # noqa: E402
from isaaclab_tasks.utils.hydra import resolve_presets  # noqa: E402
from isaaclab_tasks.utils.parse_cfg import load_cfg_from_registry  # noqa: E402

import isaaclab_diffsim.tasks  # noqa: E402, F401  (registers the task ids)
from isaaclab_diffsim.tasks.locomotion.velocity.terminations import base_height_over_terrain_below  # noqa: E402

TASK = "DiffSim-Velocity-Rough-AnymalC"
ISAACLAB_TASK_TESTS = os.path.join(os.path.dirname(isaaclab.__file__), "source", "isaaclab_tasks", "test")


@pytest.mark.parametrize("physics", ["diffsim_smoothed", "diffsim_hard"])
def test_isaaclab_env_smoke_test(physics):
    """Isaac Lab's own smoke test of a registered task (random actions, every signal finite), as its test suite runs
    it for the Newton presets."""
    assert os.path.isfile(os.path.join(ISAACLAB_TASK_TESTS, "env_test_utils.py")), ISAACLAB_TASK_TESTS
    sys.path.insert(0, ISAACLAB_TASK_TESTS)
    try:
        from env_test_utils import _run_environments
    finally:
        sys.path.remove(ISAACLAB_TASK_TESTS)
    _run_environments(TASK, "cpu", 2, physics_preset_name=physics)


def _standing_env(physics: str, num_envs: int = 8) -> ManagerBasedRLEnv:
    cfg = load_cfg_from_registry(TASK, "env_cfg_entry_point")
    cfg.scene.num_envs = num_envs
    cfg.scene.terrain.terrain_generator.num_rows = 3
    cfg.scene.terrain.terrain_generator.num_cols = 3
    cfg.sim.device = "cpu"
    cfg = resolve_presets(cfg, (physics,))
    cfg.seed = 0
    # a deterministic start: no pushes, no reset velocities or offsets
    cfg.events.push_robot = None
    cfg.events.base_com = None
    cfg.events.reset_base.params["pose_range"] = {}
    cfg.events.reset_base.params["velocity_range"] = {}
    cfg.events.reset_robot_joints.params["position_range"] = (1.0, 1.0)
    return ManagerBasedRLEnv(cfg)


@pytest.mark.parametrize("physics", ["diffsim_smoothed", "diffsim_hard"])
def test_robots_stand_on_the_generated_terrain(physics):
    env = _standing_env(physics)
    try:
        terrain = env.scene.terrain
        assert terrain.env_origins[:, 2].abs().max() > 0.3, "the robots should start on terrain of several heights"
        obs, _ = env.reset()
        done = torch.zeros(env.num_envs, dtype=torch.bool)
        for _ in range(100):  # 2 s holding the default pose
            obs, _, term, trunc, _ = env.step(torch.zeros(env.num_envs, env.action_manager.total_action_dim))
            done |= term | trunc
        assert not done.any(), "no robot may fall or reset while standing"
        robot, sensor = env.scene["robot"], env.scene["contact_forces"]
        weight = robot.data.body_mass.torch.sum(-1) * 9.81
        vertical = sensor.data.net_forces_w.torch[..., 2].sum(-1)
        torch.testing.assert_close(vertical, weight, rtol=0.02, atol=0.0)
        hits_z = env.scene["height_scanner"].data.ray_hits_w.torch[..., 2]
        assert torch.isfinite(hits_z).all()
        height = robot.data.root_pos_w.torch[:, 2] - hits_z.mean(-1)
        assert ((height > 0.35) & (height < 0.6)).all(), height
        # the observation's height scan is the base over the terrain under it, less 0.5 (Isaac Lab's height_scan)
        scan = obs["policy"][:, -hits_z.shape[1] :]
        assert scan.shape[1] == 187 and torch.isfinite(scan).all()
        torch.testing.assert_close(scan.mean(-1), height - 0.5, atol=0.05, rtol=0.0)
    finally:
        env.close()


def test_registered_with_ppo_and_play():
    for task in (TASK, f"{TASK}-Play"):
        spec = gym.spec(task)
        assert spec.kwargs["rsl_rl_cfg_entry_point"].endswith("AnymalCRoughDiffSimPPORunnerCfg")
    play = load_cfg_from_registry(f"{TASK}-Play", "env_cfg_entry_point")
    assert play.scene.num_envs == 16 and play.events.push_robot is None
    assert play.scene.terrain.max_init_terrain_level is None


def test_terrain_relative_fall_termination():
    """Root height minus the mean finite hit height, against 0.3 m; rays that missed are ignored, all missed means
    world height."""
    inf = float("inf")
    hits = torch.tensor([[1.0, 1.2, inf], [0.0, 0.0, 0.0], [inf, inf, inf], [-2.0, -2.0, -2.0]])
    hits_w = torch.stack([torch.zeros_like(hits), torch.zeros_like(hits), hits], dim=-1)
    root = torch.tensor([[0, 0, 1.45], [0, 0, 0.25], [0, 0, 0.2], [0, 0, -1.5]], dtype=torch.float32)
    t = SimpleNamespace
    robot = t(data=t(root_pos_w=t(torch=root)))
    scanner = t(data=t(ray_hits_w=t(torch=hits_w)))
    env = t(scene=_Scene({"robot": robot}, {"height_scanner": scanner}))
    fell = base_height_over_terrain_below(env, 0.3)
    assert fell.tolist() == [False, True, True, False]  # 0.35 over, 0.25 over, world 0.2, 0.5 over a pit


class _Scene:
    def __init__(self, entities, sensors):
        self._entities, self.sensors = entities, sensors

    def __getitem__(self, name):
        return self._entities[name]
