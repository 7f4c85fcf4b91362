"""Terrain contact (static triangle meshes and heightfields) against analytic answers: the incline law on a tilted
mesh, sliding across a valley and over a ridge, a box on a step, a flat mesh against a ground plane, finite-difference
gradients across a crease, points above a folded heightfield (outside, at their exact distance), points near the
buried faces of overlapping boxes (the union's distance and normal) and the refusals."""

import math

import newton
import numpy as np
import pytest
import warp as wp
from helpers.finite_difference import Rollout, assert_close, central_difference

from isaaclab_diffsim.solver import SolverMoreauGS
from isaaclab_diffsim.solver import terrain_scenes as ts
from isaaclab_diffsim.solver.terrain_frames import terrain_feature_frame

G = 9.81
DT = 0.005


def simulate(model, solver, duration, qd0=None, q0=None):
    """Final state and the (joint_q, joint_qd) trace of every step."""
    s0, s1 = model.state(), model.state()
    if q0 is not None:
        s0.joint_q.assign(np.asarray(q0, dtype=np.float32))
    if qd0 is not None:
        s0.joint_qd.assign(np.asarray(qd0, dtype=np.float32))
    trace = []
    for _ in range(int(round(duration / DT))):
        solver.step(s0, s1, None, None, DT)
        s0, s1 = s1, s0
        trace.append((s0.joint_q.numpy().copy(), s0.joint_qd.numpy().copy()))
    return s0, trace


def polyline_distance(xs, zs, x, z):
    """Distance of the points (x, z) to the profile through (xs, zs) (the terrain of ts.profile_mesh)."""
    p = np.stack([x, z], -1)[:, None, :]
    a = np.stack([xs[:-1], zs[:-1]], -1)[None]
    e = np.stack([np.diff(xs), np.diff(zs)], -1)[None]
    t = np.clip(np.sum((p - a) * e, -1) / np.sum(e * e, -1), 0.0, 1.0)
    return np.linalg.norm(p - a - t[..., None] * e, axis=-1).min(axis=1)


@pytest.mark.parametrize("contact_model", ["hard", "smoothed"])
@pytest.mark.parametrize("angle_deg", [20.0, 35.0])
def test_sphere_on_mesh_incline_sticks_or_slides(contact_model, angle_deg):
    """A sphere that cannot roll (three prismatic dofs) on a tilted mesh, mu 0.5 (atan(mu) = 26.6 deg): at 20 deg it
    sticks, at 35 deg it slides 0.5 g (sin - mu cos) t^2 down the slope in t = 1 s (2 %); the frame is the face's.
    Smoothed contact (s(d) < 1) sinks by the log law of a resting sphere (-ln(kappa g dt t) / kappa = 3.9 mm at 1 s,
    test_solver_physics.py) and, sticking, creeps with it: straight down, so 1.4 mm along the slope at 20 deg."""
    angle, mu, r = math.radians(angle_deg), 0.5, 0.1
    normal = np.array([math.sin(angle), 0.0, math.cos(angle)])
    slope = np.array([math.cos(angle), 0.0, -math.sin(angle)])
    model = ts.sphere_on_terrain_model(ts.incline_mesh(angle), tuple(r * normal), r, mu=mu, translation_only=True)
    solver = SolverMoreauGS(model, contact_model=contact_model)
    state, _ = simulate(model, solver, 1.0)
    moved = state.joint_q.numpy()[:3]
    hard = contact_model == "hard"
    # hard: sliding leaves 0.2 mm of penetration, as on a tilted Newton plane (the Gauss-Seidel exit tolerance)
    assert abs(np.dot(moved, normal)) < (5e-4 if hard else 5e-3)
    if math.tan(angle) < mu:
        assert abs(np.dot(moved, slope)) < (1e-5 if hard else 2e-3)
    else:
        expected = 0.5 * G * (math.sin(angle) - mu * math.cos(angle))
        assert np.dot(moved, slope) == pytest.approx(expected, rel=0.02)
    frame = newton.Contacts(4, 0, device="cpu")
    solver.update_contacts(frame, state)
    np.testing.assert_allclose(frame.rigid_contact_normal.numpy()[0], -normal, atol=1e-6)


def _sphere_on_crease(angle, start, terrain):
    """A free frictionless sphere (r 0.1 m) at ``start`` on crease_mesh(angle), or (terrain False) between the two
    Newton planes that contain the crease's slopes."""
    builder = newton.ModelBuilder()
    cfg = newton.ModelBuilder.ShapeConfig(mu=0.0, density=0.0)
    body = builder.add_body(xform=wp.transform(tuple(start)), mass=1.0, inertia=wp.mat33(np.eye(3) * 0.004))
    builder.add_shape_sphere(body, radius=0.1, cfg=cfg)
    if terrain:
        ts.add_terrain(builder, ts.crease_mesh(angle), 0.0)
    else:
        for a in (angle, -angle):
            rot = wp.quat_from_axis_angle(wp.vec3(0.0, 1.0, 0.0), -a)
            builder.add_shape_plane(body=-1, xform=wp.transform(wp.vec3(0.0), rot), width=0.0, length=0.0, cfg=cfg)
    return builder.finalize(device="cpu")


@pytest.mark.parametrize("angle_deg", [5.0, -5.0])
def test_sphere_crosses_a_crease(angle_deg):
    """Frictionless sphere, hard contact, sliding at 0.5 m/s down into a valley (5 deg slopes) or at 1 m/s up over a
    ridge (-5 deg; v^2 / r stays below g cos, so it keeps contact around the edge, where the normal turns with the
    sphere). It crosses; its energy never grows (the valley's kink is an inelastic impact; over the ridge it wobbles
    by 1e-4 J as the contact turns around the edge, then ends lower); its centre stays at the
    radius from the surface: within 0.3 mm over the ridge, and in the valley as between the two Newton planes of its
    slopes (the same trajectory: at the kink the velocity-level model keeps the approach of the step that finds the
    second slope, 0.7 mm)."""
    angle, r, half = math.radians(angle_deg), 0.1, 2.0
    xs, zs = np.array([-half, 0.0, half]), np.array([1.0, 0.0, 1.0]) * half * math.tan(angle)
    x0, v0 = (-0.3, 0.5) if angle > 0 else (-0.4, 1.0)
    n0 = np.array([math.sin(angle), 0.0, math.cos(angle)])
    start = np.array([x0, 0.0, -x0 * math.tan(angle)]) + (r - 1e-5) * n0  # touching: active from the first step
    qd0 = [v0 * math.cos(angle), 0.0, -v0 * math.sin(angle), 0.0, 0.0, 0.0]
    model = _sphere_on_crease(angle, start, terrain=True)
    _, trace = simulate(model, SolverMoreauGS(model, contact_model="hard"), 0.8, qd0=qd0)
    q = np.array([t[0] for t in trace])
    qd = np.array([t[1] for t in trace])
    assert q[:, 0].max() > 0.1, "did not cross"
    energy = 0.5 * np.sum(qd[:, :3] ** 2, axis=1) + G * q[:, 2]
    e0 = 0.5 * v0**2 + G * start[2]
    assert energy.max() < e0 + 2e-4 and energy[-1] < e0  # 2e-4 J: 20 um of height, the transient at the ridge
    d = polyline_distance(xs, zs, q[:, 0], q[:, 2]) - r
    if angle < 0:
        assert np.abs(d).max() < 3e-4, f"distance to the ridge {d.min():.2e}..{d.max():.2e} m"
    else:
        planes = _sphere_on_crease(angle, start, terrain=False)
        _, ref = simulate(planes, SolverMoreauGS(planes, contact_model="hard"), 0.8, qd0=qd0)
        np.testing.assert_allclose(q, np.array([t[0] for t in ref]), atol=1e-6)
        assert -1e-3 < d.min() and d.max() < 1e-4


def test_box_on_a_step():
    """A box on a terrain step (5 cm): resting with its corners on the upper level 2 cm from the edge, it stays put,
    exactly as on a ground plane at the step's height (both sink 0.25 mm, the Gauss-Seidel exit tolerance on four
    redundant corners); released over the lower level 1 cm from the wall, it falls past the wall (its corners'
    closest feature, 1 cm away: no contact) and rests on the lower floor."""
    h, hz = 0.05, 0.1
    model = ts.box_on_terrain_model(ts.step_mesh(h), (0.12, 0.0, h + hz))
    state, _ = simulate(model, SolverMoreauGS(model, contact_model="hard"), 1.0)
    plane = ts.box_on_terrain_model(None, (0.12, 0.0, h + hz), ground_height=h)
    ref, _ = simulate(plane, SolverMoreauGS(plane, contact_model="hard"), 1.0)
    np.testing.assert_allclose(state.joint_q.numpy(), ref.joint_q.numpy(), atol=1e-7)
    np.testing.assert_allclose(state.joint_q.numpy()[:7], [0.12, 0.0, h + hz, 0, 0, 0, 1], atol=5e-4)

    model = ts.box_on_terrain_model(ts.step_mesh(h), (-0.11, 0.0, h + hz + 0.02))
    solver = SolverMoreauGS(model, contact_model="hard", stabilization=0.5)
    state, _ = simulate(model, solver, 1.0)
    np.testing.assert_allclose(state.joint_q.numpy()[:7], [-0.11, 0.0, hz, 0, 0, 0, 1], atol=1e-3)
    np.testing.assert_allclose(state.joint_qd.numpy(), 0.0, atol=1e-3)


@pytest.mark.parametrize("contact_model", ["hard", "smoothed", "soft", "penalty"])
def test_flat_mesh_matches_ground_plane(contact_model):
    """A flat terrain mesh at z = 0 gives the Newton ground plane's trajectory and contact report (a sphere
    landing and sliding with spin): the face frame is the plane's."""
    runs = []
    for terrain in (None, ts.grid_mesh(np.zeros((3, 3)), 2.0, origin=(-2.0, -2.0))):
        model = ts.sphere_on_terrain_model(terrain, (0.3, 0.2, 0.15), mu=0.5)
        solver = SolverMoreauGS(model, contact_model=contact_model)
        state, _ = simulate(model, solver, 0.5, qd0=[1.0, 0.5, -0.5, 0.0, 0.0, 3.0])
        contacts = newton.Contacts(4, 0, device="cpu")
        solver.update_contacts(contacts, state)
        runs.append((state.joint_q.numpy(), state.joint_qd.numpy(), contacts.rigid_contact_force.numpy()[0]))
    for a, b in zip(*runs):
        np.testing.assert_allclose(a, b, atol=1e-6)


def test_terrain_per_world():
    """Replicated worlds with a terrain each pair every sphere with its own world's terrain only (two candidates, not
    four), and the worlds stay independent: a step under one sphere leaves the other on flat ground."""
    worlds = []
    for height in (0.0, 0.05):
        one = newton.ModelBuilder()
        z = height + 0.1 - 1e-5  # touching (d < 0 despite float32 rounding): hard contact holds it from the start
        body = one.add_body(xform=wp.transform((0.3, 0.0, z)), mass=1.0, inertia=wp.mat33(np.eye(3) * 4e-3))
        one.add_shape_sphere(body, radius=0.1, cfg=newton.ModelBuilder.ShapeConfig(mu=0.5, density=0.0))
        ts.add_terrain(one, ts.step_mesh(height) if height > 0 else ts.grid_mesh(np.zeros((2, 2)), 4.0, (-2, -2)), 0.5)
        worlds.append(one)
    builder = newton.ModelBuilder()
    for one in worlds:
        builder.add_world(one)
    model = builder.finalize(device="cpu")
    solver = SolverMoreauGS(model, contact_model="hard")
    assert solver.layout.candidate_count == 2
    state, _ = simulate(model, solver, 0.5)
    np.testing.assert_allclose(state.joint_q.numpy()[[2, 9]], [0.1 - 1e-5, 0.15 - 1e-5], atol=1e-6)


def test_heightfield_matches_mesh():
    """An HFIELD shape of the 35 deg incline (Newton's heightfield, triangulated as a mesh) slides the sphere as the
    mesh incline does."""
    angle, r = math.radians(35.0), 0.1
    normal = np.array([math.sin(angle), 0.0, math.cos(angle)])
    ref = ts.sphere_on_terrain_model(ts.incline_mesh(angle), tuple(r * normal), r, translation_only=True)
    x = np.linspace(-2.0, 2.0, 5)
    hf = newton.Heightfield(data=np.tile(-x * math.tan(angle), (5, 1)), nrow=5, ncol=5, hx=2.0, hy=2.0)
    builder = newton.ModelBuilder()
    body = builder.add_link(mass=1.0, inertia=wp.mat33(np.eye(3) * 0.004))
    axes = [newton.ModelBuilder.JointDofConfig(axis=a) for a in (newton.Axis.X, newton.Axis.Y, newton.Axis.Z)]
    joint = builder.add_joint_d6(-1, body, linear_axes=axes, parent_xform=wp.transform(tuple(r * normal)))
    builder.add_articulation([joint])
    cfg = newton.ModelBuilder.ShapeConfig(mu=0.5, density=0.0)
    builder.add_shape_sphere(body, radius=r, cfg=cfg)
    builder.add_shape_heightfield(heightfield=hf, cfg=cfg)
    model = builder.finalize(device="cpu")
    a, _ = simulate(ref, SolverMoreauGS(ref, contact_model="hard"), 0.5)
    b, _ = simulate(model, SolverMoreauGS(model, contact_model="hard"), 0.5)
    np.testing.assert_allclose(b.joint_q.numpy(), a.joint_q.numpy(), atol=5e-5)
    assert np.linalg.norm(a.joint_q.numpy()) > 0.1


@wp.kernel
def _feature_distance(mesh: wp.uint64, p: wp.array(dtype=wp.vec3), a: wp.vec3, out: wp.array(dtype=float)):
    """out = (d, a . n) of the closest terrain feature to p[0] (the terms contact_jacobians differentiates)."""
    n, origin = terrain_feature_frame(mesh, p[0], 1.0)
    out[0] = wp.dot(n, p[0] - origin)
    out[1] = wp.dot(a, n)


def _pyramid_case(feature):
    """(point, its distance, its normal) 0.1 m off a face, an edge or the apex of a pyramid with 20 deg faces."""
    sn, cs = math.sin(math.radians(20.0)), math.cos(math.radians(20.0))
    h = 0.5 * sn / cs
    if feature == "face":  # the face toward -x
        n = np.array([-sn, 0.0, cs])
        return np.array([-0.25, 0.05, -0.25 * sn / cs]) + 0.1 * n, 0.1, n
    if feature == "edge":  # the edge from the apex to (0.5, 0.5, -h), along the bisector of its faces' normals
        n = np.array([sn, sn, 2.0 * cs]) / np.linalg.norm([sn, sn, 2.0 * cs])
        return 0.2 * np.array([0.5, 0.5, -h]) + 0.1 * n, 0.1, n
    p = np.array([0.02, -0.03, 0.15])  # inside the apex's cone of normals
    return p, np.linalg.norm(p), p / np.linalg.norm(p)


@pytest.mark.parametrize("feature", ["face", "edge", "vertex"])
def test_feature_distance_and_normal_gradients(feature):
    """Off a face, an edge and the apex of a pyramid: the signed distance and normal of terrain_frames.py are exact,
    and their tape gradients w.r.t. the point (through the closed forms, past Warp's mesh query) match central
    differences; grad d = n."""
    h = 0.5 * math.tan(math.radians(20.0))
    verts = np.array([[0, 0, 0], [-0.5, -0.5, -h], [0.5, -0.5, -h], [0.5, 0.5, -h], [-0.5, 0.5, -h]], np.float32)
    tris = np.array([[0, 1, 2], [0, 2, 3], [0, 3, 4], [0, 4, 1]], np.int32)
    mesh = wp.Mesh(points=wp.array(verts, dtype=wp.vec3), indices=wp.array(tris.ravel(), dtype=int))
    x0, d0, n0 = _pyramid_case(feature)
    _check_frame_values_and_gradients(mesh, x0, d0, n0, value_atol=1e-6, normal_atol=1e-5)


def _check_frame_values_and_gradients(mesh, x0, d0, n0, value_atol, normal_atol):
    """d and a . n at x0 equal d0 and a . n0; their tape gradients w.r.t. the point match central differences, and
    grad d = n0."""
    a = wp.vec3(0.3, -0.5, 0.8)
    out = wp.zeros(2, dtype=float, requires_grad=True)

    def values(x):
        wp.launch(_feature_distance, 1, inputs=[mesh.id, wp.array([x], dtype=wp.vec3), a, out])
        return out.numpy().astype(np.float64)

    np.testing.assert_allclose(values(x0), [d0, np.dot(np.array(a), n0)], atol=value_atol)
    for k in range(2):
        p = wp.array([x0], dtype=wp.vec3, requires_grad=True)
        tape = wp.Tape()
        with tape:
            wp.launch(_feature_distance, 1, inputs=[mesh.id, p, a, out])
        tape.backward(grads={out: wp.array(np.eye(2, dtype=np.float32)[k])})
        fd = [central_difference(lambda x, k=k: values(x)[k], x0, i, 1e-3) for i in range(3)]
        np.testing.assert_allclose(p.grad.numpy()[0], fd, rtol=5e-3, atol=2e-3)  # |dn/dp| ~ 1 / 2 cm: O(h^2) error
        if k == 0:
            np.testing.assert_allclose(p.grad.numpy()[0], n0, atol=normal_atol)


def _folded_heightfield(n, seed):
    """A random n x n heightfield (0.1 m cells, heights 0.02..0.10 m in 0.02 m steps, as Isaac Lab's random_rough)
    meshed as Isaac Lab's convert_height_field_to_mesh does with slope_threshold 0.75: a vertex whose neighbour (along
    x, y or the diagonal) is more than 7.5 cm higher moves one cell under it. Where such moves meet, the mesh folds:
    down-facing triangles and back-to-back vertical ones."""
    k = np.random.default_rng(seed).integers(1, 6, size=(n, n))  # height / 0.02 m; a jump > 7.5 cm is 1 -> 5
    x, y = np.meshgrid(np.arange(n) * 0.1, np.arange(n) * 0.1, indexing="ij")
    mx, my, mc = np.zeros((n, n)), np.zeros((n, n)), np.zeros((n, n))
    mx[:-1] += k[1:] - k[:-1] > 3
    mx[1:] -= k[:-1] - k[1:] > 3
    my[:, :-1] += k[:, 1:] - k[:, :-1] > 3
    my[:, 1:] -= k[:, :-1] - k[:, 1:] > 3
    mc[:-1, :-1] += k[1:, 1:] - k[:-1, :-1] > 3
    mc[1:, 1:] -= k[:-1, :-1] - k[1:, 1:] > 3
    x, y = x + 0.1 * (mx + mc * (mx == 0)), y + 0.1 * (my + mc * (my == 0))
    verts = np.stack([x, y, 0.02 * k], -1).reshape(-1, 3)
    i0 = (np.arange(n - 1)[:, None] * n + np.arange(n - 1)[None]).ravel()
    tris = np.concatenate([np.stack([i0, i0 + n + 1, i0 + 1], 1), np.stack([i0, i0 + n, i0 + n + 1], 1)])
    return verts, tris


def _closest_points(p, a, b, c):
    """Closest point of every triangle (a, b, c: (T, 3)) to every point p (P, 3): (P, T, 3) (Ericson's regions)."""
    p = p[:, None]
    ab, ac, ap, bp, cp = b - a, c - a, p - a, p - b, p - c
    d1, d2, d3, d4, d5, d6 = ((e * f).sum(-1) for e, f in ((ab, ap), (ac, ap), (ab, bp), (ac, bp), (ab, cp), (ac, cp)))
    va, vb, vc = d3 * d6 - d5 * d4, d5 * d2 - d1 * d6, d1 * d4 - d3 * d2
    with np.errstate(divide="ignore", invalid="ignore"):
        out = a + (ab * vb[..., None] + ac * vc[..., None]) / (va + vb + vc)[..., None]  # inside the face
        for on, q0, e, t in (
            ((va <= 0) & (d4 >= d3) & (d5 >= d6), b, c - b, (d4 - d3) / ((d4 - d3) + (d5 - d6))),  # edge bc
            ((vb <= 0) & (d2 >= 0) & (d6 <= 0), a, ac, d2 / (d2 - d6)),  # edge ac
            ((vc <= 0) & (d1 >= 0) & (d3 <= 0), a, ab, d1 / (d1 - d3)),  # edge ab
        ):
            out = np.where(on[..., None], q0 + t[..., None] * e, out)
    for on, q0 in (((d6 >= 0) & (d5 <= d6), c), ((d3 >= 0) & (d4 <= d3), b), ((d1 <= 0) & (d2 <= 0), a)):
        out = np.where(on[..., None], q0, out)
    return out


@wp.kernel
def _feature_frames(mesh: wp.uint64, p: wp.array(dtype=wp.vec3), out: wp.array(dtype=wp.vec4)):
    """out = (n, d) of the closest terrain feature to every point (d = n . (p - origin), the radius left out)."""
    i = wp.tid()
    n, origin = terrain_feature_frame(mesh, p[i], 1.0)
    out[i] = wp.vec4(n[0], n[1], n[2], wp.dot(n, p[i] - origin))


def test_points_above_a_folded_heightfield_are_outside():
    """Above a heightfield meshed with Isaac Lab's slope threshold (_folded_heightfield), 5 mm and 3 cm over the
    surface, every point is outside: d is its distance to the mesh and n the unit vector to it from the closest
    point, both by brute force over all triangles. The closest triangle can face away from such a point (a fold);
    Warp's pseudonormal test then says inside for about 1 % of them, which the upward ray overrules."""
    verts, tris = _folded_heightfield(16, seed=3)
    a, b, c = (verts[tris[:, k]] for k in range(3))
    normal = np.cross(b - a, c - a)
    assert (normal[:, 2] < -1e-9).sum() > 5, "the mesh should fold"
    xy = np.random.default_rng(0).uniform(0.25, 1.25, size=(1000, 2))
    # the surface height under each point: the highest non-vertical triangle over it (2D barycentrics)
    keep = np.abs(normal[:, 2]) > 1e-9
    e1, e2, r = (b - a)[keep, :2], (c - a)[keep, :2], xy[:, None] - a[keep, :2]
    det = e1[:, 0] * e2[:, 1] - e1[:, 1] * e2[:, 0]
    s = (r[..., 0] * e2[:, 1] - r[..., 1] * e2[:, 0]) / det
    t = (e1[:, 0] * r[..., 1] - e1[:, 1] * r[..., 0]) / det
    over = (s >= -1e-9) & (t >= -1e-9) & (s + t <= 1 + 1e-9)
    height = np.where(over, a[keep, 2] + s * (b - a)[keep, 2] + t * (c - a)[keep, 2], -np.inf).max(axis=1)
    area = np.linalg.norm(normal, axis=1)
    solid = area / ((b - a) ** 2 + (c - a) ** 2 + (c - b) ** 2).sum(1) >= 1e-6  # Warp skips slivers too
    mesh = wp.Mesh(
        points=wp.array(verts.astype(np.float32), dtype=wp.vec3),
        indices=wp.array(tris.astype(np.int32).ravel(), dtype=int),
    )
    for dz in (0.005, 0.03):
        p = np.concatenate([xy, height[:, None] + dz], 1)
        closest = _closest_points(p, a[solid], b[solid], c[solid])
        dist = np.linalg.norm(p[:, None] - closest, axis=-1)
        nearest = closest[np.arange(len(p)), dist.argmin(axis=1)]
        out = wp.zeros(len(p), dtype=wp.vec4)
        wp.launch(_feature_frames, len(p), inputs=[mesh.id, wp.array(p.astype(np.float32), dtype=wp.vec3), out])
        n, d = out.numpy()[:, :3].astype(np.float64), out.numpy()[:, 3].astype(np.float64)
        assert (d > 0.0).all(), f"dz {dz}: {(d <= 0.0).sum()} of {len(p)} points above the surface are inside"
        np.testing.assert_allclose(d, dist.min(axis=1), atol=1e-5)
        np.testing.assert_allclose((n * (p - nearest)).sum(1), dist.min(axis=1), atol=1e-5)


def _boxes_mesh():
    """Boxes (x range, bottom, top) over y in [0, 1], concatenated as Isaac Lab's generated stairs and boxes are,
    without a boolean union: A and B overlap (A's +x wall and the foot of B's -x wall are buried), C abuts B
    (back-to-back walls below C's top), E sits on nothing at C's height (C's +x wall faces the space under E)."""
    boxes = [((0.0, 1.0), -1.0, 0.1), ((0.6, 1.6), -1.0, 0.3), ((1.6, 2.2), -1.0, 0.2), ((2.2, 2.8), 0.2, 0.4)]
    verts, tris = [], []
    for (x0, x1), z0, z1 in boxes:
        corner = np.array([[(x0, x1)[i & 1], (0.0, 1.0)[(i >> 1) & 1], (z0, z1)[i >> 2]] for i in range(8)])
        centre = corner.mean(0)
        for a, b, c, d in ((0, 1, 3, 2), (4, 5, 7, 6), (0, 1, 5, 4), (2, 3, 7, 6), (0, 2, 6, 4), (1, 3, 7, 5)):
            for t in ((a, b, c), (a, c, d)):
                n = np.cross(corner[t[1]] - corner[t[0]], corner[t[2]] - corner[t[0]])
                if np.dot(n, corner[list(t)].mean(0) - centre) < 0.0:  # wound counter-clockwise from outside
                    t = (t[0], t[2], t[1])
                tris.append([len(verts) + k for k in t])
        verts += corner.tolist()
    return wp.Mesh(
        points=wp.array(np.array(verts, np.float32), dtype=wp.vec3),
        indices=wp.array(np.array(tris, np.int32).ravel(), dtype=int),
    )


# (point, signed distance to the union of _boxes_mesh's boxes, outward normal there), all at y = 0.5
BURIED_CASES = {
    "under A's top, in front of B's buried wall": ((0.59, 0.08), -0.02, (0, 0, 1)),
    "inside B below A's top, in front of A's buried wall": ((1.01, 0.05), -0.25, (0, 0, 1)),
    "under C's top, at the back-to-back walls": ((1.61, 0.18), -0.02, (0, 0, 1)),
    "under C's top, at its wall to the space under E": ((2.195, 0.17), -0.03, (0, 0, 1)),
    "in front of B's riser": ((0.58, 0.15), 0.02, (-1, 0, 0)),
    "pressed into B's riser": ((0.61, 0.2), -0.01, (-1, 0, 0)),
    "pressed into B's riser below A's top": ((0.61, 0.08), -math.hypot(0.01, 0.02), (-1 / 5**0.5, 0, 2 / 5**0.5)),
    "above A's top": ((0.3, 0.13), 0.03, (0, 0, 1)),
}


def test_points_near_buried_faces_of_overlapping_boxes():
    """Points in and around overlapping and abutting boxes (_boxes_mesh): inside the union near a buried wall the
    closest triangle is that wall, which faces the point or says the solid ends there; the frame must be the
    exposed surface instead (the top straight above, or the foot of the riser past the buried wall), with the
    union's signed distance and normal. A riser pressed from the front keeps its horizontal normal."""
    mesh = _boxes_mesh()
    names = list(BURIED_CASES)
    p = np.array([[BURIED_CASES[k][0][0], 0.5, BURIED_CASES[k][0][1]] for k in names], np.float32)
    out = wp.zeros(len(p), dtype=wp.vec4)
    wp.launch(_feature_frames, len(p), inputs=[mesh.id, wp.array(p, dtype=wp.vec3), out])
    for name, (n, d) in zip(names, ((o[:3], o[3]) for o in out.numpy())):
        _, d_true, n_true = BURIED_CASES[name]
        np.testing.assert_allclose(d, d_true, atol=1e-5, err_msg=name)
        np.testing.assert_allclose(n, n_true, atol=1e-5, err_msg=name)


@pytest.mark.parametrize(
    "case",
    [
        "under A's top, in front of B's buried wall",
        "under C's top, at its wall to the space under E",
        "pressed into B's riser below A's top",
    ],
)
def test_buried_face_fallback_gradients(case):
    """Where the closest triangle is buried, d and n come from the top straight above (n = e_z, constant) or from
    the foot of the riser past it (n turns with the point, the foot slides along the riser's bottom edge): their
    tape gradients w.r.t. the point match central differences, and grad d = n."""
    mesh = _boxes_mesh()
    (x, z), d0, n0 = BURIED_CASES[case]
    x0 = np.array([x, 0.5, z])
    _check_frame_values_and_gradients(mesh, x0, d0, n0, value_atol=1e-5, normal_atol=1e-4)


@pytest.mark.parametrize("contact_model", ["smoothed", "soft"])
def test_gradients_across_a_ridge(contact_model):
    """A sphere sliding (mu 0.3) over a 5 deg ridge: tape gradients of its final position and velocity w.r.t. its
    initial height and velocity against central differences, through the edge feature whose normal turns with the
    sphere (smoothed: kappa 200 / m, margin 5 cm, as test_solver_gradients.py; soft: the spring keeps contact).
    The rollout's derivative jumps where a step's closest feature switches between face and edge (dn/dp jumps from
    0 to (I - n n^T) / |p - c|, docs/contact_solver.md "Terrain contact"); the steps (3e-4 m, 3e-3 m/s) stay
    between such switches."""
    angle, r = math.radians(-5.0), 0.1
    n0 = np.array([math.sin(angle), 0.0, math.cos(angle)])
    start = np.array([-0.15, 0.0, 0.15 * math.tan(angle)]) + (r - 0.002) * n0
    model = ts.sphere_on_terrain_model(ts.crease_mesh(angle), tuple(start), r, mu=0.3, requires_grad=True)
    kwargs = {"kappa": 200.0, "margin": 0.05} if contact_model == "smoothed" else {}
    solver = SolverMoreauGS(model, contact_model=contact_model, **kwargs)
    q0 = model.joint_q.numpy()
    qd0 = np.array([1.0, 0.0, 0.0, 0.0, 0.0, 0.0])
    r_out = Rollout(model, solver, 60, DT, [1, 0, 1, 0, 0, 0, 0], [1, 0, 1, 0, 0, 0])
    states, _ = r_out.gradients(q0, qd0)
    final_x = r_out.loss(q0, qd0)
    assert final_x > 0.3, "the sphere should cross the ridge"
    gq, gqd = states[0].joint_q.grad.numpy(), states[0].joint_qd.grad.numpy()
    assert_close(gq[2], central_difference(lambda x: r_out.loss(x, qd0), q0, 2, 3e-4), 0.03, 1e-3)
    assert_close(gqd[0], central_difference(lambda x: r_out.loss(q0, x), qd0, 0, 3e-3), 0.03, 1e-3)
    assert_close(gqd[2], central_difference(lambda x: r_out.loss(q0, x), qd0, 2, 3e-3), 0.03, 1e-3)


def test_unsupported_terrain_is_refused():
    """Terrain meshes without triangles or with zero area only, heightfields on a moving body, other static shapes,
    and ellipsoids against terrain."""
    corners = np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [2.0, 0.0, 0.0]], np.float32)
    for indices, match in (([], "no triangles"), ([0, 1, 2], "only zero-area triangles")):
        mesh = newton.Mesh(vertices=corners, indices=np.array(indices, np.int32), compute_inertia=False, is_solid=False)
        with pytest.raises(ValueError, match=match):
            SolverMoreauGS(ts.sphere_on_terrain_model(mesh, (0.0, 0.0, 0.2)))

    builder = newton.ModelBuilder()
    body = builder.add_body(mass=1.0, inertia=wp.mat33(np.eye(3) * 0.01))
    builder.add_shape_sphere(body, radius=0.1)
    hf = newton.Heightfield(data=np.zeros((2, 2)), nrow=2, ncol=2)
    builder.add_shape(body=body, type=newton.GeoType.HFIELD, src=hf, cfg=newton.ModelBuilder.ShapeConfig())
    with pytest.raises(ValueError, match="terrain must be static"):
        SolverMoreauGS(builder.finalize(device="cpu"))

    builder = newton.ModelBuilder()
    body = builder.add_body(xform=wp.transform((0.0, 0.0, 1.0)), mass=1.0, inertia=wp.mat33(np.eye(3) * 0.01))
    builder.add_shape_sphere(body, radius=0.1)
    builder.add_shape_box(-1, hx=1.0, hy=1.0, hz=0.1)
    with pytest.raises(ValueError, match="only infinite ground planes and terrain"):
        SolverMoreauGS(builder.finalize(device="cpu"))

    builder = newton.ModelBuilder()
    body = builder.add_body(xform=wp.transform((0.0, 0.0, 1.0)), mass=1.0, inertia=wp.mat33(np.eye(3) * 0.01))
    builder.add_shape_ellipsoid(body, rx=0.1, ry=0.2, rz=0.3)
    ts.add_terrain(builder, ts.incline_mesh(0.1), 0.5)
    with pytest.raises(ValueError, match="ellipsoids collide with ground planes only"):
        SolverMoreauGS(builder.finalize(device="cpu"))
