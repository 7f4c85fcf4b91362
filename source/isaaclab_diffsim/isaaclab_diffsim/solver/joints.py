"""Warp functions for BALL and D6 joints and the passive joint forces (damping, Coulomb friction).

Conventions are Newton's (so that ``newton.eval_fk`` reproduces the solver's poses):
  * BALL: coordinates are the quaternion (x, y, z, w) of the child joint frame in the parent joint frame,
    velocities the relative angular velocity in the parent joint frame.
  * D6: one coordinate per axis, its time derivative the velocity. Linear axes translate the joint point
    by sum(axis_i q_i) in the parent joint frame; angular axes compose rotations about transported axes:
    a0 = axis_0, a1 = R0 axis_1, a2 = R1 R0 axis_2 with R_k the rotation by q_k about a_k, and the joint
    rotation R2 R1 R0. The relative angular velocity is sum(a_k qd_k); the child turns about the moved
    joint point.
"""

import warp as wp

from .kernel_options import module_options
from .spatial import motion_cross
from .topology import Topology
from .type_ids import JOINT_BALL, JOINT_D6

wp.set_module_options(module_options(enable_backward=True))

TANH_SERIES_BELOW = wp.constant(1.0e-3)


@wp.func
def d6_rotation(topo: Topology, da: int, qa: int, nang: int, q: wp.array(dtype=float)):
    """Rotation of a D6 joint's angular part and its transported axes a0, a1, a2 (parent joint frame;
    axes beyond ``nang`` are zero)."""
    rot = wp.quat_identity()
    a0 = wp.vec3(0.0)
    a1 = wp.vec3(0.0)
    a2 = wp.vec3(0.0)
    if nang >= 1:
        a0 = topo.joint_axis[da]
        rot = wp.quat_from_axis_angle(a0, q[qa])
    if nang >= 2:
        a1 = wp.quat_rotate(rot, topo.joint_axis[da + 1])
        rot = wp.quat_from_axis_angle(a1, q[qa + 1]) * rot
    if nang >= 3:
        a2 = wp.quat_rotate(rot, topo.joint_axis[da + 2])
        rot = wp.quat_from_axis_angle(a2, q[qa + 2]) * rot
    return rot, a0, a1, a2


@wp.func
def d6_offset(topo: Topology, ds: int, xs: int, nlin: int, x: wp.array(dtype=float)):
    """sum(axis_i x_i) over the linear axes (x = coordinates or velocities)."""
    p = wp.vec3(0.0)
    if nlin >= 1:
        p = p + topo.joint_axis[ds] * x[xs]
    if nlin >= 2:
        p = p + topo.joint_axis[ds + 1] * x[xs + 1]
    if nlin >= 3:
        p = p + topo.joint_axis[ds + 2] * x[xs + 2]
    return p


@wp.func
def multi_dof_joint_transform(topo: Topology, j: int, jt: int, q: wp.array(dtype=float)):
    """Transform of the child joint frame in the parent joint frame for a BALL or D6 joint."""
    qs = topo.joint_q_start[j]
    ds = topo.joint_qd_start[j]
    X = wp.transform_identity()
    if jt == JOINT_BALL:
        X = wp.transform(wp.vec3(0.0), wp.quat(q[qs], q[qs + 1], q[qs + 2], q[qs + 3]))
    if jt == JOINT_D6:
        nlin = topo.joint_dof_dim[j, 0]
        nang = topo.joint_dof_dim[j, 1]
        rot, a0, a1, a2 = d6_rotation(topo, ds + nlin, qs + nlin, nang, q)
        X = wp.transform(d6_offset(topo, ds, qs, nlin, q), rot)
    return X


@wp.func
def multi_dof_joint_motion(
    topo: Topology,
    j: int,
    jt: int,
    X_wj: wp.transform,
    q: wp.array(dtype=float),
    qd: wp.array(dtype=float),
    V_p: wp.spatial_vector,
    A_p: wp.spatial_vector,
    S: wp.array(dtype=wp.spatial_vector),
):
    """Write the motion subspace columns S of a BALL or D6 joint (world, origin-referenced) and return the
    child's twist and bias acceleration (at zero joint acceleration).

    With S = X_p S_loc(q): dS/dt qd = V_p x S qd + X_p (dS_loc/dt) qd. The second term is zero for BALL
    (axes fixed in the parent joint frame, fixed joint point). For D6 it is, in the parent joint frame,
    (pdot x w + p x wdot, wdot) with p the joint-point offset, pdot its rate, w the relative angular velocity
    and wdot = (w0 x a1) qd1 + ((w0 + w1) x a2) qd2 the rate of the transported axes (w_k = a_k qd_k).
    """
    qs = topo.joint_q_start[j]
    ds = topo.joint_qd_start[j]
    R = wp.transform_get_rotation(X_wj)
    t = wp.transform_get_translation(X_wj)
    v_rel = wp.spatial_vector()
    bias = wp.spatial_vector()
    if jt == JOINT_BALL:
        e0 = wp.quat_rotate(R, wp.vec3(1.0, 0.0, 0.0))
        e1 = wp.quat_rotate(R, wp.vec3(0.0, 1.0, 0.0))
        e2 = wp.quat_rotate(R, wp.vec3(0.0, 0.0, 1.0))
        S[ds] = wp.spatial_vector(wp.cross(t, e0), e0)
        S[ds + 1] = wp.spatial_vector(wp.cross(t, e1), e1)
        S[ds + 2] = wp.spatial_vector(wp.cross(t, e2), e2)
        w_ball = e0 * qd[ds] + e1 * qd[ds + 1] + e2 * qd[ds + 2]
        v_rel = wp.spatial_vector(wp.cross(t, w_ball), w_ball)
    if jt == JOINT_D6:
        nlin = topo.joint_dof_dim[j, 0]
        nang = topo.joint_dof_dim[j, 1]
        for i in range(nlin):
            S[ds + i] = wp.spatial_vector(wp.quat_rotate(R, topo.joint_axis[ds + i]), wp.vec3(0.0))
        pdot = wp.quat_rotate(R, d6_offset(topo, ds, ds, nlin, qd))
        da = ds + nlin
        rot, a0, a1, a2 = d6_rotation(topo, da, qs + nlin, nang, q)
        x_c = wp.transform_point(X_wj, d6_offset(topo, ds, qs, nlin, q))
        qd0 = float(0.0)
        qd1 = float(0.0)
        qd2 = float(0.0)
        if nang >= 1:
            qd0 = qd[da]
            w = wp.quat_rotate(R, a0)
            S[da] = wp.spatial_vector(wp.cross(x_c, w), w)
        if nang >= 2:
            qd1 = qd[da + 1]
            w = wp.quat_rotate(R, a1)
            S[da + 1] = wp.spatial_vector(wp.cross(x_c, w), w)
        if nang >= 3:
            qd2 = qd[da + 2]
            w = wp.quat_rotate(R, a2)
            S[da + 2] = wp.spatial_vector(wp.cross(x_c, w), w)
        w0 = a0 * qd0
        w1 = a1 * qd1
        w_rel = wp.quat_rotate(R, w0 + w1 + a2 * qd2)
        wdot = wp.quat_rotate(R, wp.cross(w0, a1) * qd1 + wp.cross(w0 + w1, a2) * qd2)
        v_rel = wp.spatial_vector(pdot + wp.cross(x_c, w_rel), w_rel)
        bias = wp.spatial_vector(wp.cross(pdot, w_rel) + wp.cross(x_c, wdot), wdot)
    return V_p + v_rel, A_p + motion_cross(V_p, v_rel) + bias


@wp.kernel
def integrate_multi_dof_positions(
    topo: Topology,
    q_in: wp.array(dtype=float),
    qd: wp.array(dtype=float),
    h: float,
    joint_offset: int,
    q_out: wp.array(dtype=float),
):
    """q_out = q_in + h qdot for BALL (quaternion, renormalised) and D6 (qdot = qd) joints (joint ``joint_offset +
    tid``), after kernels.integrate_positions (which handles the other types); launched only for models that have
    them."""
    j = wp.tid() + joint_offset
    jt = topo.joint_type[j]
    qs = topo.joint_q_start[j]
    ds = topo.joint_qd_start[j]
    if jt == JOINT_BALL:
        r = wp.quat(q_in[qs], q_in[qs + 1], q_in[qs + 2], q_in[qs + 3])
        r_new = wp.normalize(r + wp.quat(qd[ds], qd[ds + 1], qd[ds + 2], 0.0) * r * (0.5 * h))
        for i in range(4):
            q_out[qs + i] = r_new[i]
    if jt == JOINT_D6:
        for i in range(topo.joint_qd_start[j + 1] - ds):
            q_out[qs + i] = q_in[qs + i] + h * qd[ds + i]


@wp.func
def passive_joint_force(topo: Topology, k: int, v: float, dt: float):
    """Passive damping and regularised Coulomb friction of dof k, implicit in the end-of-step velocity v+.

    Both act as a viscous torque -c v+ with c = joint_damping + joint_friction * tanh(v / v_s) / v, the
    friction coefficient taken at the step's initial velocity v (v_s = topo.friction_velocity). Returns
    (tau, extra): tau = -c v goes into h, extra = dt c onto H's diagonal, so H (v+ - v) = dt (h_0 - c v+).
    The friction torque is then smooth in v, never exceeds joint_friction in magnitude for a decelerating
    joint, and a load |tau| < joint_friction holds the joint at the creep rate v_s atanh(tau / friction).
    """
    c = topo.joint_damping[k]
    f = topo.joint_friction[k]
    if f > 0.0:
        vs = topo.friction_velocity
        x = v / vs
        g = 1.0 - x * x / 3.0  # tanh(x) / x near 0
        if wp.abs(x) > TANH_SERIES_BELOW:
            g = wp.tanh(x) / x
        c = c + f / vs * g
    return -c * v, dt * c
