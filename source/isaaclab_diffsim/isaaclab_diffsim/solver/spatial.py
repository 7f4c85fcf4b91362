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
