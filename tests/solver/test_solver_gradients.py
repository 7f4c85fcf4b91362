"""Tape gradients of SolverMoreauGS against central finite differences (float32, stated tolerances)."""

import newton
import numpy as np
import pytest
import warp as wp
from helpers.finite_difference import Rollout, assert_close, central_difference

from isaaclab_diffsim.solver import SolverMoreauGS, scenes


def test_free_flight_gradients(device):
    model = scenes.sphere_model(height=1.0, ground=False, device=device, requires_grad=True)
    solver = SolverMoreauGS(model)
    q0 = model.joint_q.numpy()
    qd0 = np.array([1.0, 0.0, 2.0, 0.3, 0.2, 0.1])
    r = Rollout(model, solver, 20, 0.01, [1, 1, 1, 0.3, 0.2, 0.1, 0], [0, 0, 1, 0, 0, 1])
    states, tape = r.gradients(q0, qd0)
    gq, gqd = states[0].joint_q.grad.numpy(), states[0].joint_qd.grad.numpy()
    for idx in (2, 3):
        assert_close(gq[idx], central_difference(lambda x: r.loss(x, qd0), q0, idx, 1e-2), 2e-3, 1e-4)
    for idx in (0, 2, 3):
        assert_close(gqd[idx], central_difference(lambda x: r.loss(q0, x), qd0, idx, 1e-2), 2e-3, 1e-4)


def test_pendulum_gradients(device):
    model = scenes.pendulum_model(device=device, requires_grad=True)
    solver = SolverMoreauGS(model)
    r = Rollout(model, solver, 50, 0.01, [1.0], [0.3])
    states, tape = r.gradients([1.0], [0.0])
    fd_q = central_difference(lambda x: r.loss(x, [0.0]), [1.0], 0, 1e-2)
    fd_qd = central_difference(lambda x: r.loss([1.0], x), [0.0], 0, 1e-2)
    assert_close(states[0].joint_q.grad.numpy()[0], fd_q, 5e-3, 1e-4)
    assert_close(states[0].joint_qd.grad.numpy()[0], fd_qd, 5e-3, 1e-4)


def test_smoothed_contact_gradients(device):
    """Sphere landing with smoothed contact, kappa 200 / m: gradients w.r.t. initial state and kappa."""
    model = scenes.sphere_model(height=0.12, device=device, requires_grad=True)
    solver = SolverMoreauGS(model, contact_model="smoothed", kappa=200.0, margin=0.05)
    q0 = model.joint_q.numpy()
    qd0 = np.array([0.5, 0.0, -0.5, 0.0, 0.0, 0.0])
    r = Rollout(model, solver, 30, 0.005, [1, 0, 1, 0, 0, 0, 0], [1, 0, 1, 0, 0, 0])
    states, tape = r.gradients(q0, qd0)
    gq, gqd = states[0].joint_q.grad.numpy(), states[0].joint_qd.grad.numpy()
    g_kappa = solver.kappa_array.grad.numpy()[0]
    assert_close(gq[2], central_difference(lambda x: r.loss(x, qd0), q0, 2, 2e-3), 0.02, 1e-3)
    assert_close(gqd[2], central_difference(lambda x: r.loss(q0, x), qd0, 2, 1e-2), 0.02, 1e-3)
    assert_close(gqd[0], central_difference(lambda x: r.loss(q0, x), qd0, 0, 1e-2), 0.02, 1e-3)

    def loss_kappa(k):
        solver.kappa = float(k[0])
        return r.loss(q0, qd0)

    fd_kappa = central_difference(loss_kappa, [200.0], 0, 5.0)
    solver.kappa = 200.0
    assert_close(g_kappa, fd_kappa, 0.05, 1e-6)
    assert abs(g_kappa) > 1e-7, "kappa gradient should be informative here"


@pytest.mark.parametrize("adjoint", ["implicit", "unrolled"])
def test_soft_contact_gradients(device, adjoint):
    """Sphere pressed into soft (penalty) contact, bouncing on the spring and sliding to a stop: gradients w.r.t.
    the initial state through the compliant Gauss-Seidel solve, with either adjoint. The contact stays active
    (a touchdown switches the damping force on discontinuously, which a finite difference across it would see)."""
    model = scenes.sphere_model(height=0.098, device=device, requires_grad=True)
    solver = SolverMoreauGS(model, contact_model="soft", adjoint=adjoint)
    q0 = model.joint_q.numpy()
    qd0 = np.array([1.0, 0.0, -0.05, 0.0, 0.0, 0.0])
    r = Rollout(model, solver, 30, 0.005, [1, 0, 1, 0, 0, 0, 0], [1, 0, 1, 0, 0, 0])
    states, tape = r.gradients(q0, qd0)
    gq, gqd = states[0].joint_q.grad.numpy(), states[0].joint_qd.grad.numpy()
    assert_close(gq[2], central_difference(lambda x: r.loss(x, qd0), q0, 2, 1e-3), 0.02, 1e-3)
    assert_close(gqd[2], central_difference(lambda x: r.loss(q0, x), qd0, 2, 1e-2), 0.02, 1e-3)
    assert_close(gqd[0], central_difference(lambda x: r.loss(q0, x), qd0, 0, 1e-2), 0.02, 1e-3)


def test_control_gradients(device):
    """Gradients w.r.t. control.joint_f and the joint position target of a driven pendulum."""
    builder = newton.ModelBuilder()
    link = builder.add_link(mass=1.0, com=wp.vec3(0.0, 0.0, -0.5), inertia=wp.mat33(np.eye(3) * 0.01))
    joint = builder.add_joint_revolute(-1, link, axis=(0.0, 1.0, 0.0), target_ke=50.0, target_kd=2.0)
    builder.add_articulation([joint])
    model = builder.finalize(device=device, requires_grad=True)
    solver = SolverMoreauGS(model)

    def run(force, target, tape=None):
        control = model.control()
        control.joint_f.assign(np.array([force], dtype=np.float32))
        control.joint_target_q.assign(np.array([target], dtype=np.float32))
        r = Rollout(model, solver, 30, 0.01, [1.0], [0.2], control=control)
        if tape:
            states, t = r.gradients([0.2], [0.0])
            return control, t
        return r.loss([0.2], [0.0])

    control, tape = run(1.0, 0.3, tape=True)
    g_f = control.joint_f.grad.numpy()[0]
    g_t = control.joint_target_q.grad.numpy()[0]
    fd_f = central_difference(lambda x: run(x[0], 0.3), [1.0], 0, 1e-2)
    fd_t = central_difference(lambda x: run(1.0, x[0]), [0.3], 0, 1e-2)
    assert_close(g_f, fd_f, 5e-3, 1e-4)
    assert_close(g_t, fd_t, 5e-3, 1e-4)


def test_hard_contact_gradient_is_finite(device):
    """Hard contact: gradients exist (finite) but are not smooth; only finiteness is asserted."""
    model = scenes.sphere_model(height=0.1, device=device, requires_grad=True)
    solver = SolverMoreauGS(model, contact_model="hard")
    r = Rollout(model, solver, 20, 0.005, [0, 0, 1, 0, 0, 0, 0], [0, 0, 1, 0, 0, 0])
    states, _ = r.gradients(model.joint_q.numpy(), np.zeros(6))
    assert np.all(np.isfinite(states[0].joint_q.grad.numpy()))
