"""Per-step contact frames (n, origin, t1, t2) of the candidates: fixed for ground planes, from the closest terrain
feature for terrain candidates (docs/contact_solver.md "Terrain contact").

contact_jacobians then takes d = n . (p - origin) - radius for every candidate. The terrain is a height field: a
point is inside exactly when terrain lies straight above it (an upward ray hits the mesh). For a terrain candidate
at world point p the BVH query (wp.mesh_query_point_no_sign) picks the closest triangle and where on it the closest
point c lies: inside the face, n is the face normal (turned toward p outside, away from p inside) and origin a face
vertex (d is the face-plane distance); on an edge or a vertex, origin is c and n = s (p - c) / |p - c| with s = -1
inside, so d = s |p - c| - radius. Inside, c must be exposed: a point just past c (away from p) must be outside.
Otherwise c is buried (a wall or top of one box inside another, or a wall facing the space under an overhang, as in
Isaac Lab's generated stairs and boxes) and the frame is the nearer of two exits: the surface straight above p (the
first face a downward ray from max_dist above p hits, its normal turned up), or the surface above the point past c,
taken at c (the foot of a riser). Feature, sign, burial and exit are piecewise constant; n and origin are
differentiated through the closed forms below (not through the queries' barycentrics or hit distances).
"""

import warp as wp

from .kernel_options import module_options
from .support import candidate_world_point
from .terrain import Terrain
from .topology import Topology

wp.set_module_options(module_options(enable_backward=True))

BARYCENTRIC_EPS = wp.constant(1.0e-6)  # a barycentric weight at or below this is on the face's boundary
FEATURE_EPS = wp.constant(1.0e-9)  # [m] |p - c| below this: p is on the feature, take the face normal
EXPOSED_EPS = wp.constant(1.0e-4)  # [m] how far past the closest point the exposed test looks
ABOVE_RAY_LENGTH = wp.constant(1.0e6)  # [m] the upward ray of terrain_above (unbounded in practice)
BIG_DEPTH = wp.constant(1.0e30)  # [m] no surface within reach straight above


@wp.func
def terrain_tangents(n: wp.vec3):
    """(t1, t2) of a unit normal: the frame (e_y, -e_x) of the ground plane n = e_z carried by the rotation that
    takes e_z to n along the great circle, a smooth function of n except at n = -e_z (a fixed frame there)."""
    if n[2] < -0.999999:
        return wp.vec3(0.0, 1.0, 0.0), wp.vec3(1.0, 0.0, 0.0)
    a = 1.0 / (1.0 + n[2])
    b = -n[0] * n[1] * a
    return wp.vec3(b, 1.0 - n[1] * n[1] * a, -n[1]), wp.vec3(n[0] * n[0] * a - 1.0, -b, n[0])


@wp.func
def segment_closest(p: wp.vec3, a: wp.vec3, b: wp.vec3):
    """Closest point to p on the segment ab."""
    e = b - a
    t = wp.clamp(wp.dot(p - a, e) / wp.dot(e, e), 0.0, 1.0)
    return a + t * e


@wp.func
def terrain_above(mesh_id: wp.uint64, p: wp.vec3):
    """Whether p is inside the terrain: an upward ray from p hits a triangle."""
    return wp.mesh_query_ray_anyhit(mesh_id, p, wp.vec3(0.0, 0.0, 1.0), ABOVE_RAY_LENGTH)


@wp.func
def face_unit_normal(mesh_id: wp.uint64, face: int):
    """Unit normal of a triangle (counter-clockwise winding) and its first vertex."""
    m = wp.mesh_get(mesh_id)
    v0 = m.points[m.indices[3 * face]]
    v1 = m.points[m.indices[3 * face + 1]]
    v2 = m.points[m.indices[3 * face + 2]]
    return wp.normalize(wp.cross(v1 - v0, v2 - v0)), v0


@wp.func
def surface_above(mesh_id: wp.uint64, x: wp.vec3, reach: float):
    """The terrain surface straight above x within reach (the first face a ray cast down from reach above x hits):
    (found, its unit normal turned up, its first vertex)."""
    up = wp.vec3(0.0, 0.0, 1.0)
    hit = wp.mesh_query_ray(mesh_id, x + reach * up, -up, reach)
    n = up
    v0 = x
    if hit.result:
        n, v0 = face_unit_normal(mesh_id, hit.face)
        if n[2] < 0.0:
            n = -n
    return hit.result, n, v0


@wp.func
def terrain_feature_frame(mesh_id: wp.uint64, p: wp.vec3, max_dist: float):
    """(n, origin) of the closest terrain feature to p within max_dist (the surface straight above p when that
    feature is buried); none within reach: n = e_z and an origin max_dist below p (d = max_dist - radius, out of
    contact)."""
    q = wp.mesh_query_point_no_sign(mesh_id, p, max_dist)
    up = wp.vec3(0.0, 0.0, 1.0)
    if not q.result:
        return up, p - max_dist * up
    m = wp.mesh_get(mesh_id)
    face_n, v0 = face_unit_normal(mesh_id, q.face)
    v1 = m.points[m.indices[3 * q.face + 1]]
    v2 = m.points[m.indices[3 * q.face + 2]]
    u = q.u
    v = q.v
    w = 1.0 - u - v
    on_face = u > BARYCENTRIC_EPS and v > BARYCENTRIC_EPS and w > BARYCENTRIC_EPS
    side = wp.dot(face_n, p - v0)
    c = p - side * face_n
    if not on_face:
        c = v0
        if v > BARYCENTRIC_EPS and w > BARYCENTRIC_EPS:
            c = segment_closest(p, v1, v2)
        elif u > BARYCENTRIC_EPS and w > BARYCENTRIC_EPS:
            c = segment_closest(p, v0, v2)
        elif u > BARYCENTRIC_EPS and v > BARYCENTRIC_EPS:
            c = segment_closest(p, v0, v1)
        elif v > BARYCENTRIC_EPS:
            c = v1
        elif w > BARYCENTRIC_EPS:
            c = v2
    delta = p - c
    length = wp.length(delta)
    s = 1.0
    if terrain_above(mesh_id, p):
        s = -1.0
        beyond = c - (EXPOSED_EPS / wp.max(length, FEATURE_EPS)) * delta
        if length >= FEATURE_EPS and terrain_above(mesh_id, beyond):
            # c is buried: exit straight up from p (onto a tread), or up the far side of c (the foot of a riser)
            found, top_n, top_v0 = surface_above(mesh_id, p, max_dist)
            depth = float(BIG_DEPTH)
            if found:
                depth = -wp.dot(top_n, p - top_v0)
            far, far_n, far_v0 = surface_above(mesh_id, beyond, max_dist)
            if far:
                e = c + (wp.dot(far_n, far_v0 - c) / wp.max(far_n[2], FEATURE_EPS)) * up
                reach = wp.length(e - p)
                if reach < depth:
                    return (e - p) / reach, e
            if found:
                return top_n, top_v0
    if on_face:
        if side * s < 0.0:
            return -face_n, v0
        return face_n, v0
    if length < FEATURE_EPS:
        return face_n, c
    return (s / length) * delta, c


@wp.kernel
def contact_frames(
    topo: Topology,
    terrain: Terrain,
    body_X: wp.array(dtype=wp.transform),
    cand_offset: int,
    frame_n: wp.array(dtype=wp.vec3),
    frame_origin: wp.array(dtype=wp.vec3),
    frame_t1: wp.array(dtype=wp.vec3),
    frame_t2: wp.array(dtype=wp.vec3),
):
    """The contact frame of every candidate at the body poses body_X: a plane's fixed frame, or the closest terrain
    feature's (terrain_feature_frame) with terrain_tangents; candidate ``cand_offset + tid``."""
    ci = wp.tid() + cand_offset
    k = terrain.cand_terrain[ci]
    if k < 0:
        frame_n[ci] = topo.cand_normal[ci]
        frame_origin[ci] = topo.cand_origin[ci]
        frame_t1[ci] = topo.cand_t1[ci]
        frame_t2[ci] = topo.cand_t2[ci]
    else:
        p = candidate_world_point(topo, ci, body_X[topo.cand_body[ci]])
        n, origin = terrain_feature_frame(terrain.mesh[k], p, topo.cand_radius[ci] + terrain.query_distance)
        t1, t2 = terrain_tangents(n)
        frame_n[ci] = n
        frame_origin[ci] = origin
        frame_t1[ci] = t1
        frame_t2[ci] = t2
