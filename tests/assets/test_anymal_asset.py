"""ANYmal C asset: URDF lookup, mass, counts, foot-only collision, default pose, multi-world layout."""

from pathlib import Path

import newton
import numpy as np
import pytest

try:
    from isaaclab_diffsim.assets import anymal_c as A
    from isaaclab_diffsim.assets import anymal_c_urdf
except ImportError:  # package not installed in the venv: use the source tree
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "source" / "isaaclab_diffsim"))
    from isaaclab_diffsim.assets import anymal_c as A
    from isaaclab_diffsim.assets import anymal_c_urdf

COLLIDE = int(newton.ShapeFlags.COLLIDE_SHAPES)


@pytest.fixture(scope="module")
def one():
    return A.build_anymal_c_model(1, "cpu")


@pytest.fixture(scope="module")
def three():
    return A.build_anymal_c_model(3, "cpu", kp=150.0, kd=4.0)


def test_urdf_path():
    path = A.anymal_c_urdf_path()
    assert path.is_file() and path.name == "anymal.urdf"


def test_urdf_missing_message(monkeypatch):
    monkeypatch.setattr(anymal_c_urdf, "_URDF_REL", Path("no/such/anymal.urdf"))
    with pytest.raises(FileNotFoundError, match="example-robot-data"):
        A.anymal_c_urdf_path()


def test_mass_and_counts(one):
    model, layout = one
    assert model.body_count == layout.bodies_per_world == 13
    assert model.joint_dof_count == 18 and model.joint_coord_count == 19
    assert model.body_mass.numpy().sum() == pytest.approx(52.13, abs=0.05)
    assert list(layout.joint_names) == [f"{leg}_{j}" for leg in A.LEGS for j in ("HAA", "HFE", "KFE")]


def test_only_feet_collide(one):
    model, layout = one
    flags, types = model.shape_flags.numpy(), model.shape_type.numpy()
    colliding = set(np.nonzero(flags & COLLIDE)[0].tolist())
    assert colliding == set(layout.foot_shapes[0].tolist()) | {model.shape_count - 1}
    feet = layout.foot_shapes[0]
    assert np.all(types[feet] == int(newton.GeoType.SPHERE))
    assert np.allclose(model.shape_scale.numpy()[feet, 0], 0.03)
    assert np.allclose(model.shape_material_mu.numpy()[feet], 1.0)
    assert np.array_equal(model.shape_body.numpy()[feet], layout.foot_bodies[0])


def test_default_pose_and_gains(one):
    model, layout = one
    q, tq = model.joint_q.numpy(), model.joint_target_q.numpy()
    want = np.array([A.ANYMAL_C_DEFAULT_JOINT_POS[n] for n in layout.joint_names])
    assert np.allclose(q[7:], want) and np.allclose(tq[7:], want)
    assert np.allclose(q[:7], [0, 0, A.ANYMAL_C_BASE_HEIGHT, 0, 0, 0, 1])
    assert np.allclose(model.joint_target_ke.numpy()[6:], 40.0)
    assert np.allclose(model.joint_target_kd.numpy()[6:], 5.0)
    assert np.allclose(model.joint_velocity_limit.numpy()[6:], 7.5)
    assert (
        layout.default_joint_pos == tuple(want) and layout.stiffness == (40.0,) * 12 and layout.damping == (5.0,) * 12
    )
    assert layout.velocity_limit == (7.5,) * 12 and layout.effort_limit == (80.0,) * 12
    # body_q follows the pose (FK), and the feet hang below the base, above the ground
    body_q = model.body_q.numpy()
    assert np.allclose(body_q[0, :3], [0, 0, A.ANYMAL_C_BASE_HEIGHT], atol=1e-6)
    assert np.all(body_q[layout.foot_bodies[0], 2] < A.ANYMAL_C_BASE_HEIGHT - 0.1)


def test_replication(one, three):
    model1, _ = one
    model, layout = three
    assert model.world_count == 3
    assert model.body_count == 3 * model1.body_count
    assert model.joint_dof_count == 3 * model1.joint_dof_count
    assert model.joint_coord_count == 3 * model1.joint_coord_count
    body_world = model.body_world.numpy()
    shape_world = model.shape_world.numpy()
    for w in range(3):
        assert np.all(body_world[layout.foot_bodies[w]] == w) and body_world[layout.base_body[w]] == w
        assert np.all(shape_world[layout.foot_shapes[w]] == w)
        assert model.joint_q.numpy()[layout.q_start[w] + 2] == pytest.approx(A.ANYMAL_C_BASE_HEIGHT)
    assert shape_world[model.shape_count - 1] == -1
    assert int((model.shape_flags.numpy() & COLLIDE > 0).sum()) == 3 * 4 + 1
    assert np.allclose(model.joint_target_ke.numpy().reshape(3, -1)[:, 6:], 150.0)
