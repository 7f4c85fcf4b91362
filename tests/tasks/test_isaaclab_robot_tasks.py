"""Isaac Lab's manager-based flat velocity tasks of ANYmal B and Unitree Go2 on the DiffSim backend
(DiffSim-Velocity-Flat-AnymalB, DiffSim-Velocity-Flat-Go2): their locally converted USDs have the URDF's bodies,
mass and foot positions, Isaac Lab's own env smoke test passes on them, and the robots stand on their feet."""

import os
import sys
import xml.etree.ElementTree as ET

import gymnasium as gym
import isaaclab
import newton
import numpy as np
import pytest
import torch
import warp as wp
from helpers.manager_envs import deterministic_start

pytest.importorskip("isaaclab_tasks")

from isaaclab.envs import ManagerBasedRLEnv  # noqa: E402
from isaaclab_tasks.utils.hydra import resolve_presets  # noqa: E402
from isaaclab_tasks.utils.parse_cfg import load_cfg_from_registry  # noqa: E402
from pxr import Usd, UsdGeom, UsdPhysics  # noqa: E402

import isaaclab_diffsim.tasks  # noqa: E402, F401  (registers the task ids)
from isaaclab_diffsim.assets.anymal_c import ANYMAL_C_ROBOT_CFG  # noqa: E402
from isaaclab_diffsim.assets.anymal_c_usd import anymal_c_conversion  # noqa: E402
from isaaclab_diffsim.assets.robot_builder import build_robot_model  # noqa: E402
from isaaclab_diffsim.assets.robot_usd import robot_usd_conversion, robot_usd_path  # noqa: E402
from isaaclab_diffsim.assets.robots import ROBOTS, robot_cfg  # noqa: E402

ISAACLAB_TASK_TESTS = os.path.join(os.path.dirname(isaaclab.__file__), "source", "isaaclab_tasks", "test")
TASKS = {"anymal_b": "DiffSim-Velocity-Flat-AnymalB", "go2": "DiffSim-Velocity-Flat-Go2"}
FEET = {"anymal_b": "{leg}_FOOT", "go2": "{leg}_foot"}
LINKS = {"anymal_b": ("HIP", "THIGH", "SHANK", "FOOT"), "go2": ("hip", "thigh", "calf", "foot")}
FOOT_RADIUS = {"anymal_b": 0.031, "go2": 0.022}
"""The URDF's foot sphere (ANYmal B) and ``GO2_ROBOT_CFG.foot_sphere`` (Go2)."""
GRAVITY = 9.81


def _urdf_mass(robot) -> float:
    return sum(float(m.get("value")) for m in ET.parse(robot.urdf_path()).getroot().iter("mass"))


def _usd_foot_sphere_centres(path, robot) -> np.ndarray:
    """World centres (legs in ``robot.legs`` order) of the USD's foot spheres at the default pose (Newton import)."""
    builder = newton.ModelBuilder()
    builder.add_usd(Usd.Stage.Open(str(path)), load_visual_shapes=False)
    for j, label in enumerate(builder.joint_label):
        name = label.rsplit("/", 1)[-1]
        if name in robot.default_joint_pos:
            builder.joint_q[builder.joint_q_start[j]] = robot.default_joint_pos[name]
    model = builder.finalize(device="cpu")
    state = model.state()
    newton.eval_fk(model, model.joint_q, model.joint_qd, state)
    body_q, shape_tf = state.body_q.numpy(), model.shape_transform.numpy()
    by_label = {model.shape_label[s]: s for s in range(model.shape_count)}
    out = []
    for leg in robot.legs:
        s = next(i for label, i in by_label.items() if label.endswith(f"/{FEET[robot.name].format(leg=leg)}/sphere"))
        tf = wp.transform_multiply(wp.transform(*body_q[model.shape_body.numpy()[s]]), wp.transform(*shape_tf[s]))
        out.append(np.array(tf.p))
    return np.stack(out)


@pytest.mark.parametrize("name", sorted(TASKS))
def test_usd_has_the_urdf_bodies_mass_and_feet(name, tmp_path):
    robot = ROBOTS[name]
    path = robot_usd_path(robot, cache_dir=tmp_path)
    stage = Usd.Stage.Open(str(path))
    root = stage.GetDefaultPrim()
    bodies = {p.GetName(): p for p in stage.Traverse() if p.HasAPI(UsdPhysics.RigidBodyAPI)}
    expected = {"base"} | {f"{leg}_{link}" for leg in robot.legs for link in LINKS[name]}
    assert set(bodies) == expected and len(bodies) == 17
    assert all(p.GetParent() == root for p in bodies.values())  # ``/Robot/<body>``, as Isaac Lab's USDs
    mass = sum(p.GetAttribute("physics:mass").Get() for p in bodies.values())
    assert mass == pytest.approx(_urdf_mass(robot), rel=1e-3)
    kinds = [p.GetTypeName() for p in stage.Traverse() if p.IsA(UsdPhysics.Joint)]
    assert kinds.count("PhysicsRevoluteJoint") == 12 and kinds.count("PhysicsFixedJoint") == 4  # the feet
    for leg in robot.legs:
        sphere = stage.GetPrimAtPath(f"{root.GetPath()}/{FEET[name].format(leg=leg)}/sphere")
        assert sphere.IsA(UsdGeom.Sphere) and sphere.HasAPI(UsdPhysics.CollisionAPI)
        assert UsdGeom.Sphere(sphere).GetRadiusAttr().Get() == pytest.approx(FOOT_RADIUS[name])
    # the re-anchored joint frames put the foot spheres where the URDF model (feet merged) has them
    model, layout = build_robot_model(robot)
    body_q, shape_tf = model.body_q.numpy(), model.shape_transform.numpy()
    urdf = np.stack(
        [
            np.array(wp.transform_multiply(wp.transform(*body_q[b]), wp.transform(*shape_tf[s])).p)
            for b, s in zip(layout.foot_bodies[0], layout.foot_shapes[0], strict=True)
        ]
    )
    usd = _usd_foot_sphere_centres(path, robot)
    np.testing.assert_allclose(usd - usd.mean(0), urdf - urdf.mean(0), atol=1e-4)
    stamp = path.stat().st_mtime_ns
    assert robot_usd_path(robot, cache_dir=tmp_path) == path and path.stat().st_mtime_ns == stamp  # reused


def test_conversions_are_one_pipeline():
    """ANYmal C's USD is the generic conversion of its robot config (same cache, same fingerprint), and a robot's
    foot sphere is part of its fingerprint (changing it rebuilds)."""
    assert robot_usd_conversion(ANYMAL_C_ROBOT_CFG) == anymal_c_conversion()
    assert "foot_sphere" not in anymal_c_conversion().fingerprint()
    go2 = robot_cfg("go2")
    before = robot_usd_conversion(go2).fingerprint()
    go2.foot_sphere.radius = 0.03
    assert robot_usd_conversion(go2).fingerprint() != before


def test_registered_with_isaaclab_ppo_and_play():
    from isaaclab_tasks.contrib.velocity.config.anymal_b.agents.rsl_rl_ppo_cfg import AnymalBFlatPPORunnerCfg
    from isaaclab_tasks.core.velocity.config.go2.agents.rsl_rl_ppo_cfg import UnitreeGo2FlatPPORunnerCfg

    parents = {"anymal_b": AnymalBFlatPPORunnerCfg, "go2": UnitreeGo2FlatPPORunnerCfg}
    for name, task in TASKS.items():
        for task_id in (task, f"{task}-Play"):
            assert gym.spec(task_id).entry_point == "isaaclab.envs:ManagerBasedRLEnv"
            agent = load_cfg_from_registry(task_id, "rsl_rl_cfg_entry_point")
            assert isinstance(agent, parents[name]) and agent.device == "cpu"
            assert agent.actor.hidden_dims == parents[name]().actor.hidden_dims == [128, 128, 128]
        play = load_cfg_from_registry(f"{task}-Play", "env_cfg_entry_point")
        assert play.scene.num_envs == 16 and play.events.push_robot is None
        assert not play.observations.policy.enable_corruption
        env_cfg = load_cfg_from_registry(task, "env_cfg_entry_point")
        assert env_cfg.scene.sky_light is None and env_cfg.scene.terrain.terrain_type == "usd"
        assert env_cfg.terminations.base_too_low.params["minimum_height"] == ROBOTS[name].min_base_height
    go2 = load_cfg_from_registry(TASKS["go2"], "env_cfg_entry_point").scene.robot.actuators["base_legs"]
    assert go2.stiffness == 25.0 and go2.damping == 0.5  # Isaac Lab's UNITREE_GO2_CFG (the direct task: 40, 1)


@pytest.mark.parametrize("physics", ["diffsim_smoothed", "diffsim_hard"])
@pytest.mark.parametrize("name", sorted(TASKS))
def test_isaaclab_env_smoke_test(name, physics):
    """Isaac Lab's own smoke test of a registered task (random actions, every signal finite)."""
    assert os.path.isfile(os.path.join(ISAACLAB_TASK_TESTS, "env_test_utils.py")), ISAACLAB_TASK_TESTS
    sys.path.insert(0, ISAACLAB_TASK_TESTS)
    try:
        from env_test_utils import _run_environments
    finally:
        sys.path.remove(ISAACLAB_TASK_TESTS)
    _run_environments(TASKS[name], "cpu", 2, physics_preset_name=physics)


def _standing_env(name: str, physics: str, num_envs: int = 2) -> ManagerBasedRLEnv:
    cfg = load_cfg_from_registry(TASKS[name], "env_cfg_entry_point")
    cfg.scene.num_envs = num_envs
    cfg.sim.device = "cpu"
    cfg = resolve_presets(cfg, (physics,))
    deterministic_start(cfg)
    return ManagerBasedRLEnv(cfg)


@pytest.mark.parametrize("physics", ["diffsim_smoothed", "diffsim_hard"])
@pytest.mark.parametrize("name", sorted(TASKS))
def test_robot_stands_on_its_feet(name, physics):
    """Zero actions for 3 s: nobody falls, only the feet touch the ground, and over the last second their normal
    forces (Isaac Lab's ContactSensor) carry the weight within 2 %. (Go2 on Isaac Lab's kp 25, kd 0.5 rocks slowly
    by about 1 cm, hence the average.)"""
    env = _standing_env(name, physics)
    try:
        robot, sensor = env.scene["robot"], env.scene["contact_forces"]
        feet = [i for i, body in enumerate(sensor.body_names) if body.lower().endswith("foot")]
        assert len(feet) == 4
        env.reset()
        done = torch.zeros(env.num_envs, dtype=torch.bool)
        load = []
        for step in range(150):
            _, _, term, trunc, _ = env.step(torch.zeros(env.num_envs, env.action_manager.total_action_dim))
            done |= term | trunc
            if step >= 100:
                fz = sensor.data.net_forces_w.torch[..., 2]
                torch.testing.assert_close(fz[:, feet].sum(1), fz.sum(1))  # nothing else touches the ground
                load.append(fz[:, feet].sum(1))
        assert not done.any(), "no robot may fall or reset while standing"
        mass = robot.data.body_mass.torch.sum(1)
        torch.testing.assert_close(mass, torch.full_like(mass, _urdf_mass(ROBOTS[name])), rtol=1e-3, atol=0.0)
        weight = mass * GRAVITY
        torch.testing.assert_close(torch.stack(load).mean(0), weight, rtol=0.02, atol=0.0)
        height = robot.data.root_pos_w.torch[:, 2]
        assert ((height > ROBOTS[name].min_base_height) & (height < ROBOTS[name].init_base_height)).all(), height
    finally:
        env.close()
