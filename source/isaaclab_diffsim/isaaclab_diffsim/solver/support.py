"""World position of a ground-contact candidate: a fixed body point, or the support point of an ellipsoid.

A fixed point (spheres, capsules, box corners, cylinder rims, hull vertices) moves with its body. An ellipsoid
has one candidate whose point is the ellipsoid's lowest point along the plane normal n, found in closed form:
in the ellipsoid's frame, with semi-axes A = diag(a, b, c) and m = -n, p = A^2 m / |A m|. The signed distance
d = n . (p - origin) is then the exact plane distance of the ellipsoid, and its derivative is the one of the moving
support point (by the envelope theorem, the same as holding the point fixed on the body).
"""

import warp as wp

from .kernel_options import module_options
from .topology import Topology

wp.set_module_options(module_options(enable_backward=True))


@wp.func
def candidate_world_point(topo: Topology, ci: int, X_b: wp.transform):
    """World point of candidate ci on a body at pose X_b (before subtracting the candidate's radius)."""
    p = wp.transform_point(X_b, topo.cand_point[ci])
    ellipsoid = topo.cand_ellipsoid[ci]
    ax = wp.transform_get_translation(ellipsoid)  # semi-axes; zero for a fixed point
    if ax[0] > 0.0:
        q_s = wp.transform_get_rotation(X_b) * wp.transform_get_rotation(ellipsoid)
        m = wp.quat_rotate_inv(q_s, -topo.cand_normal[ci])
        am = wp.cw_mul(ax, m)
        p = p + wp.quat_rotate(q_s, wp.cw_mul(ax, am) / wp.length(am))
    return p
