"""Cylinders, ellipsoids and meshes / convex hulls against ground planes; collision groups, filter pairs and
surface margins (analytic rest heights and plane distances)."""

import math

import newton
import numpy as np
import pytest
import warp as wp

from isaaclab_diffsim.solver import SolverMoreauGS

G = 9.81


def _body_on_ground(add_shape, pos, rot=None, mu=0.5):
    builder = newton.ModelBuilder()
    cfg = newton.ModelBuilder.ShapeConfig(mu=mu)
    body = builder.add_body(xform=wp.transform(pos, rot if rot is not None else wp.quat_identity()))
    add_shape(builder, body, cfg)
    builder.add_ground_plane(cfg=newton.ModelBuilder.ShapeConfig(mu=mu))
    return builder.finalize(device="cpu")


def _settle(model, mode="hard", seconds=1.0, dt=0.005):
    solver = SolverMoreauGS(model, contact_model=mode)
    s0, s1 = model.state(), model.state()
    for _ in range(int(round(seconds / dt))):
        solver.step(s0, s1, None, None, dt)
        s0, s1 = s1, s0
    return solver, s0


def _distances(model):
    """Plane distances of the candidates at the initial pose (one step of negligible length at rest)."""
    solver = SolverMoreauGS(model, contact_model="hard")
    s0, s1 = model.state(), model.state()
    solver.step(s0, s1, None, None, 1e-7)
    return solver.last_contact_distances().numpy()


def _cylinder(radius=0.1, half_height=0.3):
    return lambda b, body, cfg: b.add_shape_cylinder(body, radius=radius, half_height=half_height, cfg=cfg)


def test_cylinder_rests_on_cap_and_side():
    """Standing, the rims rest on the ground at z = half_height. Lying on its side, the sampled rims make an
    octagonal prism: it rests on a face at radius cos(pi / 8) (0.076 radius below a true cylinder)."""
    _, state = _settle(_body_on_ground(_cylinder(), (0.0, 0.0, 0.3)))
    np.testing.assert_allclose(state.body_q.numpy()[0][:3], [0.0, 0.0, 0.3], atol=2e-4)  # 16 coplanar contacts
    assert abs(state.body_q.numpy()[0][2] - 0.3) < 1e-5
    face_down = wp.quat_from_axis_angle(wp.vec3(0.0, 0.0, 1.0), math.pi / 8)  # about the cylinder's axis
    side = wp.quat_from_axis_angle(wp.vec3(1.0, 0.0, 0.0), math.pi / 2) * face_down
    height = 0.1 * math.cos(math.pi / 8) - 1e-6  # just touching (float32 rounding must not leave a gap)
    _, state = _settle(_body_on_ground(_cylinder(), (0.0, 0.0, height), side))
    np.testing.assert_allclose(state.body_q.numpy()[0][:3], [0.0, 0.0, height], atol=1e-5)


def test_cylinder_rim_sampling_bound():
    """Lying on its side with a face of the rim octagon down, the lowest samples are radius (1 - cos(pi / 8)) above
    the true lowest point (the worst case)."""
    roll = wp.quat_from_axis_angle(wp.vec3(0.0, 0.0, 1.0), math.pi / 8)  # about the cylinder axis
    side = wp.quat_from_axis_angle(wp.vec3(1.0, 0.0, 0.0), math.pi / 2) * roll
    d = _distances(_body_on_ground(_cylinder(), (0.0, 0.0, 0.1), side))
    np.testing.assert_allclose(d.min(), 0.1 * (1.0 - math.cos(math.pi / 8)), rtol=1e-3)


@pytest.mark.parametrize("angle", [0.0, 0.4, math.pi / 2, 2.0])
def test_ellipsoid_plane_distance_is_exact(angle):
    """Semi-axes (0.3, 0.2, 0.1) tilted by ``angle`` about x, centre at height 0.5: the lowest point is at
    0.5 - sqrt(ry^2 sin^2 + rz^2 cos^2)."""
    rot = wp.quat_from_axis_angle(wp.vec3(1.0, 0.0, 0.0), angle)
    model = _body_on_ground(
        lambda b, body, cfg: b.add_shape_ellipsoid(body, rx=0.3, ry=0.2, rz=0.1, cfg=cfg), (0.0, 0.0, 0.5), rot
    )
    d = _distances(model)
    assert d.shape == (1,)
    expected = 0.5 - math.sqrt((0.2 * math.sin(angle)) ** 2 + (0.1 * math.cos(angle)) ** 2)
    np.testing.assert_allclose(d[0], expected, atol=1e-6)


def _ellipsoid(axes=(0.3, 0.2, 0.1)):
    return lambda b, body, cfg: b.add_shape_ellipsoid(body, rx=axes[0], ry=axes[1], rz=axes[2], cfg=cfg)


def test_ellipsoid_rests_on_its_flat_side():
    """Released touching the ground on its flattest side, an ellipsoid stays put and the ground carries its weight."""
    model = _body_on_ground(_ellipsoid(), (0.0, 0.0, 0.1))
    solver, state = _settle(model)
    np.testing.assert_allclose(state.body_q.numpy()[0][:3], [0.0, 0.0, 0.1], atol=1e-5)
    contacts = newton.Contacts(4, 0, device="cpu")
    solver.update_contacts(contacts, state)
    np.testing.assert_allclose(contacts.rigid_contact_force.numpy()[0][2], model.body_mass.numpy()[0] * G, rtol=1e-4)


def test_ellipsoid_rocks_on_its_lowest_point():
    """Released tilted and touching, an ellipsoid rocks (rolling without slip dissipates nothing): its energy never
    grows, and its lowest point stays on the ground. (The velocity-level contact follows a moving support point to
    first order, so without stabilisation a rocking ellipsoid sinks by O(dt) per unit time; stabilization 0.2
    removes it.)"""
    axes = np.array([0.3, 0.2, 0.1])
    tilt = 0.3
    rot = wp.quat_from_axis_angle(wp.vec3(1.0, 0.0, 0.0), tilt)
    height = math.sqrt((axes[1] * math.sin(tilt)) ** 2 + (axes[2] * math.cos(tilt)) ** 2)
    model = _body_on_ground(_ellipsoid(tuple(axes)), (0.0, 0.0, height), rot, mu=1.0)
    solver = SolverMoreauGS(model, contact_model="hard", stabilization=0.2)
    s0, s1 = model.state(), model.state()
    mass, inertia = model.body_mass.numpy()[0], model.body_inertia.numpy()[0]

    def energy_and_lowest(state):
        bq, bqd = state.body_q.numpy()[0], state.body_qd.numpy()[0]
        R = np.array(wp.quat_to_matrix(wp.quat(*bq[3:7].tolist()))).reshape(3, 3)
        w = bqd[3:]
        e = 0.5 * mass * bqd[:3] @ bqd[:3] + 0.5 * w @ (R @ inertia @ R.T) @ w + mass * G * bq[2]
        return e, bq[2] - np.linalg.norm(axes * (R.T @ np.array([0.0, 0.0, 1.0])))

    e0, _ = energy_and_lowest(s0)
    swing = []
    for _ in range(400):
        solver.step(s0, s1, None, None, 0.005)
        s0, s1 = s1, s0
        e, lowest = energy_and_lowest(s0)
        assert e <= e0 + 1e-3 * abs(e0) and lowest > -2e-3
        swing.append(np.linalg.norm(s0.body_qd.numpy()[0][3:]))
    assert max(swing) > 0.5  # it does rock


def _cube_mesh(size=0.3, offset=(1.0, 0.0, 0.0)):
    corners = np.array(
        [(x, y, z) for x in (-size, size) for y in (-size, size) for z in (-size, size)], dtype=np.float32
    )
    vertices = np.concatenate([corners, corners[::-1], corners]) + np.array(offset, dtype=np.float32)  # duplicates
    indices = [
        0,
        1,
        3,
        0,
        3,
        2,
        4,
        6,
        7,
        4,
        7,
        5,
        0,
        4,
        5,
        0,
        5,
        1,
        2,
        3,
        7,
        2,
        7,
        6,
        0,
        2,
        6,
        0,
        6,
        4,
        1,
        5,
        7,
        1,
        7,
        3,
    ]
    return newton.Mesh(vertices=vertices, indices=indices)


def test_mesh_collides_through_its_hull_vertices():
    """A cube mesh with duplicated vertices and an offset origin: 8 candidates (its hull), resting on its face."""
    mesh = _cube_mesh()
    model = _body_on_ground(lambda b, body, cfg: b.add_shape_mesh(body, mesh=mesh, cfg=cfg), (0.0, 0.0, 0.3))
    solver, state = _settle(model)
    assert solver.layout.candidate_count == 8
    np.testing.assert_allclose(state.body_q.numpy()[0][:3], [0.0, 0.0, 0.3], atol=1e-5)


def test_convex_hull_of_a_point_cloud():
    """A convex hull of random points (interior points dropped): the plane distance is the lowest hull vertex."""
    rng = np.random.default_rng(0)
    points = rng.normal(size=(60, 3)).astype(np.float32) * 0.1
    mesh = newton.Mesh(vertices=points, indices=[0, 1, 2])
    model = _body_on_ground(lambda b, body, cfg: b.add_shape_convex_hull(body, mesh=mesh, cfg=cfg), (0.0, 0.0, 1.0))
    d = _distances(model)
    hull = np.unique(np.asarray(mesh.compute_convex_hull().vertices), axis=0)
    assert 4 <= d.shape[0] == hull.shape[0] < points.shape[0]
    np.testing.assert_allclose(d.min(), 1.0 + points[:, 2].min(), atol=1e-6)


def test_collision_group_filter_pair_and_margin():
    """Group 0 and a filter pair with the ground remove a shape's candidates; surface margins (summed over the two
    shapes) raise the rest height of a sphere by both margins."""

    def sphere(group=1, margin=0.0):
        return lambda b, body, cfg: b.add_shape_sphere(
            body, radius=0.1, cfg=newton.ModelBuilder.ShapeConfig(collision_group=group, margin=margin)
        )

    assert SolverMoreauGS(_body_on_ground(sphere(group=0), (0.0, 0.0, 0.1))).layout.candidate_count == 0
    builder = newton.ModelBuilder()
    body = builder.add_body(xform=wp.transform((0.0, 0.0, 0.1), wp.quat_identity()))
    s = builder.add_shape_sphere(body, radius=0.1)
    ground = builder.add_ground_plane()
    builder.add_shape_collision_filter_pair(s, ground)
    assert SolverMoreauGS(builder.finalize(device="cpu")).layout.candidate_count == 0

    builder = newton.ModelBuilder()
    body = builder.add_body(xform=wp.transform((0.0, 0.0, 0.13), wp.quat_identity()))
    builder.add_shape_sphere(body, radius=0.1, cfg=newton.ModelBuilder.ShapeConfig(margin=0.01))
    builder.add_ground_plane(cfg=newton.ModelBuilder.ShapeConfig(margin=0.02))
    _, state = _settle(builder.finalize(device="cpu"))
    np.testing.assert_allclose(state.body_q.numpy()[0][2], 0.13, atol=1e-5)


def test_unsupported_shape_is_refused():
    model = _body_on_ground(
        lambda b, body, cfg: b.add_shape_cone(body, radius=0.1, half_height=0.2, cfg=cfg), (0, 0, 1)
    )
    with pytest.raises(ValueError, match="CONE"):
        SolverMoreauGS(model)
