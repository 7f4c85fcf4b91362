"""The real ANYmal C (example-robot-data URDF, four foot spheres) on SolverMoreauGS at dt 5 ms."""

import numpy as np
import pytest

from isaaclab_diffsim.assets.anymal_c import build_anymal_c_model
from isaaclab_diffsim.solver import SolverMoreauGS

DT = 0.005


def run(contact_model, kp, duration, base_height=0.6, device="cpu"):
    model, _ = build_anymal_c_model(num_worlds=1, device=device, kp=kp, kd=5.0, base_height=base_height)
    solver = SolverMoreauGS(model, contact_model=contact_model)
    s0, s1 = model.state(), model.state()
    heights, speeds = [], []
    for _ in range(int(round(duration / DT))):
        solver.step(s0, s1, None, None, DT)
        s0, s1 = s1, s0
        heights.append(s0.joint_q.numpy()[2])
        speeds.append(np.linalg.norm(s0.body_qd.numpy()[:, :3], axis=1).max())
    return np.array(heights), np.array(speeds)


@pytest.mark.parametrize(
    "contact_model,kp",
    [
        ("smoothed", 40.0),
        ("hard", 40.0),
        ("soft", 40.0),
    ],
)
def test_anymal_stands_under_pd(device, contact_model, kp):
    """Settles within 2 s (soft: 3 s), then 10 s: no NaN, base height within 1 cm, bodies slower than 0.5 m/s.
    Soft contact's regularised friction lets the feet creep (about 2 mm/s under a standing foot's 55 N tangential
    load, SOFT_CONTACT_KF) and the base sinks with them: 3 cm over the 10 s."""
    settle = 3.0 if contact_model == "soft" else 2.0
    heights, speeds = run(contact_model, kp, settle + 10.0, device=device)
    after = slice(int(settle / DT), None)
    assert np.all(np.isfinite(heights))
    tol = 0.03 if contact_model == "soft" else 0.01
    assert np.ptp(heights[after]) < tol, f"base height range {np.ptp(heights[after]):.4f} m"
    assert speeds[after].max() < 0.5
    assert heights[after].min() > 0.2, "the robot must be standing on its feet"


@pytest.mark.parametrize("contact_model", ["smoothed", "hard", "soft"])
def test_anymal_drop_lands(contact_model):
    """Dropped from 0.2 m above its standing start height: lands without blowing up."""
    heights, speeds = run(contact_model, 40.0, 1.5, base_height=0.8)
    assert np.all(np.isfinite(heights))
    assert speeds.max() < 5.0, f"max body speed {speeds.max():.2f} m/s"
    free_fall_speed = np.sqrt(2 * 9.81 * (0.8 - 0.6 + 0.05))
    assert speeds.max() < 2.5 * free_fall_speed


@pytest.mark.parametrize("contact_model", ["hard", "smoothed"])
def test_statics_with_shifted_base_com(contact_model):
    """Resting on four feet (kp 150, 4 s), with the base's centre of mass moved 10 cm forward: the normal forces
    sum to the weight, the contact forces have no pitch moment about the whole robot's centre of mass (static
    equilibrium), and the front feet carry more than with the nominal CoM."""
    import newton
    import warp as wp

    front = {}
    for dx in (0.0, 0.1):
        model, layout = build_anymal_c_model(num_worlds=1, device="cpu", kp=150.0, kd=5.0)
        com = model.body_com.numpy()
        com[int(layout.base_body[0]), 0] += dx
        model.body_com.assign(com)
        solver = SolverMoreauGS(model, contact_model=contact_model)
        s0, s1 = model.state(), model.state()
        for _ in range(800):
            solver.step(s0, s1, None, None, DT)
            s0, s1 = s1, s0
        contacts = newton.Contacts(rigid_contact_max=solver.layout.candidate_count, soft_contact_max=0, device="cpu")
        solver.update_contacts(contacts, s0)
        n = int(contacts.rigid_contact_count.numpy()[0])
        force = contacts.rigid_contact_force.numpy()[:n]
        body_q, shape_body = s0.body_q.numpy(), model.shape_body.numpy()
        points = np.array(
            [
                wp.transform_point(wp.transform(*body_q[shape_body[s]]), wp.vec3(*p))
                for s, p in zip(contacts.rigid_contact_shape0.numpy()[:n], contacts.rigid_contact_point0.numpy()[:n])
            ]
        )
        mass = model.body_mass.numpy()
        com_w = np.array([wp.transform_point(wp.transform(*body_q[b]), wp.vec3(*com[b])) for b in range(len(mass))])
        c = (mass[:, None] * com_w).sum(0) / mass.sum()
        weight = mass.sum() * 9.81
        np.testing.assert_allclose(force[:, 2].sum(), weight, rtol=1e-3)
        pitch_moment = ((points[:, 0] - c[0]) * force[:, 2] - (points[:, 2] - c[2]) * force[:, 0]).sum()
        assert abs(pitch_moment) < 1e-3 * weight * 0.3, pitch_moment  # vs weight x lever ~ 150 N m
        front[dx] = force[points[:, 0] > c[0], 2].sum() / force[:, 2].sum()
    assert front[0.1] > front[0.0] + 0.03, front


@pytest.mark.parametrize(
    "preset,dt,creep_range",
    [("dflex_default", 0.0005, (20.0, 60.0)), ("ahac_anymal", 0.002, (1.0, 10.0))],
)
def test_anymal_stands_on_penalty_contact(preset, dt, creep_range):
    """Penalty contact, kp 150, at a stable dt (docs/contact_solver.md "Penalty contact": at most 1.25 ms for
    dflex_default, 2.5 ms for ahac_anymal). From 0.2 s to 2 s the feet stay in the ground; from 1 s their mean sink is
    the weight over 4 ke, and they creep (viscous friction has no static part: a foot slides at its tangential load over
    kf) at 37 and 3 mm/s (scripts/experiments/penalty_standing.py --kp 150), where hard contact holds them."""
    import newton

    from isaaclab_diffsim.solver import PENALTY_PRESETS

    model, _ = build_anymal_c_model(num_worlds=1, device="cpu", kp=150.0, kd=5.0)
    solver = SolverMoreauGS(model, contact_model="penalty", penalty_preset=preset)
    contacts = newton.Contacts(rigid_contact_max=solver.layout.candidate_count, soft_contact_max=0, device="cpu")
    s0, s1 = model.state(), model.state()
    every = int(round(0.01 / dt))
    sinks, points, times = [], [], []
    for i in range(int(round(2.0 / dt))):
        solver.step(s0, s1, None, None, dt)
        s0, s1 = s1, s0
        if (i + 1) * dt >= 0.2 and (i + 1) % every == 0:
            solver.update_contacts(contacts, s0)
            d = solver.last_contact_distances().numpy()[:4]
            assert np.all(d < 0.0), f"a foot left the ground at t={(i + 1) * dt:.3f} s: {d}"
            if (i + 1) * dt >= 1.0:
                sinks.append(-d.mean())
                points.append(contacts.rigid_contact_point1.numpy()[:4, :2].copy())
                times.append((i + 1) * dt)
    weight = model.body_mass.numpy().sum() * 9.81
    assert s0.joint_q.numpy()[2] > 0.3, "standing"
    np.testing.assert_allclose(np.mean(sinks), weight / (4 * PENALTY_PRESETS[preset][0]), rtol=0.05)
    creep = 1e3 * np.linalg.norm(points[-1] - points[0], axis=1).mean() / (times[-1] - times[0])
    assert creep_range[0] < creep < creep_range[1], f"creep {creep:.1f} mm/s"
