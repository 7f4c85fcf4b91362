"""Spatial-algebra helpers (Warp functions) in world frame, twists referenced at the world origin.

Convention (Newton's ordering): a twist is ``(v_o, w)`` with ``v_o`` the velocity of the body point
currently at the world origin, a wrench is ``(f, n_o)`` with ``n_o`` the moment about the origin.
A rigid-body inertia about the origin is kept as ``(m, h, I_o)`` with ``h = m c`` (first moment)
and ``I_o = I_c - m [c]x [c]x``; composite inertias are plain sums of these three parts.
"""

import warp as wp

from .kernel_options import module_options

wp.set_module_options(module_options(enable_backward=True))


@wp.func
def motion_cross(a: wp.spatial_vector, b: wp.spatial_vector):
    """a x_m b for twists (lin, ang)."""
    va = wp.spatial_top(a)
    wa = wp.spatial_bottom(a)
    vb = wp.spatial_top(b)
    wb = wp.spatial_bottom(b)
    return wp.spatial_vector(wp.cross(wa, vb) + wp.cross(va, wb), wp.cross(wa, wb))


@wp.func
def force_cross(a: wp.spatial_vector, f: wp.spatial_vector):
    """a x_f f (dual cross product) for a twist a and a wrench f."""
    va = wp.spatial_top(a)
    wa = wp.spatial_bottom(a)
    fl = wp.spatial_top(f)
    fa = wp.spatial_bottom(f)
    return wp.spatial_vector(wp.cross(wa, fl), wp.cross(wa, fa) + wp.cross(va, fl))


@wp.func
def inertia_mul(m: float, h: wp.vec3, i_o: wp.mat33, v: wp.spatial_vector):
    """Spatial inertia (m, h = m c, I_o) times twist v: momentum (m v_o + w x h, h x v_o + I_o w)."""
    vo = wp.spatial_top(v)
    w = wp.spatial_bottom(v)
    return wp.spatial_vector(m * vo + wp.cross(w, h), wp.cross(h, vo) + i_o * w)


@wp.func
def point_velocity_column(s: wp.spatial_vector, x: wp.vec3):
    """Velocity of world point x produced by unit motion along twist s: v_o + w x x."""
    return wp.spatial_top(s) + wp.cross(wp.spatial_bottom(s), x)


@wp.func
def quat_torque(r: wp.quat, g: wp.quat):
    """The torque conjugate to a world rotation dtheta of a pose whose quaternion r (dr = 0.5 (dtheta, 0) r) has
    the adjoint g."""
    rv = wp.vec3(r[0], r[1], r[2])
    gv = wp.vec3(g[0], g[1], g[2])
    return 0.5 * (r[3] * gv + wp.cross(rv, gv) - g[3] * rv)


@wp.func
def add_free_joint_q_adjoint(
    X_pj: wp.transform, q: wp.array(dtype=float), qs: int, phi: wp.spatial_vector, q_grad: wp.array(dtype=float)
):
    """Add to ``q_grad`` the adjoint of a root free joint's coordinates q[qs:qs+7] (position in the joint's parent
    frame X_pj, then quaternion) given the wrench ``phi`` on its body's motion: the position moves the body by
    (R_pj dp, 0), the quaternion rotates it by dtheta_w = R_pj 2 vec(dr r*) about the joint origin o (the twist
    (o x dtheta_w, dtheta_w)); the quaternion gets the tangent part only."""
    Rp = wp.transform_get_rotation(X_pj)
    o = wp.transform_point(X_pj, wp.vec3(q[qs], q[qs + 1], q[qs + 2]))
    gp = wp.quat_rotate_inv(Rp, wp.spatial_top(phi))
    g_theta = wp.quat_rotate_inv(Rp, wp.spatial_bottom(phi) + wp.cross(wp.spatial_top(phi), o))
    qv = wp.vec3(q[qs + 3], q[qs + 4], q[qs + 5])
    g_rv = 2.0 * (q[qs + 6] * g_theta + wp.cross(g_theta, qv))
    for i in range(3):
        q_grad[qs + i] = q_grad[qs + i] + gp[i]
        q_grad[qs + 3 + i] = q_grad[qs + 3 + i] + g_rv[i]
    q_grad[qs + 6] = q_grad[qs + 6] - 2.0 * wp.dot(g_theta, qv)
