"""Passive joint damping, regularised Coulomb joint friction, BALL and D6 joints: analytic answers and
finite-difference gradient checks."""

import math

import newton
import numpy as np
import pytest
import warp as wp
from helpers.finite_difference import Rollout, assert_close, central_difference

from isaaclab_diffsim.solver import SolverMoreauGS

G = 9.81


def hinge(device, damping=0.0, friction=0.0, gravity=0.0, length=0.0, inertia=0.5, requires_grad=False):
    """A link on a revolute joint about y at the origin; COM at (0, 0, -length), inertia ``inertia`` about the COM."""
    builder = newton.ModelBuilder(gravity=(0.0, 0.0, -gravity), up_axis=newton.Axis.Z)
    link = builder.add_link(mass=1.0, com=wp.vec3(0.0, 0.0, -length), inertia=wp.mat33(np.eye(3) * inertia))
    joint = builder.add_joint_revolute(-1, link, axis=(0.0, 1.0, 0.0), damping=damping, friction=friction)
    builder.add_articulation([joint])
    return builder.finalize(device=device, requires_grad=requires_grad)


def run(model, solver, steps, dt, q0=None, qd0=None, joint_f=None):
    s0, s1 = model.state(), model.state()
    if q0 is not None:
        s0.joint_q.assign(np.asarray(q0, dtype=np.float32))
    if qd0 is not None:
        s0.joint_qd.assign(np.asarray(qd0, dtype=np.float32))
    control = model.control()
    if joint_f is not None:
        control.joint_f.assign(np.asarray(joint_f, dtype=np.float32))
    qs, qds = [], []
    for _ in range(steps):
        solver.step(s0, s1, control, None, dt)
        s0, s1 = s1, s0
        qs.append(s0.joint_q.numpy().copy())
        qds.append(s0.joint_qd.numpy().copy())
    return np.array(qs), np.array(qds), s0


def test_damping_decay_is_implicit_and_exponential(device):
    """Free hinge with damping c: each step multiplies the speed by I / (I + dt c) (implicit), which tends to
    the analytic exp(-c t / I)."""
    inertia, c, dt, steps, w0 = 0.5, 2.0, 0.01, 50, 3.0
    model = hinge(device, damping=c, inertia=inertia)
    _, qd, _ = run(model, SolverMoreauGS(model), steps, dt, qd0=[w0])
    np.testing.assert_allclose(qd[-1, 0], w0 * (inertia / (inertia + dt * c)) ** steps, rtol=1e-5)
    np.testing.assert_allclose(qd[-1, 0], w0 * math.exp(-c * steps * dt / inertia), rtol=0.05)
    # stable far beyond the explicit limit dt < 2 I / c
    _, qd, _ = run(model, SolverMoreauGS(model), 5, 2.0, qd0=[w0])
    assert np.all(np.diff(np.abs(qd[:, 0])) < 0) and np.all(qd[:, 0] > 0)


def test_damped_pendulum_matches_analytic(device):
    """Small-amplitude damped pendulum (damping ratio 0.1): theta0 e^(-zeta wn t) (cos wd t + zeta wn / wd sin wd t)."""
    length, theta0, zeta, dt = 0.5, 0.05, 0.1, 1e-3
    inertia_c = 1e-4
    inertia = length**2 + inertia_c
    wn = math.sqrt(G * length / inertia)
    c = 2.0 * zeta * wn * inertia
    model = hinge(device, damping=c, gravity=G, length=length, inertia=inertia_c)
    q, _, _ = run(model, SolverMoreauGS(model), 2000, dt, q0=[theta0])
    t = dt * np.arange(1, 2001)
    wd = wn * math.sqrt(1.0 - zeta**2)
    expected = theta0 * np.exp(-zeta * wn * t) * (np.cos(wd * t) + zeta * wn / wd * np.sin(wd * t))
    np.testing.assert_allclose(q[:, 0], expected, atol=0.02 * theta0)


def test_friction_holds_below_limit(device):
    """A load below the friction torque holds the joint: it creeps at exactly v_s atanh(load / friction)."""
    friction, load, vs = 2.0, 1.0, 1e-3
    model = hinge(device, friction=friction)
    q, qd, _ = run(model, SolverMoreauGS(model, friction_velocity=vs), 100, 0.01, joint_f=[load])
    creep = vs * math.atanh(load / friction)
    np.testing.assert_allclose(qd[-1, 0], creep, rtol=1e-3)
    assert abs(q[-1, 0]) <= 1.0 * creep * 1.01  # 1 s at (at most) the creep rate


def test_friction_slips_above_limit(device):
    """A load above the friction torque accelerates the joint at (load - friction) / I once it has broken away
    (the lagged friction coefficient holds it for a few steps: about log(dt F / (I v_s)) / log(load / F))."""
    friction, load, inertia, dt, vs = 2.0, 3.0, 0.5, 0.01, 1e-3
    model = hinge(device, friction=friction, inertia=inertia)
    _, qd, _ = run(model, SolverMoreauGS(model, friction_velocity=vs), 100, dt, joint_f=[load])
    accel = (load - friction) / inertia
    np.testing.assert_allclose(qd[99, 0] - qd[49, 0], accel * 0.5, rtol=0.05)
    delay = math.log(dt * friction / (inertia * vs)) / math.log(load / friction)  # steps, about 9
    assert qd[29, 0] > accel * dt * (30 - 2 * delay)


def test_friction_stops_a_spinning_joint(device):
    """Coulomb deceleration F / I until the joint stops at t = w0 I / F; then it stays stopped (no chatter)."""
    friction, inertia, w0, dt = 1.0, 0.5, 2.0, 0.01
    model = hinge(device, friction=friction, inertia=inertia)
    _, qd, _ = run(model, SolverMoreauGS(model), 150, dt, qd0=[w0])
    # the lagged coefficient under-brakes by about dt F ln(w0 / w) in impulse (1.4 % here)
    np.testing.assert_allclose(qd[49, 0], w0 - friction / inertia * 0.5, rtol=2e-2)
    assert np.all(qd[:, 0] >= 0.0)
    assert np.all(np.abs(qd[110:, 0]) < 1e-4)


def test_damping_and_friction_gradients(device):
    """Tape gradients of a damped, rubbing pendulum against central differences: initial state and the
    model's joint_damping / joint_friction."""
    model = hinge(device, damping=0.3, friction=0.2, gravity=G, length=0.5, inertia=0.01, requires_grad=True)
    solver = SolverMoreauGS(model)
    q0, qd0 = np.array([0.3]), np.array([2.0])
    r = Rollout(model, solver, 20, 0.01, [1.0], [0.5])
    states, tape = r.gradients(q0, qd0)
    assert_close(
        states[0].joint_q.grad.numpy()[0], central_difference(lambda x: r.loss(x, qd0), q0, 0, 1e-3), 1e-2, 1e-4
    )
    assert_close(
        states[0].joint_qd.grad.numpy()[0], central_difference(lambda x: r.loss(q0, x), qd0, 0, 1e-3), 1e-2, 1e-4
    )
    for name in ("joint_damping", "joint_friction"):
        arr = getattr(model, name)
        tape_grad = arr.grad.numpy()[0]
        base = arr.numpy().copy()

        def loss_at(x, arr=arr, base=base):
            arr.assign(np.asarray(x, dtype=np.float32))
            value = r.loss(q0, qd0)
            arr.assign(base)
            return value

        assert_close(tape_grad, central_difference(loss_at, base, 0, 1e-2), 1e-2, 1e-4)
        assert abs(tape_grad) > 1e-3  # the parameter matters in this rollout


def _spherical_body(device, kind, com=(0.0, 0.0, -0.5), gravity=G, inertia=(0.02, 0.05, 0.04), requires_grad=False):
    """A body hanging from a BALL joint, or from a D6 joint with three angular axes (X, Y, Z), at the origin."""
    builder = newton.ModelBuilder(gravity=(0.0, 0.0, -gravity), up_axis=newton.Axis.Z)
    link = builder.add_link(mass=1.0, com=wp.vec3(*com), inertia=wp.mat33(np.diag(inertia)))
    if kind == "ball":
        joint = builder.add_joint_ball(-1, link)
    else:
        cfg = newton.ModelBuilder.JointDofConfig.create_unlimited
        joint = builder.add_joint_d6(
            -1, link, angular_axes=[cfg(axis=newton.Axis.X), cfg(axis=newton.Axis.Y), cfg(axis=newton.Axis.Z)]
        )
    builder.add_articulation([joint])
    return builder.finalize(device=device, requires_grad=requires_grad)


def _body_energy(model, state):
    bq, bqd = state.body_q.numpy()[0], state.body_qd.numpy()[0]
    R = np.array(wp.quat_to_matrix(wp.quat(*bq[3:7].tolist()))).reshape(3, 3)
    inertia = R @ model.body_inertia.numpy()[0] @ R.T
    com = bq[:3] + R @ model.body_com.numpy()[0]
    v, w = bqd[:3], bqd[3:]
    return 0.5 * v @ v + 0.5 * w @ inertia @ w + G * com[2]


@pytest.mark.parametrize("kind", ["ball", "d6"])
def test_spherical_pendulum_conserves_energy(device, kind):
    """A spherical pendulum (anisotropic body, swinging and spinning) keeps its energy to 0.1 % over 1 s."""
    model = _spherical_body(device, kind)
    solver = SolverMoreauGS(model)
    s0, s1 = model.state(), model.state()
    qd = np.array([1.5, -0.7, 2.0], dtype=np.float32)
    s0.joint_qd.assign(qd)
    newton.eval_fk(model, s0.joint_q, s0.joint_qd, s0)
    e0 = _body_energy(model, s0)
    for _ in range(1000):
        solver.step(s0, s1, None, None, 1e-3)
        s0, s1 = s1, s0
    assert abs(_body_energy(model, s0) - e0) < 1e-3 * abs(e0) + 1e-4
    assert np.linalg.norm(s0.body_q.numpy()[0][:3] + 0.0) < 1e-5  # the joint point stays at the origin


def test_ball_and_d6_agree(device):
    """The same spherical pendulum in BALL (quaternion) and D6 (three angles) coordinates: same body motion."""
    poses = []
    for kind in ("ball", "d6"):
        model = _spherical_body(device, kind)
        s0, s1 = model.state(), model.state()
        s0.joint_qd.assign(np.array([0.8, -0.4, 0.6], dtype=np.float32))  # at q = 0 both mean parent-frame rates
        solver = SolverMoreauGS(model)
        for _ in range(300):
            solver.step(s0, s1, None, None, 1e-3)
            s0, s1 = s1, s0
        poses.append(s0.body_q.numpy()[0])
    np.testing.assert_allclose(poses[0][:3], poses[1][:3], atol=2e-4)
    assert abs(abs(np.dot(poses[0][3:], poses[1][3:])) - 1.0) < 1e-5


def test_d6_planar_body_moves_freely(device):
    """D6 with linear X, Y and angular Z axes, COM off the joint point, no gravity: a free planar body, so its
    COM moves in a straight line at constant speed and it spins at a constant rate."""
    builder = newton.ModelBuilder(gravity=(0.0, 0.0, 0.0), up_axis=newton.Axis.Z)
    link = builder.add_link(mass=2.0, com=wp.vec3(0.3, 0.1, 0.0), inertia=wp.mat33(np.diag([0.02, 0.03, 0.05])))
    cfg = newton.ModelBuilder.JointDofConfig.create_unlimited
    joint = builder.add_joint_d6(
        -1, link, linear_axes=[cfg(axis=newton.Axis.X), cfg(axis=newton.Axis.Y)], angular_axes=[cfg(axis=newton.Axis.Z)]
    )
    builder.add_articulation([joint])
    model = builder.finalize(device=device)
    s0, s1 = model.state(), model.state()
    s0.joint_qd.assign(np.array([0.4, -0.2, 3.0], dtype=np.float32))
    newton.eval_fk(model, s0.joint_q, s0.joint_qd, s0)
    com0 = s0.body_q.numpy()[0][:3] + np.array([0.3, 0.1, 0.0])
    v_com = s0.body_qd.numpy()[0][:3].copy()
    solver = SolverMoreauGS(model)
    dt, steps = 1e-3, 1000
    for _ in range(steps):
        solver.step(s0, s1, None, None, dt)
        s0, s1 = s1, s0
    bq = s0.body_q.numpy()[0]
    R = np.array(wp.quat_to_matrix(wp.quat(*bq[3:7].tolist()))).reshape(3, 3)
    com = bq[:3] + R @ np.array([0.3, 0.1, 0.0])
    np.testing.assert_allclose(com, com0 + v_com * dt * steps, atol=2e-4)
    np.testing.assert_allclose(s0.joint_qd.numpy()[2], 3.0, rtol=1e-4)
    np.testing.assert_allclose(s0.body_qd.numpy()[0][:3], v_com, atol=2e-4)


@pytest.mark.parametrize("kind", ["ball", "d6"])
def test_spherical_joint_gradients(device, kind):
    """Tape gradients through BALL / D6 pendulum dynamics against central differences of the initial state."""
    model = _spherical_body(device, kind, requires_grad=True)
    solver = SolverMoreauGS(model)
    q0 = model.joint_q.numpy().astype(np.float64)
    if kind == "d6":
        q0[:] = [0.2, -0.3, 0.1]
    qd0 = np.array([0.9, -0.5, 1.2])
    nq = q0.shape[0]
    r = Rollout(model, solver, 25, 0.01, np.linspace(0.5, 1.0, nq), [0.3, -0.2, 0.1])
    states, tape = r.gradients(q0, qd0)
    gqd = states[0].joint_qd.grad.numpy()
    for idx in range(3):
        assert_close(gqd[idx], central_difference(lambda x: r.loss(q0, x), qd0, idx, 1e-3), 2e-2, 2e-4)
    if kind == "d6":
        gq = states[0].joint_q.grad.numpy()
        for idx in range(3):
            assert_close(gq[idx], central_difference(lambda x: r.loss(x, qd0), q0, idx, 1e-3), 2e-2, 2e-4)


def test_d6_prismatic_revolute_gradients(device):
    """D6 with a linear and an angular axis carrying an offset body under gravity (the pdot x w bias term)."""
    builder = newton.ModelBuilder(gravity=(0.0, 0.0, -G), up_axis=newton.Axis.Z)
    link = builder.add_link(mass=1.0, com=wp.vec3(0.0, 0.0, -0.4), inertia=wp.mat33(np.eye(3) * 0.01))
    cfg = newton.ModelBuilder.JointDofConfig.create_unlimited
    joint = builder.add_joint_d6(
        -1, link, linear_axes=[cfg(axis=newton.Axis.X)], angular_axes=[cfg(axis=newton.Axis.Y)]
    )
    builder.add_articulation([joint])
    model = builder.finalize(device=device, requires_grad=True)
    solver = SolverMoreauGS(model)
    q0, qd0 = np.array([0.1, 0.4]), np.array([0.5, -1.0])
    r = Rollout(model, solver, 30, 0.01, [1.0, 0.7], [0.2, 0.3])
    states, tape = r.gradients(q0, qd0)
    for idx in range(2):
        assert_close(
            states[0].joint_q.grad.numpy()[idx], central_difference(lambda x: r.loss(x, qd0), q0, idx, 1e-3), 2e-2, 2e-4
        )
        assert_close(
            states[0].joint_qd.grad.numpy()[idx],
            central_difference(lambda x: r.loss(q0, x), qd0, idx, 1e-3),
            2e-2,
            2e-4,
        )
    # a cart-pole with no cart force conserves horizontal momentum: the COM's x velocity stays constant
    s0, s1 = model.state(), model.state()
    s0.joint_q.assign(q0.astype(np.float32))
    s0.joint_qd.assign(qd0.astype(np.float32))
    newton.eval_fk(model, s0.joint_q, s0.joint_qd, s0)
    start = model.state()
    newton.eval_fk(model, s0.joint_q, s0.joint_qd, s0)
    start.assign(s0)
    vx0 = s0.body_qd.numpy()[0][0]
    drift = []
    for dt in (2e-3, 1e-3):
        s0.assign(start)
        solver = SolverMoreauGS(model)
        cart = []
        for _ in range(int(round(0.5 / dt))):
            solver.step(s0, s1, None, None, dt)
            s0, s1 = s1, s0
            cart.append(s0.joint_q.numpy()[0])
        drift.append(abs(s0.body_qd.numpy()[0][0] - vx0))
        assert np.ptp(cart) > 0.05  # the cart moved (recoiling against the swing)
    # the momentum error is discretisation error: small, and it shrinks (2.8x) when dt halves
    assert drift[1] < 1e-3 and drift[1] < 0.5 * drift[0]
