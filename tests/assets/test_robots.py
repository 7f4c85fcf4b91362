"""Every robot of ``ROBOTS`` builds from its offline URDF: mass, counts, feet, pose, gains; clear config errors."""

import newton
import numpy as np
import pytest

from isaaclab_diffsim.assets.robot_builder import build_robot_model
from isaaclab_diffsim.assets.robot_cfg import FootSphereCfg
from isaaclab_diffsim.assets.robots import ROBOTS, robot_cfg

COLLIDE = int(newton.ShapeFlags.COLLIDE_SHAPES)
MASS = {"anymal_c": 52.13, "anymal_b": 30.48, "go2": 16.09, "warp_quadruped": 30.70}
"""Total mass [kg] of each robot's URDF inertials."""


@pytest.mark.parametrize("name", sorted(ROBOTS))
def test_robot_builds_with_only_its_feet_colliding(name):
    robot = ROBOTS[name]
    model, layout = build_robot_model(robot, 2)
    assert model.body_mass.numpy()[: layout.bodies_per_world].sum() == pytest.approx(MASS[name], abs=0.01)
    assert layout.num_joints == robot.num_joints == 12 and layout.dofs_per_world == 18
    assert layout.foot_names == tuple(robot.legs)
    assert [layout.joint_legs().count(k) for k in range(4)] == [3, 3, 3, 3]
    flags, types = model.shape_flags.numpy(), model.shape_type.numpy()
    colliding = set(np.nonzero(flags & COLLIDE)[0].tolist())
    assert colliding == set(layout.foot_shapes.reshape(-1).tolist()) | {model.shape_count - 1}
    assert np.all(types[layout.foot_shapes] == int(newton.GeoType.SPHERE))
    assert np.array_equal(model.shape_body.numpy()[layout.foot_shapes], layout.foot_bodies)
    q = model.joint_q.numpy()[: layout.coords_per_world]
    assert np.allclose(q[7:], [robot.default_joint_pos[n] for n in layout.joint_names])
    assert q[2] == pytest.approx(robot.init_base_height)
    assert np.allclose(model.joint_target_ke.numpy()[6:18], robot.kp)
    # the feet hang below the base, above the ground, at the default pose
    feet_z = model.body_q.numpy()[layout.foot_bodies[0], 2]
    assert np.all(feet_z < robot.init_base_height - 0.1) and np.all(feet_z > 0.0)


def test_unknown_robot_names_the_known_ones():
    with pytest.raises(ValueError, match="unknown robot 'spot'.*anymal_c"):
        robot_cfg("spot")


def test_missing_asset_names_the_package():
    robot = robot_cfg("go2")
    robot.urdf_file = "no/such/go2.urdf"
    with pytest.raises(FileNotFoundError, match="robot 'go2'.*example-robot-data"):
        build_robot_model(robot)


def test_feet_not_found_names_the_bodies():
    robot = robot_cfg("go2")
    robot.foot_sphere = FootSphereCfg(link="{leg}_toe", radius=0.02)
    with pytest.raises(ValueError, match="no body 'FL_toe'"):
        build_robot_model(robot)
    robot = robot_cfg("anymal_b")
    robot.foot_body = "{leg}_THIGH"
    with pytest.raises(ValueError, match="'LF_THIGH' has no sphere shape"):
        build_robot_model(robot)


def test_default_pose_must_name_the_joints():
    robot = robot_cfg("warp_quadruped")
    robot.default_joint_pos = {**robot.default_joint_pos, "LF_TOE": 0.0}
    with pytest.raises(ValueError, match="default_joint_pos names"):
        build_robot_model(robot)
