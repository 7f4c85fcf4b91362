"""The solver's hand-written adjoints (articulation_dynamics, contact_jacobians, forward kinematics,
integrate_positions) on the tape, against Warp's generated adjoints of the same kernels, over a few contact steps; and
which adjoint the solver picks for a model."""

import math

import newton
import numpy as np
import pytest
import warp as wp

from isaaclab_diffsim.assets.anymal_c import build_anymal_c_model
from isaaclab_diffsim.solver import SolverMoreauGS
from isaaclab_diffsim.solver import terrain_scenes as ts

DT = 0.005


def anymal(parameter_grads=False):
    """3 ANYmal C worlds with their feet on the plane."""
    return build_anymal_c_model(num_worlds=3, device="cpu", base_height=0.57, requires_grad=parameter_grads)[0]


def sphere_on_ridge():
    """A sphere resting on a 5 deg ridge (terrain: its contact frames carry gradients)."""
    angle, r = math.radians(-5.0), 0.1
    n0 = np.array([math.sin(angle), 0.0, math.cos(angle)])
    start = np.array([-0.05, 0.0, 0.05 * math.tan(angle)]) + (r - 0.002) * n0
    return ts.sphere_on_terrain_model(ts.crease_mesh(angle), tuple(start), r, mu=0.3)


def taped_rollout(model, hand: bool, threads: int = 1, steps: int = 4):
    """``steps`` taped steps from random velocities and targets with joint and body forces; the solver and the
    gradients of a random linear loss on the final state w.r.t. the initial state, the targets, the forces and
    kappa. ``hand``: the hand-written adjoints where they apply, else Warp's generated ones."""
    solver = SolverMoreauGS(model, kappa=300.0, margin=0.02, threads=threads)
    solver.hand_dynamics_adjoint &= hand
    solver.hand_jacobian_adjoint &= hand
    solver.hand_kinematics_adjoint &= hand
    solver.hand_position_adjoint &= hand
    states = [model.state(requires_grad=True) for _ in range(steps + 1)]
    rng = np.random.default_rng(5)
    nq, nd = model.joint_coord_count, model.joint_dof_count
    states[0].joint_qd.assign(rng.normal(scale=0.5, size=nd).astype(np.float32))
    control = model.control()
    target = control.joint_target_q.numpy() + rng.normal(scale=0.3, size=nq)
    control.joint_target_q = wp.array(target.astype(np.float32), dtype=float, requires_grad=True)
    control.joint_f = wp.array(rng.normal(size=nd).astype(np.float32), requires_grad=True)
    for s in states:
        wrench = rng.normal(scale=2.0, size=(model.body_count, 6)).astype(np.float32)
        s.body_f = wp.array(wrench, dtype=wp.spatial_vector, requires_grad=True)
    tape = wp.Tape()
    with tape:
        for i in range(steps):
            solver.step(states[i], states[i + 1], control, None, DT)
    last = states[-1]
    last.joint_q.grad.assign(rng.normal(size=nq).astype(np.float32))
    last.joint_qd.grad.assign(rng.normal(size=nd).astype(np.float32))
    tape.backward()
    arrays = (states[0].joint_q, states[0].joint_qd, control.joint_target_q, control.joint_f, states[1].body_f)
    return solver, [a.grad.numpy().copy() for a in arrays] + [solver.kappa_array.grad.numpy().copy()]


NAMES = ("q0", "qd0", "target_q", "joint_f", "body_f", "kappa")


def test_solver_picks_the_hand_adjoints_where_they_are_whole():
    assert SolverMoreauGS(anymal()).hand_dynamics_adjoint
    assert SolverMoreauGS(anymal()).hand_jacobian_adjoint
    assert SolverMoreauGS(anymal()).hand_position_adjoint
    assert not SolverMoreauGS(anymal(parameter_grads=True)).hand_dynamics_adjoint  # masses etc. want gradients
    assert not SolverMoreauGS(anymal(parameter_grads=True)).hand_position_adjoint  # body_com wants gradients
    builder = newton.ModelBuilder()
    link = builder.add_link(mass=1.0, inertia=wp.mat33(np.eye(3) * 0.1))
    builder.add_articulation([builder.add_joint_ball(-1, link)])
    assert not SolverMoreauGS(builder.finalize(device="cpu")).hand_dynamics_adjoint
    builder = newton.ModelBuilder()
    body = builder.add_body(xform=wp.transform((0.0, 0.0, 0.3), wp.quat_identity()))
    builder.add_shape_ellipsoid(body, rx=0.2, ry=0.1, rz=0.05)
    builder.add_ground_plane()
    assert not SolverMoreauGS(builder.finalize(device="cpu")).hand_jacobian_adjoint


@pytest.mark.parametrize("scene", ["anymal", "sphere_on_ridge"])
def test_tape_gradients_are_warps(scene):
    """The hand adjoints give Warp's adjoints' gradients; on two threads, bit for bit those of one."""
    make = anymal if scene == "anymal" else sphere_on_ridge
    _, ref = taped_rollout(make(), hand=False)
    solver, ours = taped_rollout(make(), hand=True)
    assert solver.hand_dynamics_adjoint and solver.hand_jacobian_adjoint and solver.hand_position_adjoint
    for name, a, b in zip(NAMES, ours, ref):
        if name in ("target_q", "joint_f") and scene != "anymal":
            continue  # a free sphere has no drives
        assert np.abs(b).max() > 0, name
        np.testing.assert_allclose(a, b, rtol=2e-3, atol=2e-4 * np.abs(b).max(), err_msg=name)
    if scene == "anymal":
        _, two = taped_rollout(make(), hand=True, threads=2)
        for name, a, c in zip(NAMES, ours, two):
            if name == "kappa":  # summed per range first
                np.testing.assert_allclose(c, a, rtol=1e-5)
            else:
                np.testing.assert_array_equal(c, a, err_msg=name)
