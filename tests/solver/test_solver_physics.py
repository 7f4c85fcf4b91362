"""SolverMoreauGS against analytic answers: free fall, resting contact, friction, incline, pendulum energy."""

import math

import newton
import numpy as np
import pytest
import warp as wp

from isaaclab_diffsim.solver import SolverMoreauGS, scenes

G = 9.81


def simulate(model, solver, duration, dt, qd0=None, every=None):
    s0, s1 = model.state(), model.state()
    if qd0 is not None:
        s0.joint_qd.assign(np.asarray(qd0, dtype=np.float32))
    trace = []
    for i in range(int(round(duration / dt))):
        solver.step(s0, s1, None, None, dt)
        s0, s1 = s1, s0
        if every and (i + 1) % every == 0:
            trace.append((s0.joint_q.numpy().copy(), s0.joint_qd.numpy().copy()))
    return s0, trace


def test_free_fall_is_exact(device):
    """Midpoint stepping is exact for constant acceleration: parabola to float32 rounding."""
    model = scenes.sphere_model(height=1.0, ground=False, device=device)
    solver = SolverMoreauGS(model)
    v0 = np.array([1.0, -0.5, 2.0])
    state, _ = simulate(model, solver, 1.0, 0.01, qd0=[*v0, 0.3, 0.2, 0.1])
    t = 1.0
    expected = np.array([0.0, 0.0, 1.0]) + v0 * t + 0.5 * np.array([0.0, 0.0, -G]) * t**2
    q, qd = state.joint_q.numpy(), state.joint_qd.numpy()
    np.testing.assert_allclose(q[:3], expected, atol=2e-5)
    np.testing.assert_allclose(qd[:3], v0 + np.array([0.0, 0.0, -G * t]), atol=2e-5)
    # torque-free sphere (isotropic inertia): angular velocity is constant
    np.testing.assert_allclose(qd[3:], [0.3, 0.2, 0.1], atol=5e-5)


def _rest(contact_model, device, radius=0.1, mass=2.0, kappa=1000.0):
    model = scenes.sphere_model(height=radius, radius=radius, mass=mass, device=device)
    solver = SolverMoreauGS(model, contact_model=contact_model, kappa=kappa)
    state, trace = simulate(model, solver, 10.0, 0.005, every=200)
    heights = np.array([q[2] for q, _ in trace])
    assert np.all(np.isfinite(heights))
    contacts = newton.Contacts(8, 0, requested_attributes={"force"}, device=device)
    solver.update_contacts(contacts, state)
    force = contacts.rigid_contact_force.numpy()[0]
    np.testing.assert_allclose(force, [0.0, 0.0, mass * G], rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(contacts.force.numpy()[0][:3], force, atol=1e-5)
    assert contacts.rigid_contact_count.numpy()[0] == 1
    return heights


def test_sphere_rests_hard(device):
    """Hard contact: a sphere released touching the ground stays exactly put (penetration 0, no drift);
    the reported contact force equals its weight."""
    heights = _rest("hard", device)
    assert np.max(np.abs(heights - 0.1)) < 1e-6


def test_sphere_rests_smoothed_log_law(device):
    """Smoothed contact at rest: the scaled impulse s(d) p leaves a residual sinking speed
    u = (1 - s) / s * g dt ~ exp(kappa d) g dt, so d(t) = -ln(kappa g dt t) / kappa (no position correction).

    Bound: penetration follows this law within 0.5 mm (6.2 mm at 10 s, kappa 1000 / m), i.e. it grows only
    logarithmically (1.6 mm from 2 s to 10 s); the contact force equals the weight.
    """
    kappa, dt = 1000.0, 0.005
    heights = _rest("smoothed", device, kappa=kappa)
    times = np.arange(1, len(heights) + 1) * 200 * dt
    law = -np.log(kappa * G * dt * times) / kappa
    np.testing.assert_allclose(heights - 0.1, law, atol=5e-4)


def test_soft_sphere_rests_at_static_penetration(device):
    """Soft contact at rest: the spring carries the weight, so the penetration is m g / ke and the contact
    force equals the weight (damping and friction vanish at rest)."""
    from isaaclab_diffsim.solver import SOFT_CONTACT_KE

    heights = _rest("soft", device)
    np.testing.assert_allclose(heights[-3:] - 0.1, -2.0 * G / SOFT_CONTACT_KE, rtol=0.02)


@pytest.mark.parametrize("contact_model", ["hard", "smoothed", "soft"])
def test_sliding_box_decelerates_at_mu_g(device, contact_model):
    mu, v0, t = 0.5, 2.0, 0.2
    model = scenes.box_on_incline_model(angle=0.0, mu=mu, device=device)
    solver = SolverMoreauGS(model, contact_model=contact_model)
    state, _ = simulate(model, solver, t, 0.005, qd0=[v0, 0, 0, 0, 0, 0])
    vx = state.joint_qd.numpy()[0]
    assert vx == pytest.approx(v0 - mu * G * t, rel=0.02)


def test_soft_box_on_incline_creeps_at_the_regularised_rate(device):
    """Soft contact, 20 degree incline, mu 0.8 (static for Coulomb): the regularised friction lets the box creep
    at the speed where the four corners' viscous friction balances gravity, m g sin(angle) = 4 kf v (28 um/s).
    The converged solve (1500 sweeps) gives that rate; the default 20 sweeps leave a residual spin of the box
    (four strongly coupled corners) but the creep stays far below 1 cm/s."""
    from isaaclab_diffsim.solver import SOFT_CONTACT_KF

    angle, mass = math.radians(20.0), 1.0
    creep = mass * G * math.sin(angle) / (4.0 * SOFT_CONTACT_KF)
    for iterations, rel in ((1500, 0.05), (20, None)):
        model = scenes.box_on_incline_model(angle=angle, mu=0.8, mass=mass, device=device)
        solver = SolverMoreauGS(model, contact_model="soft", iterations=iterations)
        state, _ = simulate(model, solver, 0.75, 0.005)
        v = np.linalg.norm(state.joint_qd.numpy()[:3])
        if rel is not None:
            assert v == pytest.approx(creep, rel=rel)
        else:
            assert v < 1e-3, f"creep {v:.2e} m/s with {iterations} sweeps"


@pytest.mark.parametrize("angle", [0.3, 0.6])
def test_box_on_incline_sticks_or_slides(device, angle):
    """tan(angle) < mu: sticks; otherwise accelerates at g (sin - mu cos) down the slope."""
    mu, t = 0.5, 0.5
    model = scenes.box_on_incline_model(angle=angle, mu=mu, device=device)
    solver = SolverMoreauGS(model, contact_model="hard")
    state, _ = simulate(model, solver, t, 0.005)
    v = state.joint_qd.numpy()[:3]
    expected = max(0.0, G * (math.sin(angle) - mu * math.cos(angle))) * t
    if math.tan(angle) < mu:
        assert np.linalg.norm(v) < 1e-4
    else:
        assert np.linalg.norm(v) == pytest.approx(expected, rel=0.02)
        slope = np.array([math.cos(angle), 0.0, -math.sin(angle)])
        assert np.dot(v, slope) / np.linalg.norm(v) > 0.999


def test_pendulum_conserves_energy(device):
    """Revolute pendulum, no contact, dt 5 ms for 10 s: relative energy error below 1e-3."""
    model = scenes.pendulum_model(angle=1.0, device=device)
    solver = SolverMoreauGS(model)
    _, trace = simulate(model, solver, 10.0, 0.005, every=10)
    energies = np.array([scenes.pendulum_energy(q[0], qd[0]) for q, qd in trace])
    e0 = scenes.pendulum_energy(1.0, 0.0)
    assert np.max(np.abs(energies - e0)) / abs(e0) < 1e-3
    # and it really swings through the bottom
    assert min(q[0] for q, _ in trace) < -0.9


def test_joint_drive_reaches_target(device):
    """A PD drive (implicit) on the pendulum holds it near the target against gravity."""
    builder = newton.ModelBuilder()
    link = builder.add_link(mass=1.0, com=wp.vec3(0.0, 0.0, -0.5), inertia=wp.mat33(np.eye(3) * 0.01))
    joint = builder.add_joint_revolute(-1, link, axis=(0.0, 1.0, 0.0), target_ke=400.0, target_kd=20.0)
    builder.add_articulation([joint])
    model = builder.finalize(device=device)
    control = model.control()
    control.joint_target_q.fill_(0.5)
    solver = SolverMoreauGS(model)
    s0, s1 = model.state(), model.state()
    for _ in range(600):
        solver.step(s0, s1, control, None, 0.005)
        s0, s1 = s1, s0
    theta = s0.joint_q.numpy()[0]
    # static equilibrium: ke (0.5 - theta) = m g l sin(theta)
    residual = 400.0 * (0.5 - theta) - 1.0 * G * 0.5 * math.sin(theta)
    assert abs(residual) < 1e-2


@pytest.mark.parametrize(
    "kwargs",
    [
        {"contact_model": "sticky"},
        {"kappa": -1.0},
        {"kappa": 0.0},
        {"iterations": 0},
        {"margin": -0.1},
        {"stabilization": 2.0},
        {"ke": -5.0},
    ],
)
def test_bad_arguments_raise(kwargs):
    model = scenes.sphere_model()
    with pytest.raises(ValueError):
        SolverMoreauGS(model, **kwargs)


def test_unsupported_scene_raises():
    builder = newton.ModelBuilder()
    body = builder.add_body(mass=1.0)
    builder.add_shape_cone(body, radius=0.1, half_height=0.2)
    builder.add_ground_plane()
    with pytest.raises(ValueError, match="CONE"):
        SolverMoreauGS(builder.finalize(device="cpu"))

    builder = newton.ModelBuilder()
    a = builder.add_link(mass=1.0)
    joint = builder.add_joint_distance(-1, a)
    builder.add_articulation([joint])
    with pytest.raises(ValueError, match="DISTANCE"):
        SolverMoreauGS(builder.finalize(device="cpu"))


def _driven_hinge(axis, effort_limit, velocity_limit, ke, kd, device):
    builder = newton.ModelBuilder()
    link = builder.add_link(mass=1.0, com=wp.vec3(0.0, 0.0, -0.5), inertia=wp.mat33(np.eye(3) * 0.01))
    joint = builder.add_joint_revolute(
        -1, link, axis=axis, target_ke=ke, target_kd=kd, effort_limit=effort_limit, velocity_limit=velocity_limit
    )
    builder.add_articulation([joint])
    return builder.finalize(device=device)


def test_drive_respects_effort_limit(device):
    """A drive asked for more than its effort limit is a constant torque: the pendulum released at rest
    where m g l sin(theta) = limit stays there (an unclipped drive would pull it towards the target)."""
    model = _driven_hinge((0.0, 1.0, 0.0), 2.0, 100.0, 400.0, 20.0, device)
    control = model.control()
    control.joint_target_q.fill_(1.5)
    solver = SolverMoreauGS(model)
    s0, s1 = model.state(), model.state()
    theta = math.asin(2.0 / (G * 0.5))
    s0.joint_q.fill_(theta)
    for _ in range(400):
        solver.step(s0, s1, control, None, 0.005)
        s0, s1 = s1, s0
    assert s0.joint_q.numpy()[0] == pytest.approx(theta, abs=1e-4)


def test_dc_motor_envelope_limits_speed(device):
    """Torque-speed envelope saturation * (1 - v / v_max): a saturated drive on a free wheel (vertical
    axis, no gravity torque) accelerates to the no-load speed v_max and no further."""
    model = _driven_hinge((0.0, 0.0, 1.0), 1.0e3, 7.5, 1.0e4, 0.0, device)
    control = model.control()
    control.joint_target_q.fill_(1.0e3)
    solver = SolverMoreauGS(model, actuator_saturation=120.0)
    s0, s1 = model.state(), model.state()
    for _ in range(400):
        solver.step(s0, s1, control, None, 0.005)
        s0, s1 = s1, s0
    assert s0.joint_qd.numpy()[0] == pytest.approx(7.5, abs=1e-3)
