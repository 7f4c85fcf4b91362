"""Per-step contact frames (n, origin, t1, t2) of the candidates: fixed for ground planes, from the closest terrain
feature for terrain candidates (docs/contact_solver.md "Terrain contact").

contact_jacobians then takes d = n . (p - origin) - radius for every candidate. For a terrain candidate at world
point p the BVH query (wp.mesh_query_point_sign_normal) picks the closest triangle and where on it the closest point
lies: inside the face, n is the face normal and origin a face vertex (d is the face-plane distance); on an edge or a
vertex, origin is the closest point c on that feature and n = s (p - c) / |p - c| with s = -1 inside the terrain
(angle-weighted pseudonormal test), so d = s |p - c| - radius. A point with no terrain straight above it (+z) is
outside whatever the closest triangle says: on a folded mesh (down-facing or back-to-back triangles, as Isaac Lab's
heightfield conversion makes with a slope threshold) that triangle can face away from a point above the surface.
Feature and sign are piecewise constant; n and origin are differentiated through the closed forms below (not through
the query's barycentrics).
"""

import warp as wp

from .kernel_options import module_options
from .support import candidate_world_point
from .terrain import Terrain
from .topology import Topology

wp.set_module_options(module_options(enable_backward=True))

BARYCENTRIC_EPS = wp.constant(1.0e-6)  # a barycentric weight at or below this is on the face's boundary
FEATURE_EPS = wp.constant(1.0e-9)  # [m] |p - c| below this: p is on the feature, take the face normal
ABOVE_RAY_LENGTH = wp.constant(1.0e6)  # [m] the upward ray of terrain_above (unbounded in practice)


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
    """Whether the terrain lies straight above p: an upward ray from p hits a triangle. Without it p is outside."""
    return wp.mesh_query_ray_anyhit(mesh_id, p, wp.vec3(0.0, 0.0, 1.0), ABOVE_RAY_LENGTH)


@wp.func
def terrain_feature_frame(mesh_id: wp.uint64, p: wp.vec3, max_dist: float):
    """(n, origin) of the closest terrain feature to p within max_dist; none within reach: n = e_z and an origin
    max_dist below p (d = max_dist - radius, out of contact)."""
    q = wp.mesh_query_point_sign_normal(mesh_id, p, max_dist)
    up = wp.vec3(0.0, 0.0, 1.0)
    if not q.result:
        return up, p - max_dist * up
    m = wp.mesh_get(mesh_id)
    v0 = m.points[m.indices[3 * q.face]]
    v1 = m.points[m.indices[3 * q.face + 1]]
    v2 = m.points[m.indices[3 * q.face + 2]]
    face_n = wp.normalize(wp.cross(v1 - v0, v2 - v0))
    u = q.u
    v = q.v
    w = 1.0 - u - v
    if u > BARYCENTRIC_EPS and v > BARYCENTRIC_EPS and w > BARYCENTRIC_EPS:
        if wp.dot(face_n, p - v0) < 0.0:
            if not terrain_above(mesh_id, p):
                return -face_n, v0  # behind a folded face but outside
        return face_n, v0
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
    if length < FEATURE_EPS:
        return face_n, c
    s = 1.0
    if q.sign < 0.0:
        if terrain_above(mesh_id, p):
            s = -1.0
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
