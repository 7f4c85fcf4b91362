"""Host-side analysis of a newton.Model into the per-articulation layout the kernels use.

Each articulation (a tree rooted at the world) is one unit of work: its joints, dofs, bodies and
ground-contact candidate points are contiguous ranges, and its dense blocks (mass matrix, contact
Jacobian, Delassus operator) live at precomputed offsets in flat scratch arrays.
"""

from __future__ import annotations

from dataclasses import dataclass

import newton
import numpy as np
import warp as wp

from .terrain import TerrainColliders, build_terrain, is_terrain

SUPPORTED_JOINTS = {
    int(newton.JointType.PRISMATIC): "PRISMATIC",
    int(newton.JointType.REVOLUTE): "REVOLUTE",
    int(newton.JointType.FIXED): "FIXED",
    int(newton.JointType.FREE): "FREE",
    int(newton.JointType.BALL): "BALL",
    int(newton.JointType.D6): "D6",
}
COLLIDE_FLAG = int(newton.ShapeFlags.COLLIDE_SHAPES)


@wp.struct
class Topology:
    """Per-articulation ranges/offsets plus references to the model arrays the kernels read."""

    art_joint_start: wp.array(dtype=int)
    art_joint_end: wp.array(dtype=int)
    art_dof_start: wp.array(dtype=int)
    art_ndof: wp.array(dtype=int)
    art_h_off: wp.array(dtype=int)
    art_cand_start: wp.array(dtype=int)
    art_ncand: wp.array(dtype=int)
    art_j_off: wp.array(dtype=int)
    art_g_off: wp.array(dtype=int)
    art_anc_off: wp.array(dtype=int)
    art_world: wp.array(dtype=int)

    joint_type: wp.array(dtype=int)
    joint_parent: wp.array(dtype=int)
    joint_child: wp.array(dtype=int)
    joint_X_p: wp.array(dtype=wp.transform)
    joint_X_c: wp.array(dtype=wp.transform)
    joint_axis: wp.array(dtype=wp.vec3)
    joint_q_start: wp.array(dtype=int)
    joint_qd_start: wp.array(dtype=int)
    joint_anc: wp.array(dtype=int)
    body_joint: wp.array(dtype=int)
    dof_joint: wp.array(dtype=int)
    dof_coord: wp.array(dtype=int)
    # branch-induced sparsity (docs/contact_solver.md "Sparse factorisation"): per dof its ancestors (nearest
    # first) and descendants in its articulation, as ranges [start[k], start[k + 1]) of flat lists of global dofs
    dof_anc_start: wp.array(dtype=int)
    dof_anc: wp.array(dtype=int)
    dof_desc_start: wp.array(dtype=int)
    dof_desc: wp.array(dtype=int)
    body_dof: wp.array(dtype=int)  # last dof of the body's nearest ancestor-or-own joint with dofs; -1: none

    body_mass: wp.array(dtype=float)
    body_inertia: wp.array(dtype=wp.mat33)
    body_com: wp.array(dtype=wp.vec3)

    joint_armature: wp.array(dtype=float)
    joint_target_ke: wp.array(dtype=float)
    joint_target_kd: wp.array(dtype=float)
    joint_target_mode: wp.array(dtype=int)
    joint_limit_lower: wp.array(dtype=float)
    joint_limit_upper: wp.array(dtype=float)
    joint_limit_ke: wp.array(dtype=float)
    joint_limit_kd: wp.array(dtype=float)
    joint_effort_limit: wp.array(dtype=float)
    joint_velocity_limit: wp.array(dtype=float)
    joint_damping: wp.array(dtype=float)
    joint_friction: wp.array(dtype=float)
    friction_velocity: float
    joint_dof_dim: wp.array2d(dtype=int)

    cand_body: wp.array(dtype=int)
    cand_shape: wp.array(dtype=int)
    cand_plane: wp.array(dtype=int)
    cand_point: wp.array(dtype=wp.vec3)
    cand_ellipsoid: wp.array(dtype=wp.transform)
    cand_radius: wp.array(dtype=float)
    cand_normal: wp.array(dtype=wp.vec3)
    cand_origin: wp.array(dtype=wp.vec3)
    cand_t1: wp.array(dtype=wp.vec3)
    cand_t2: wp.array(dtype=wp.vec3)
    shape_mu: wp.array(dtype=float)
    gravity: wp.array(dtype=wp.vec3)


@dataclass
class Layout:
    """Sizes of the flat scratch arrays and the Warp struct handed to kernels."""

    topo: Topology
    articulation_count: int
    joint_count: int
    dof_count: int
    candidate_count: int
    h_size: int
    j_size: int
    g_size: int
    max_dofs: int
    max_candidates: int
    has_multi_dof: bool
    terrain: TerrainColliders | None = None  # None: every candidate is against a plane


def _tangents(n: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    a = np.array([1.0, 0.0, 0.0]) if abs(n[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    t1 = np.cross(n, a)
    t1 /= np.linalg.norm(t1)
    return t1, np.cross(n, t1)


CYLINDER_RIM_POINTS = 8  # per cap; lowest-point error at most radius * (1 - cos(pi / 8)) = 0.076 radius
MAX_HULL_POINTS = 64  # each candidate adds three rows to the dense per-articulation contact problem


def _hull_vertices(source, scale: np.ndarray) -> np.ndarray:
    """Vertices of the convex hull of a mesh (Newton's ``Mesh.compute_convex_hull``, scaled): the lowest point of
    any shape against a plane is a hull vertex, so these are exact ground-contact candidates for a mesh or hull."""
    if source is None or getattr(source, "vertices", None) is None:
        raise ValueError("SolverMoreauGS: a MESH / CONVEX_MESH collision shape has no source mesh vertices")
    hull = source.compute_convex_hull()
    v = np.unique(np.asarray(hull.vertices, dtype=np.float64).reshape(-1, 3), axis=0) * np.asarray(scale[:3])
    if v.shape[0] > MAX_HULL_POINTS:
        raise ValueError(
            f"SolverMoreauGS: a mesh collision shape has {v.shape[0]} convex-hull vertices (at most "
            f"{MAX_HULL_POINTS}); collide with a simplified convex hull (e.g. ModelBuilder.add_shape_convex_hull "
            "with fewer vertices) or a primitive"
        )
    return v


def _candidate_points(shape_type: int, scale: np.ndarray, xform: np.ndarray, source=None) -> tuple[list, float]:
    """Body-frame contact points of one collision shape and the radius to subtract along the normal.

    Exact against a plane for spheres, capsules, boxes and meshes / convex hulls (their hull vertices); a cylinder
    is its two cap rims sampled at CYLINDER_RIM_POINTS points each (exact standing on a cap, and lying on its side
    when a sample is lowest; otherwise the lowest point is over-estimated by at most 0.076 radius).
    """
    pos, rot = xform[:3], xform[3:7]
    tf = wp.transform(wp.vec3(*pos), wp.quat(*rot))

    def body_point(p):
        return np.array(wp.transform_point(tf, wp.vec3(*p)), dtype=np.float64)

    if shape_type == int(newton.GeoType.SPHERE):
        return [body_point((0.0, 0.0, 0.0))], float(scale[0])
    if shape_type == int(newton.GeoType.CAPSULE):
        hh = float(scale[1])
        return [body_point((0.0, 0.0, -hh)), body_point((0.0, 0.0, hh))], float(scale[0])
    if shape_type == int(newton.GeoType.BOX):
        hx, hy, hz = (float(s) for s in scale[:3])
        corners = [(sx * hx, sy * hy, sz * hz) for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)]
        return [body_point(c) for c in corners], 0.0
    if shape_type == int(newton.GeoType.CYLINDER):
        r, hh, barrel = (float(s) for s in scale[:3])
        if barrel != 0.0:
            raise ValueError("SolverMoreauGS: barrel-shaped cylinders (barrel_radius != 0) are not supported")
        angles = 2.0 * np.pi * np.arange(CYLINDER_RIM_POINTS) / CYLINDER_RIM_POINTS
        rim = [(r * np.cos(a), r * np.sin(a), z) for z in (-hh, hh) for a in angles]
        return [body_point(p) for p in rim], 0.0
    if shape_type in (int(newton.GeoType.MESH), int(newton.GeoType.CONVEX_MESH)):
        return [body_point(p) for p in _hull_vertices(source, scale)], 0.0
    name = newton.GeoType(shape_type).name
    raise ValueError(
        f"SolverMoreauGS: collision shape type {name} is not supported (sphere, capsule, box, cylinder, ellipsoid, "
        "mesh and convex hull collide with ground planes and terrain); clear its COLLIDE_SHAPES flag or replace it"
    )


IDENTITY_QUAT = (0.0, 0.0, 0.0, 1.0)


def _candidates(shape_type: int, scale: np.ndarray, xform: np.ndarray, source=None) -> tuple[list, float, tuple, tuple]:
    """(points, radius, semi-axes, rotation) of one collision shape: fixed body points (_candidate_points, zero
    semi-axes), or for an ellipsoid one support candidate at its centre with its semi-axes and orientation
    (support.py)."""
    if shape_type == int(newton.GeoType.ELLIPSOID):
        return [np.asarray(xform[:3], dtype=np.float64)], 0.0, tuple(float(v) for v in scale[:3]), tuple(xform[3:7])
    pts, radius = _candidate_points(shape_type, scale, xform, source)
    return pts, radius, (0.0, 0.0, 0.0), IDENTITY_QUAT


def _check_d6_axes(model: newton.Model) -> None:
    """D6 joints: at most three linear and three angular axes; two or three angular axes must be orthonormal
    (the transported-axis composition assumes it, as Newton's forward kinematics does)."""
    jt = model.joint_type.numpy()
    d6 = np.nonzero(jt == int(newton.JointType.D6))[0]
    if d6.size == 0:
        return
    dims = model.joint_dof_dim.numpy()
    qd_start = model.joint_qd_start.numpy()
    axes = model.joint_axis.numpy()
    for j in d6:
        nlin, nang = int(dims[j, 0]), int(dims[j, 1])
        if nlin > 3 or nang > 3:
            raise ValueError(f"SolverMoreauGS: D6 joint {j} has {nlin} linear and {nang} angular axes (at most 3 each)")
        ang = axes[qd_start[j] + nlin : qd_start[j] + nlin + nang]
        if nang >= 2 and not np.allclose(ang @ ang.T, np.eye(nang), atol=1e-5):
            raise ValueError(
                f"SolverMoreauGS: D6 joint {j} has angular axes {ang.tolist()}; two or three angular axes must be "
                "orthonormal"
            )


def _groups_collide(a: int, b: int) -> bool:
    """Newton's collision-group rule: 0 never collides, equal positive groups collide, a negative group collides
    with every group except itself."""
    if a == 0 or b == 0:
        return False
    if a > 0:
        return a == b or b < 0
    return a != b


def _dof_tree(n_dofs: int, n_bodies: int, jp, jc, qd_start, body_joint):
    """Dof-level tree of all articulations: the parent of a joint's first dof is the last dof of the nearest
    ancestor joint with dofs, each further dof of a multi-dof joint hangs below the previous one. Dofs are numbered
    in topological order, so ancestors have smaller indices. Returns (anc_start, anc, desc_start, desc, body_dof)."""
    body_dof = np.full(max(n_bodies, 1), -1, dtype=np.int32)
    parent = np.full(max(n_dofs, 1), -1, dtype=np.int64)
    for b in range(n_bodies):  # bodies' joints in any order: walk up to the first joint with dofs
        k = b
        while k >= 0:
            j = body_joint[k]
            if qd_start[j + 1] > qd_start[j]:
                body_dof[b] = qd_start[j + 1] - 1
                break
            k = jp[j]
    for j in range(len(jc)):
        above = body_dof[jp[j]] if jp[j] >= 0 else -1
        for d in range(qd_start[j], qd_start[j + 1]):
            parent[d] = above
            above = d
    anc = [[] for _ in range(max(n_dofs, 1))]
    desc = [[] for _ in range(max(n_dofs, 1))]
    for d in range(n_dofs):
        k = parent[d]
        while k >= 0:
            if k >= d:
                raise ValueError("SolverMoreauGS: dofs are not in topological order")
            anc[d].append(k)
            desc[k].append(d)
            k = parent[k]

    def flatten(lists):
        start = np.concatenate([[0], np.cumsum([len(x) for x in lists])]).astype(np.int32)
        flat = np.array([v for x in lists for v in x] or [0], dtype=np.int32)
        return start, flat

    anc_start, anc_flat = flatten(anc)
    desc_start, desc_flat = flatten(desc)
    return anc_start, anc_flat, desc_start, desc_flat, body_dof


def build_layout(model: newton.Model, friction_velocity: float = 1.0e-3) -> Layout:
    """Validate ``model`` and build the per-articulation layout. Raises ValueError on unsupported scenes.

    ``friction_velocity`` [m/s or rad/s] is the regularisation velocity of joint friction (joints.passive_joint_force).
    """
    device = model.device
    jt = model.joint_type.numpy()
    jp = model.joint_parent.numpy()
    jc = model.joint_child.numpy()
    q_start = model.joint_q_start.numpy()
    qd_start = model.joint_qd_start.numpy()
    n_joints = model.joint_count
    n_bodies = model.body_count
    if model.articulation_count == 0 or n_bodies == 0:
        raise ValueError("SolverMoreauGS: the model has no articulations (add bodies with ModelBuilder)")
    art_start = model.articulation_start.numpy()

    for j in range(n_joints):
        if int(jt[j]) not in SUPPORTED_JOINTS:
            raise ValueError(
                f"SolverMoreauGS: joint {j} has type {newton.JointType(int(jt[j])).name}; supported joint types "
                f"are {sorted(SUPPORTED_JOINTS.values())}"
            )
        if int(jt[j]) == int(newton.JointType.FREE) and jp[j] != -1:
            raise ValueError(f"SolverMoreauGS: FREE joint {j} must connect its body to the world (parent -1)")
    _check_d6_axes(model)

    body_joint = np.full(n_bodies, -1, dtype=np.int32)
    for j in range(n_joints):
        if body_joint[jc[j]] != -1:
            raise ValueError(f"SolverMoreauGS: body {jc[j]} is the child of two joints (loops are not supported)")
        body_joint[jc[j]] = j
    if (body_joint < 0).any():
        raise ValueError(
            f"SolverMoreauGS: bodies {np.nonzero(body_joint < 0)[0].tolist()} have no joint; every body must "
            "belong to an articulation"
        )

    n_art = model.articulation_count
    joint_art = np.full(n_joints, -1, dtype=np.int64)
    for a in range(n_art):
        joint_art[art_start[a] : art_start[a + 1]] = a
    if (joint_art < 0).any():
        raise ValueError("SolverMoreauGS: some joints belong to no articulation")

    art_world = model.articulation_world.numpy() if model.articulation_world is not None else np.zeros(n_art)
    art_world = np.maximum(art_world, 0).astype(np.int32)

    # ground planes and contact candidates
    shape_flags = model.shape_flags.numpy()
    shape_body = model.shape_body.numpy()
    shape_type = model.shape_type.numpy()
    shape_scale = model.shape_scale.numpy()
    shape_tf = model.shape_transform.numpy()
    shape_world = model.shape_world.numpy() if model.shape_world is not None else np.full(model.shape_count, -1)
    planes = []
    terrains = []
    colliders = []
    for s in range(model.shape_count):
        if not (int(shape_flags[s]) & COLLIDE_FLAG):
            continue
        if int(shape_type[s]) == int(newton.GeoType.PLANE):
            if shape_body[s] != -1:
                raise ValueError(
                    f"SolverMoreauGS: plane shape {s} is attached to body {shape_body[s]}; planes must be static"
                )
            if np.any(np.abs(shape_scale[s][:2]) > 0.0):
                raise ValueError(
                    f"SolverMoreauGS: plane shape {s} is finite (size {shape_scale[s][:2]}); only infinite ground "
                    "planes are supported"
                )
            planes.append(s)
        elif shape_body[s] == -1 and is_terrain(int(shape_type[s])):
            terrains.append(s)
        elif shape_body[s] == -1:
            raise ValueError(
                f"SolverMoreauGS: static shape {s} of type {newton.GeoType(int(shape_type[s])).name} collides; "
                "only infinite ground planes and terrain (triangle MESH or HFIELD shapes) may be static colliders"
            )
        elif int(shape_type[s]) == int(newton.GeoType.HFIELD):
            raise ValueError(
                f"SolverMoreauGS: heightfield shape {s} is attached to body {shape_body[s]}; terrain must be static "
                "(body -1)"
            )
        else:
            colliders.append(s)

    body_art = joint_art[body_joint]
    shape_group = model.shape_collision_group.numpy()
    shape_margin = model.shape_margin.numpy() if model.shape_margin is not None else np.zeros(model.shape_count)
    filtered = model.shape_collision_filter_pairs
    per_art_cands: list[list] = [[] for _ in range(n_art)]
    for s in colliders:
        b = int(shape_body[s])
        a = int(body_art[b])
        pts, radius, axes, srot = _candidates(int(shape_type[s]), shape_scale[s], shape_tf[s], model.shape_source[s])
        for p in planes:
            # surface margins inflate both shapes; Newton sums them
            r_contact = radius + float(shape_margin[s]) + float(shape_margin[p])
            if shape_world[p] not in (-1, art_world[a]):
                continue
            if not _groups_collide(int(shape_group[s]), int(shape_group[p])) or (min(s, p), max(s, p)) in filtered:
                continue
            ptf = shape_tf[p]
            rot = wp.quat(*ptf[3:7])
            n = np.array(wp.quat_rotate(rot, wp.vec3(0.0, 0.0, 1.0)), dtype=np.float64)
            t1, t2 = _tangents(n)
            for pt in pts:
                per_art_cands[a].append((b, s, p, pt, r_contact, n, ptf[:3], t1, t2, axes, srot, -1))
        for k, g in enumerate(terrains):
            if shape_world[g] not in (-1, art_world[a]):
                continue
            if not _groups_collide(int(shape_group[s]), int(shape_group[g])) or (min(s, g), max(s, g)) in filtered:
                continue
            if axes[0] > 0.0:
                raise ValueError(
                    f"SolverMoreauGS: ellipsoid shape {s} collides with terrain shape {g}; ellipsoids collide with "
                    "ground planes only (filter the pair, or use a sphere, capsule or box)"
                )
            # the frame (n, origin, t1, t2) of a terrain candidate is found per step (terrain_frames.py)
            r_contact = radius + float(shape_margin[s]) + float(shape_margin[g])
            up, zero = np.array([0.0, 0.0, 1.0]), np.zeros(3)
            for pt in pts:
                per_art_cands[a].append((b, s, g, pt, r_contact, up, zero, *_tangents(up), axes, srot, k))

    # offsets
    ndof = np.array([qd_start[art_start[a + 1]] - qd_start[art_start[a]] for a in range(n_art)], dtype=np.int32)
    ncand = np.array([len(c) for c in per_art_cands], dtype=np.int32)
    njoint = np.diff(art_start).astype(np.int32)
    m_rows = 3 * ncand

    def offsets(sizes):
        return np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int32), int(np.sum(sizes))

    h_off, h_size = offsets(ndof * ndof)
    j_off, j_size = offsets(m_rows * ndof)
    g_off, g_size = offsets(m_rows * m_rows)
    anc_off, anc_size = offsets(njoint * njoint)
    cand_start, n_cand = offsets(ncand)

    joint_anc = np.zeros(max(anc_size, 1), dtype=np.int32)
    for a in range(n_art):
        j0, nj = art_start[a], njoint[a]
        for j in range(j0, j0 + nj):
            k = j
            while True:
                if k < j0 or k >= j0 + nj:
                    raise ValueError(f"SolverMoreauGS: joint {j} has an ancestor outside its articulation")
                if k > j:
                    raise ValueError(f"SolverMoreauGS: joints of articulation {a} are not in topological order")
                joint_anc[anc_off[a] + (k - j0) * nj + (j - j0)] = 1
                parent_body = jp[k]
                if parent_body < 0:
                    break
                k = body_joint[parent_body]

    dof_joint = np.zeros(max(model.joint_dof_count, 1), dtype=np.int32)
    dof_coord = np.zeros(max(model.joint_dof_count, 1), dtype=np.int32)
    for j in range(n_joints):
        for i, d in enumerate(range(qd_start[j], qd_start[j + 1])):
            dof_joint[d] = j
            dof_coord[d] = q_start[j] + i

    dof_anc_start, dof_anc, dof_desc_start, dof_desc, body_dof = _dof_tree(
        model.joint_dof_count, n_bodies, jp, jc, qd_start, body_joint
    )

    z3 = np.zeros(3)
    flat = [c for cands in per_art_cands for c in cands] or [
        (0, 0, 0, z3, 0.0, z3, z3, z3, z3, (0.0, 0.0, 0.0), IDENTITY_QUAT, -1)
    ]

    def arr(values, dtype):
        return wp.array(np.asarray(values), dtype=dtype, device=device)

    def vec3s(idx):
        return wp.array(np.array([c[idx] for c in flat], dtype=np.float32).reshape(-1, 3), dtype=wp.vec3, device=device)

    t = Topology()
    t.art_joint_start = arr(art_start[:-1].astype(np.int32), int)
    t.art_joint_end = arr(art_start[1:].astype(np.int32), int)
    t.art_dof_start = arr(np.array([qd_start[art_start[a]] for a in range(n_art)], dtype=np.int32), int)
    t.art_ndof = arr(ndof, int)
    t.art_h_off = arr(h_off, int)
    t.art_cand_start = arr(cand_start, int)
    t.art_ncand = arr(ncand, int)
    t.art_j_off = arr(j_off, int)
    t.art_g_off = arr(g_off, int)
    t.art_anc_off = arr(anc_off, int)
    t.art_world = arr(art_world, int)
    t.joint_type = model.joint_type
    t.joint_parent = model.joint_parent
    t.joint_child = model.joint_child
    t.joint_X_p = model.joint_X_p
    t.joint_X_c = model.joint_X_c
    t.joint_axis = model.joint_axis
    t.joint_q_start = model.joint_q_start
    t.joint_qd_start = model.joint_qd_start
    t.joint_anc = arr(joint_anc, int)
    t.body_joint = arr(body_joint, int)
    t.dof_joint = arr(dof_joint, int)
    t.dof_coord = arr(dof_coord, int)
    t.dof_anc_start = arr(dof_anc_start, int)
    t.dof_anc = arr(dof_anc, int)
    t.dof_desc_start = arr(dof_desc_start, int)
    t.dof_desc = arr(dof_desc, int)
    t.body_dof = arr(body_dof, int)
    t.body_mass = model.body_mass
    t.body_inertia = model.body_inertia
    t.body_com = model.body_com
    t.joint_armature = model.joint_armature
    t.joint_target_ke = model.joint_target_ke
    t.joint_target_kd = model.joint_target_kd
    t.joint_target_mode = model.joint_target_mode
    t.joint_limit_lower = model.joint_limit_lower
    t.joint_limit_upper = model.joint_limit_upper
    t.joint_limit_ke = model.joint_limit_ke
    t.joint_limit_kd = model.joint_limit_kd
    t.joint_effort_limit = model.joint_effort_limit
    t.joint_velocity_limit = model.joint_velocity_limit
    t.joint_damping = model.joint_damping
    t.joint_friction = model.joint_friction
    t.friction_velocity = float(friction_velocity)
    t.joint_dof_dim = model.joint_dof_dim
    t.cand_body = arr(np.array([c[0] for c in flat], dtype=np.int32), int)
    t.cand_shape = arr(np.array([c[1] for c in flat], dtype=np.int32), int)
    t.cand_plane = arr(np.array([c[2] for c in flat], dtype=np.int32), int)
    t.cand_point = vec3s(3)
    # (semi-axes, orientation in the body) of ellipsoid candidates; zero semi-axes mark fixed-point candidates
    t.cand_ellipsoid = wp.array(
        np.array([(*c[9], *c[10]) for c in flat], dtype=np.float32).reshape(-1, 7), dtype=wp.transform, device=device
    )
    t.cand_radius = arr(np.array([c[4] for c in flat], dtype=np.float32), float)
    t.cand_normal = vec3s(5)
    t.cand_origin = vec3s(6)
    t.cand_t1 = vec3s(7)
    t.cand_t2 = vec3s(8)
    t.shape_mu = model.shape_material_mu
    t.gravity = model.gravity
    return Layout(
        topo=t,
        articulation_count=n_art,
        joint_count=n_joints,
        dof_count=model.joint_dof_count,
        candidate_count=n_cand,
        h_size=max(h_size, 1),
        j_size=max(j_size, 1),
        g_size=max(g_size, 1),
        max_dofs=int(ndof.max()),
        max_candidates=int(ncand.max()),
        has_multi_dof=bool(np.isin(jt, (int(newton.JointType.BALL), int(newton.JointType.D6))).any()),
        terrain=build_terrain(model, terrains, np.array([c[11] for c in flat], dtype=np.int32), device),
    )
