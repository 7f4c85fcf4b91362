"""The explicit penalty model (contact_model="penalty") against its formulas: statics, the force law from the step's
start state, a bouncing and sliding ball stepped by hand (symplectic Euler), viscous friction, gradients."""

import newton
import numpy as np
import pytest
from helpers.finite_difference import Rollout, assert_close, central_difference

from isaaclab_diffsim.solver import PENALTY_MAX_DT, PENALTY_PRESETS, SolverMoreauGS, scenes

G = 9.81
R, M, MU = 0.1, 2.0, 0.5  # the sphere scene: radius [m], mass [kg], mu (sphere and ground)


def _run(model, solver, q0, qd0, steps, dt):
    s0, s1 = model.state(), model.state()
    s0.joint_q.assign(np.asarray(q0, dtype=np.float32))
    s0.joint_qd.assign(np.asarray(qd0, dtype=np.float32))
    trace = []
    for _ in range(steps):
        solver.step(s0, s1, None, None, dt)
        s0, s1 = s1, s0
        trace.append((s0.joint_q.numpy().copy(), s0.joint_qd.numpy().copy()))
    return s0, trace


def _sphere(preset="dflex_default", **kwargs):
    model = scenes.sphere_model(height=R, radius=R, mass=M, mu=MU)
    return model, SolverMoreauGS(model, contact_model="penalty", penalty_preset=preset, **kwargs)


@pytest.mark.parametrize("preset", list(PENALTY_PRESETS))
def test_sphere_rests_at_m_g_over_ke(preset):
    """A sphere released touching the ground settles at the sink m g / ke and the reported force is its weight."""
    model, solver = _sphere(preset)
    state, _ = _run(model, solver, model.joint_q.numpy(), np.zeros(6), 3000, 0.001)
    ke = PENALTY_PRESETS[preset][0]
    sink = R - state.joint_q.numpy()[2]
    np.testing.assert_allclose(sink, M * G / ke, rtol=1e-3)
    contacts = newton.Contacts(4, 0, device="cpu")
    solver.update_contacts(contacts, state)
    np.testing.assert_allclose(contacts.rigid_contact_force.numpy()[0], [0.0, 0.0, M * G], rtol=1e-3, atol=1e-3)
    assert solver.last_sweep_counts().numpy()[0] == 0 and solver.last_solve_residual().numpy()[0] == 0.0


@pytest.mark.parametrize("angle_deg,slides", [(20.0, False), (45.0, True)])
def test_box_on_incline_sinks_and_creeps_or_slides(angle_deg, slides):
    """A box on four corners (n = 4 of its 8 candidates) on an incline, mu 0.8: it sinks m g cos / (n ke) per corner;
    below the friction angle viscous friction holds it at the creep speed m g sin / (n kf), above it the box
    slides at g (sin - mu cos)."""
    ke, kd, kf = 1.0e4, 100.0, 200.0
    # explicit viscous friction is stable while kf dt times the corners' summed Delassus entry (4 (1/m + h^2/I),
    # h the corners' 0.1 m lever below the COM: 10 /kg) stays below 2: here 0.4
    angle, mass, mu, dt = float(np.radians(angle_deg)), 1.0, 0.8, 2.0e-4
    model = scenes.box_on_incline_model(angle=angle, mass=mass, mu=mu)
    solver = SolverMoreauGS(model, contact_model="penalty", penalty_ke=ke, penalty_kd=kd, penalty_kf=kf)
    _, trace = _run(model, solver, model.joint_q.numpy(), np.zeros(6), 3000, dt)
    assert np.all(np.isfinite(trace[-1][0]))
    down = np.array([np.cos(angle), 0.0, -np.sin(angle)])  # down the slope
    v_end = trace[-1][1][:3] @ down
    if slides:
        a = (trace[-1][1][:3] - trace[-500][1][:3]) @ down / (499 * dt)
        np.testing.assert_allclose(a, G * (np.sin(angle) - mu * np.cos(angle)), rtol=2e-3)
        return
    np.testing.assert_allclose(v_end, mass * G * np.sin(angle) / (4 * kf), rtol=1e-2)
    depth = -solver.last_contact_distances().numpy()
    bottom = depth > 0
    assert bottom.sum() == 4
    np.testing.assert_allclose(depth[bottom].mean(), mass * G * np.cos(angle) / (4 * ke), rtol=1e-3)


def _hand_step(z, x, vz, vx, wy, ke, kd, kf, dt):
    """One symplectic Euler step of the sphere by the penalty formulas (float64): forces from the start state."""
    d = z - R
    fn = ft = 0.0
    if d < 0.0:
        fn = ke * (-d) - kd * min(vz, 0.0)  # P1
        vt = vx - R * wy  # contact point velocity along x: v + w x (0, 0, -R)
        ft = -min(kf * abs(vt), MU * fn) * np.sign(vt)  # P2
    inertia = 0.4 * M * R**2
    vz, vx, wy = vz + dt * (fn / M - G), vx + dt * ft / M, wy + dt * (-R * ft) / inertia
    return z + dt * vz, x + dt * vx, vz, vx, wy


@pytest.mark.parametrize("preset", list(PENALTY_PRESETS))
def test_bouncing_sliding_ball_matches_the_hand_stepped_formulas(preset):
    """Dropped at 1 m/s with 0.5 m/s sideways: the ball lands, slides (Coulomb-capped), rolls (viscous) and bounces;
    every step, from the solver's own start state, equals symplectic Euler on the penalty formulas (float64) to
    float32 rounding."""
    ke, kd, kf = PENALTY_PRESETS[preset]
    dt = 2.5e-4
    model, solver = _sphere(preset)
    q0, qd0 = [0.0, 0.0, R + 0.01, 0.0, 0.0, 0.0, 1.0], [0.5, 0.0, -1.0, 0.0, 0.0, 0.0]
    _, trace = _run(model, solver, q0, qd0, 1200, dt)
    starts = [(np.array(q0), np.array(qd0))] + trace[:-1]
    in_contact = 0
    for (q, qd), (q1, qd1) in zip(starts, trace):
        z, x, vz, vx, wy = _hand_step(q[2], q[0], qd[2], qd[0], qd[4], ke, kd, kf, dt)
        in_contact += q[2] < R
        np.testing.assert_allclose([q1[2], q1[0]], [z, x], rtol=0.0, atol=1e-7)
        np.testing.assert_allclose([qd1[2], qd1[0], qd1[4]], [vz, vx, wy], rtol=1e-5, atol=1e-5)
    assert in_contact > 100


@pytest.mark.parametrize(
    "vx,vz,slow",
    [(1.0e-3, 0.0, True), (1.0, 0.0, False), (1.0e-3, -0.01, True), (1.0e-3, 0.01, True)],
)
def test_force_law_from_the_start_state(vx, vz, slow):
    """One step from a sphere 1 mm in the ground: f_n = ke (-d) - kd min(v_n, 0) (damping only while approaching);
    friction f_t = -kf v_t when slow, -mu f_n when fast (the reported force is impulse / dt)."""
    ke, kd, kf = PENALTY_PRESETS["dflex_default"]
    model, solver = _sphere()
    depth = 1.0e-3
    _run(model, solver, [0.0, 0.0, R - depth, 0.0, 0.0, 0.0, 1.0], [vx, 0.0, vz, 0.0, 0.0, 0.0], 1, 0.001)
    f = solver.last_contact_impulses().numpy()[:3] / 0.001
    fn = ke * depth - kd * min(vz, 0.0)
    np.testing.assert_allclose(f[0], fn, rtol=1e-5)
    ft = kf * vx if slow else MU * fn
    assert kf * vx < MU * fn if slow else kf * vx > MU * fn
    np.testing.assert_allclose(np.hypot(f[1], f[2]), ft, rtol=1e-4)


@pytest.mark.parametrize("preset,dt", [("ahac_anymal", 0.002), ("dflex_default", 0.0005)])
def test_penalty_contact_gradients(preset, dt):
    """A sphere pressed into the ground, bouncing on the spring and sliding (viscous regime): tape gradients through
    the explicit penalty forces match central differences; the contact stays active throughout."""
    ke = PENALTY_PRESETS[preset][0]
    model = scenes.sphere_model(height=R, radius=R, mass=M, mu=MU, requires_grad=True)
    solver = SolverMoreauGS(model, contact_model="penalty", penalty_preset=preset)
    q0 = np.array([0.0, 0.0, R - 0.5 * M * G / ke, 0.0, 0.0, 0.0, 1.0])
    qd0 = np.array([0.002, 0.0, -0.01, 0.0, 0.0, 0.0])
    r = Rollout(model, solver, 40, dt, [1, 0, 1, 0, 0, 0, 0], [1, 0, 1, 0, 1, 0])
    states, _ = r.gradients(q0, qd0)
    gq, gqd = states[0].joint_q.grad.numpy(), states[0].joint_qd.grad.numpy()
    eps_z = 0.05 * M * G / ke
    assert_close(gq[2], central_difference(lambda x: r.loss(x, qd0), q0, 2, eps_z), 0.02, 1e-3)
    assert_close(gqd[2], central_difference(lambda x: r.loss(q0, x), qd0, 2, 2e-3), 0.02, 1e-3)
    assert_close(gqd[0], central_difference(lambda x: r.loss(q0, x), qd0, 0, 1e-3), 0.02, 1e-3)
    assert abs(gq[2]) > 1e-3


@pytest.mark.parametrize(
    "kwargs",
    [{"penalty_preset": "dflex"}, {"penalty_ke": -1.0}, {"penalty_kd": float("nan")}, {"penalty_kf": -1.0}],
)
def test_bad_penalty_arguments_raise(kwargs):
    with pytest.raises(ValueError, match="penalty_"):
        SolverMoreauGS(scenes.sphere_model(), contact_model="penalty", **kwargs)


def test_overrides_replace_the_preset():
    solver = SolverMoreauGS(
        scenes.sphere_model(), contact_model="penalty", penalty_preset="ahac_anymal", penalty_kd=7.0
    )
    assert (solver.penalty_ke, solver.penalty_kd, solver.penalty_kf) == (2.0e3, 7.0, 1.0e2)


@pytest.mark.parametrize("preset,substeps", [("dflex_default", 5), ("ahac_anymal", 2)])
def test_a_long_step_takes_the_presets_substeps(preset, substeps):
    """At 5 ms each preset takes ceil(5 ms / PENALTY_MAX_DT) substeps, bitwise the same as as many short steps."""
    model = scenes.sphere_model(height=R + 0.005, radius=R, mass=M, mu=MU)
    long = SolverMoreauGS(model, contact_model="penalty", penalty_preset=preset)
    short = SolverMoreauGS(model, contact_model="penalty", penalty_preset=preset, penalty_substeps=1)
    assert long.substeps(0.005) == substeps and short.substeps(0.005) == 1
    assert SolverMoreauGS(model, contact_model="soft").substeps(0.005) == 1
    q0, qd0 = model.joint_q.numpy(), [0.3, 0.0, -0.5, 0.0, 0.0, 0.0]
    a, _ = _run(model, long, q0, qd0, 20, 0.005)
    b, _ = _run(model, short, q0, qd0, 20 * substeps, 0.005 / substeps)
    assert np.array_equal(a.joint_q.numpy(), b.joint_q.numpy()) and np.array_equal(
        a.joint_qd.numpy(), b.joint_qd.numpy()
    )
    assert a.joint_q.numpy()[2] < R and PENALTY_MAX_DT[preset] * substeps >= 0.005
