"""Every Newton model field SolverMoreauGS does not honour refuses the model, naming the field, at construction and
on notify_model_changed; a model at Newton's defaults (and the ANYmal C model) is accepted."""

import newton
import numpy as np
import pytest
import warp as wp

from isaaclab_diffsim.solver import SolverMoreauGS
from isaaclab_diffsim.solver.model_checks import UNHONOURED


def scene():
    """Sphere on a free joint and a hinged link with a ball-jointed child, over a ground plane."""
    builder = newton.ModelBuilder()
    body = builder.add_body(xform=wp.transform((0.0, 0.0, 0.5), wp.quat_identity()))
    builder.add_shape_sphere(body, radius=0.1)
    link = builder.add_link(mass=1.0, com=wp.vec3(0.0, 0.0, -0.3), inertia=wp.mat33(np.eye(3) * 0.01))
    hinge = builder.add_joint_revolute(-1, link, axis=(0.0, 1.0, 0.0), target_ke=10.0, target_kd=1.0)
    tip = builder.add_link(mass=0.5, com=wp.vec3(0.0, 0.0, -0.2), inertia=wp.mat33(np.eye(3) * 0.01))
    ball = builder.add_joint_ball(link, tip, parent_xform=wp.transform((0.0, 0.0, -0.6), wp.quat_identity()))
    builder.add_articulation([hinge, ball])
    builder.add_ground_plane()
    return builder.finalize(device="cpu")


def _set(model, name, index, value):
    arr = getattr(model, name)
    values = arr.numpy()
    values[index] = value
    arr.assign(values)


def _dofs(model, joint_type):
    jt, qd_start = model.joint_type.numpy(), model.joint_qd_start.numpy()
    j = int(np.nonzero(jt == int(joint_type))[0][0])
    return slice(qd_start[j], qd_start[j + 1])


def _add_flag(name, flag, index=0):
    def mutate(model):
        arr = getattr(model, name)
        values = arr.numpy()
        values[index] |= int(flag)
        arr.assign(values)

    return mutate


def _loop_joint(model):
    model.articulation_end = wp.array(model.articulation_start.numpy()[1:] - 1, dtype=int, device="cpu")


# one way to set each unhonoured field (keys must cover model_checks.UNHONOURED)
MUTATIONS = {
    "shape_material_restitution": lambda m: _set(m, "shape_material_restitution", 0, 0.5),
    "shape_material_mu_torsional": lambda m: _set(m, "shape_material_mu_torsional", 0, 0.1),
    "shape_material_mu_rolling": lambda m: _set(m, "shape_material_mu_rolling", 0, 0.01),
    "shape_flags (HYDROELASTIC)": _add_flag("shape_flags", newton.ShapeFlags.HYDROELASTIC),
    "mujoco.equality_constraint_count": lambda m: setattr(m.mujoco, "equality_constraint_count", 1),
    "constraint_mimic_count": lambda m: setattr(m, "constraint_mimic_count", 1),
    "articulation_end (loop joints)": _loop_joint,
    "joint_enabled": lambda m: _set(m, "joint_enabled", 1, False),
    "joint_twist_lower / joint_twist_upper": lambda m: setattr(
        m, "joint_twist_lower", wp.array([-1.0e10, -0.5, -1.0e10], dtype=float, device="cpu")
    ),
    "joint_target_ke / joint_target_kd / joint_limit_* on BALL joints": lambda m: _set(
        m, "joint_target_kd", _dofs(m, newton.JointType.BALL), 2.0
    ),
    "joint_target_mode (FREE joints)": lambda m: _set(
        m, "joint_target_mode", _dofs(m, newton.JointType.FREE), int(newton.JointTargetMode.POSITION)
    ),
    "joint_target_ke / joint_target_kd with joint_target_mode NONE": lambda m: _set(
        m, "joint_target_mode", _dofs(m, newton.JointType.REVOLUTE), int(newton.JointTargetMode.NONE)
    ),
    "body_flags (KINEMATIC)": _add_flag("body_flags", newton.BodyFlags.KINEMATIC),
    "particle_count": lambda m: setattr(m, "particle_count", 3),
    "spring_count": lambda m: setattr(m, "spring_count", 1),
    "tri_count": lambda m: setattr(m, "tri_count", 1),
    "tet_count": lambda m: setattr(m, "tet_count", 1),
    "muscle_count": lambda m: setattr(m, "muscle_count", 1),
}


def test_every_unhonoured_field_has_a_case():
    assert set(MUTATIONS) == {u.field for u in UNHONOURED}


def test_defaults_and_anymal_are_accepted():
    SolverMoreauGS(scene())
    from isaaclab_diffsim.assets.anymal_c import build_anymal_c_model

    SolverMoreauGS(build_anymal_c_model(2, device="cpu")[0])


def test_the_values_the_solver_simulates_are_accepted():
    """Zero torsional and rolling friction is what the solver does (point contacts): a Coulomb test scene sets it."""
    model = scene()
    for name in ("shape_material_mu_torsional", "shape_material_mu_rolling"):
        getattr(model, name).zero_()
    SolverMoreauGS(model)


@pytest.mark.parametrize("field", list(MUTATIONS))
def test_unhonoured_field_is_refused(field):
    model = scene()
    MUTATIONS[field](model)
    with pytest.raises(ValueError, match="SolverMoreauGS does not honour") as err:
        SolverMoreauGS(model)
    assert field in str(err.value)


def test_model_change_is_rechecked():
    """A field set after construction (as an Isaac Lab event would) is refused when the change is notified."""
    model = scene()
    solver = SolverMoreauGS(model)
    _set(model, "shape_material_restitution", 0, 0.3)
    with pytest.raises(ValueError, match="shape_material_restitution"):
        solver.notify_model_changed(newton.ModelFlags.SHAPE_PROPERTIES)
