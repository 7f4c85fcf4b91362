"""The hand-written adjoint of forward kinematics (solver/kinematics_adjoint.py) against Warp's adjoint of
``newton.eval_fk`` and central finite differences, alone and through the solver's taped steps."""

import newton
import numpy as np
import pytest
import warp as wp

from isaaclab_diffsim.assets.anymal_c import build_anymal_c_model
from isaaclab_diffsim.solver import SolverMoreauGS
from isaaclab_diffsim.solver.kinematics_adjoint import KinematicsAdjoint

DT = 0.005


@pytest.fixture(scope="module")
def anymal():
    """2 ANYmal C worlds (free base, 12 revolute joints, fixed feet) and their solver."""
    model = build_anymal_c_model(num_worlds=2, device="cpu", base_height=0.57)[0]
    return model, SolverMoreauGS(model)


def random_coordinates(model, rng):
    """Joint coordinates off the default pose (unit base quaternions) and random joint velocities."""
    q = model.joint_q.numpy().astype(np.float64) + rng.normal(scale=0.3, size=model.joint_coord_count)
    for row in base_quaternions(model):
        q[row] /= np.linalg.norm(q[row])
    return q, rng.normal(scale=1.0, size=model.joint_dof_count)


def base_quaternions(model):
    """Coordinate indices (one row of 4 per world) of the free joints' quaternions."""
    free = np.flatnonzero(model.joint_type.numpy() == int(newton.JointType.FREE))
    return model.joint_q_start.numpy()[free][:, None] + np.arange(3, 7)


def tangent(g, q, rows):
    """g with the radial part of each quaternion's adjoint removed."""
    g = g.copy()
    for idx in rows:
        g[idx] -= np.dot(g[idx], q[idx]) * q[idx]
    return g


def fk_state(model, q, qd):
    state = model.state(requires_grad=True)
    state.joint_q.assign(q.astype(np.float32))
    state.joint_qd.assign(qd.astype(np.float32))
    newton.eval_fk(model, state.joint_q, state.joint_qd, state)
    return state


def fk_gradients(model, solver, q, qd, seed_q, seed_qd, hand):
    """d(<seed_q, body_q> + <seed_qd, body_qd>) / d(joint_q, joint_qd): the hand-written adjoint or Warp's."""
    state = model.state(requires_grad=True)
    state.joint_q.assign(q.astype(np.float32))
    state.joint_qd.assign(qd.astype(np.float32))
    tape = wp.Tape()
    with tape:
        newton.eval_fk(model, state.joint_q, state.joint_qd, state)
    state.body_q.grad.assign(seed_q.astype(np.float32))
    state.body_qd.grad.assign(seed_qd.astype(np.float32))
    if hand:
        adjoint = KinematicsAdjoint(
            solver.layout.topo, solver.layout.articulation_count, state, solver._fk_scratch, "cpu"
        )
        adjoint()
    else:
        tape.backward()
    return state.joint_q.grad.numpy().astype(np.float64), state.joint_qd.grad.numpy().astype(np.float64)


def test_hand_adjoint_is_warps(anymal):
    model, solver = anymal
    assert solver.hand_kinematics_adjoint
    rng = np.random.default_rng(0)
    q, qd = random_coordinates(model, rng)
    seed_q, seed_qd = rng.normal(size=(model.body_count, 7)), rng.normal(size=(model.body_count, 6))
    ours = fk_gradients(model, solver, q, qd, seed_q, seed_qd, hand=True)
    ref = fk_gradients(model, solver, q, qd, seed_q, seed_qd, hand=False)
    rows = base_quaternions(model)
    np.testing.assert_allclose(tangent(ours[0], q, rows), ours[0], atol=1e-5 * np.abs(ours[0]).max())
    for a, b, name in ((ours[0], tangent(ref[0], q, rows), "joint_q"), (ours[1], ref[1], "joint_qd")):
        assert np.abs(b).max() > 0, name
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5 * np.abs(b).max(), err_msg=name)


def test_hand_adjoint_matches_finite_differences(anymal):
    model, solver = anymal
    rng = np.random.default_rng(1)
    q, qd = random_coordinates(model, rng)
    seed_q, seed_qd = rng.normal(size=(model.body_count, 7)), rng.normal(size=(model.body_count, 6))
    gq, gqd = fk_gradients(model, solver, q, qd, seed_q, seed_qd, hand=True)

    def loss(q_, qd_):
        s = fk_state(model, q_, qd_)
        return float(np.sum(seed_q * s.body_q.numpy()) + np.sum(seed_qd * s.body_qd.numpy()))

    def check(dq, dqd, ours, eps=1e-3):
        fd = (loss(q + eps * dq, qd + eps * dqd) - loss(q - eps * dq, qd - eps * dqd)) / (2 * eps)
        assert abs(fd - ours) <= 1e-2 * abs(ours) + 1e-2, (fd, ours)

    zq, zqd = np.zeros_like(q), np.zeros_like(qd)
    leg = model.joint_q_start.numpy()[[2, 7, 12]]  # a revolute joint of several legs and worlds
    for idx in (*leg, 0, 1, 2):  # and the base position
        d = zq.copy()
        d[idx] = 1.0
        check(d, zqd, gq[idx])
    rows = base_quaternions(model)
    r = q[rows[1]]
    for axis in range(3):  # base rotations: tangent directions 0.5 (e, 0) r
        e = np.eye(3)[axis]
        d = zq.copy()
        d[rows[1]] = 0.5 * np.concatenate([r[3] * e + np.cross(e, r[:3]), [-np.dot(e, r[:3])]])
        check(d, zqd, float(np.dot(gq, d)))
    for idx in (0, 2, 4, 5, 9, 20):  # base linear and angular velocity, leg joints
        d = zqd.copy()
        d[idx] = 1.0
        check(zq, d, gqd[idx])


@pytest.mark.parametrize("threads", [1, 2])
def test_solver_steps_use_it_and_match_warps(threads):
    """Through three taped steps with forward kinematics on each, a loss on the final body poses and twists: the
    solver's gradients with the hand-written adjoint (recorded in place of Warp's) are Warp's."""
    model = build_anymal_c_model(num_worlds=3, device="cpu", base_height=0.57)[0]
    grads = {}
    for hand in (True, False):
        solver = SolverMoreauGS(model, kappa=300.0, threads=threads)
        solver.hand_kinematics_adjoint = hand
        states = [model.state(requires_grad=True) for _ in range(4)]
        rng = np.random.default_rng(3)
        states[0].joint_qd.assign(rng.normal(scale=0.5, size=model.joint_dof_count).astype(np.float32))
        tape = wp.Tape()
        with tape:
            for i in range(3):
                solver.step(states[i], states[i + 1], model.control(), None, DT)
        recorded = [f for f in tape.launches if isinstance(f, KinematicsAdjoint)]
        assert len(recorded) == (3 if hand else 0)
        states[-1].body_q.grad.assign(rng.normal(size=(model.body_count, 7)).astype(np.float32))
        states[-1].body_qd.grad.assign(rng.normal(size=(model.body_count, 6)).astype(np.float32))
        states[1].body_q.grad.assign(rng.normal(size=(model.body_count, 7)).astype(np.float32))
        tape.backward()
        grads[hand] = [s.grad.numpy().copy() for s in (states[0].joint_q, states[0].joint_qd)]
    for a, b in zip(grads[True], grads[False]):
        assert np.abs(b).max() > 0
        np.testing.assert_allclose(a, b, rtol=1e-3, atol=1e-4 * np.abs(b).max())
