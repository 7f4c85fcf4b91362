"""Hand-written adjoint of Newton's forward kinematics (``newton.eval_fk``) on the solver's step (pure Warp).

The forward writes every body's pose X_b = (p_b, r_b) and COM twist (v_b, w_b) from the joint coordinates, root to
leaves. Warp's generated adjoint of Newton's kernel replays each joint's transform algebra before reversing it and
costs about 5x the forward; this one reads the stored poses and twists and needs one pass leaves to root.

With world-origin twists V_b = (u_b, w_b), u_b = v_b - w_b x c_b (c_b the body's COM in world), the velocities are
V_c = V_p + S_k qd_k for a 1-dof joint k with world twist S_k = (o x a, a) (revolute: axis a through the joint
origin o) or (a, 0) (prismatic), and V = (v - w x c, w) for a root free joint, whose qd is its COM twist in the
joint's parent frame. The output v_b = u_b + w_b x c_b gives ubar = vbar, wbar += c x vbar and cbar = vbar x w.
The position dependence is taken through rigid motions as in :mod:`.dynamics_adjoint`: a small change of body b's
pose is a world twist xi_b = xi_p + S_k dq_k; a point x with adjoint g gives the wrench (g, x x g), the quaternion
r with adjoint rbar gives the torque 0.5 (r_w rbar_v + r_v x rbar_v - rbar_w r_v), and the twist S_k (moving with
the parent) with adjoint sbar gives S_k x* sbar. Subtree wrenches phi sum leaves to root and qbar_k = S_k . phi. A
root free joint's quaternion gets the tangent part of its gradient only (the renormalisation that produced q
removes the radial part Warp's formulas add).

It covers what :func:`.dynamics_adjoint.supported` covers (1-dof, fixed and root free joints, no model parameter
with gradients). Equal to Warp's adjoint of ``newton.eval_fk`` up to the order of float additions, and to central
finite differences (tests/solver/test_kinematics_adjoint.py).
"""

from __future__ import annotations

import warp as wp

from .kernel_options import module_options
from .spatial import add_free_joint_q_adjoint, force_cross, quat_torque
from .topology import Topology
from .type_ids import JOINT_FREE, JOINT_PRISMATIC, JOINT_REVOLUTE

wp.set_module_options(module_options(enable_backward=False))


@wp.func
def point_wrench(x: wp.vec3, g: wp.vec3):
    """The wrench of a point x with adjoint g that moves with a body: (g, x x g)."""
    return wp.spatial_vector(g, wp.cross(x, g))


@wp.kernel
def forward_kinematics_adjoint(
    topo: Topology,
    joint_q: wp.array(dtype=float),
    joint_qd: wp.array(dtype=float),
    body_q: wp.array(dtype=wp.transform),
    body_qd: wp.array(dtype=wp.spatial_vector),
    body_q_grad: wp.array(dtype=wp.transform),
    body_qd_grad: wp.array(dtype=wp.spatial_vector),
    phi: wp.array(dtype=wp.spatial_vector),
    twist_bar: wp.array(dtype=wp.spatial_vector),
    joint_q_grad: wp.array(dtype=float),
    joint_qd_grad: wp.array(dtype=float),
):
    """One articulation: its bodies' output adjoints as wrenches and twist adjoints, then the joints leaves to root.
    ``phi`` and ``twist_bar`` are per-body scratch (written before they are read)."""
    a = wp.tid()
    js = topo.art_joint_start[a]
    je = topo.art_joint_end[a]
    for j in range(js, je):
        b = topo.joint_child[j]
        X = body_q[b]
        p = wp.transform_get_translation(X)
        r = wp.transform_get_rotation(X)
        w = wp.spatial_bottom(body_qd[b])
        c = wp.transform_point(X, topo.body_com[b])
        gX = body_q_grad[b]
        gp = wp.transform_get_translation(gX)
        gv = wp.spatial_top(body_qd_grad[b])
        gw = wp.spatial_bottom(body_qd_grad[b])
        w_pose = quat_torque(r, wp.transform_get_rotation(gX))
        phi[b] = point_wrench(p, gp) + point_wrench(c, wp.cross(gv, w)) + wp.spatial_vector(wp.vec3(0.0), w_pose)
        twist_bar[b] = wp.spatial_vector(gv, gw + wp.cross(c, gv))

    for jj in range(je - js):
        j = je - 1 - jj
        jt = topo.joint_type[j]
        b = topo.joint_child[j]
        parent = topo.joint_parent[j]
        qs = topo.joint_q_start[j]
        ds = topo.joint_qd_start[j]
        Phi = phi[b]
        Vbar = twist_bar[b]
        if jt == JOINT_REVOLUTE or jt == JOINT_PRISMATIC:
            X_wj = topo.joint_X_p[j]
            if parent >= 0:
                X_wj = body_q[parent] * X_wj
            axis = wp.quat_rotate(wp.transform_get_rotation(X_wj), topo.joint_axis[ds])
            s = wp.spatial_vector(axis, wp.vec3(0.0))
            if jt == JOINT_REVOLUTE:
                s = wp.spatial_vector(wp.cross(wp.transform_get_translation(X_wj), axis), axis)
            joint_q_grad[qs] = joint_q_grad[qs] + wp.dot(s, Phi)
            joint_qd_grad[ds] = joint_qd_grad[ds] + wp.dot(s, Vbar)
            Phi = Phi + force_cross(s, joint_qd[ds] * Vbar)
        if jt == JOINT_FREE:
            X_pj = topo.joint_X_p[j]
            Rp = wp.transform_get_rotation(X_pj)
            w = wp.quat_rotate(Rp, wp.vec3(joint_qd[ds + 3], joint_qd[ds + 4], joint_qd[ds + 5]))
            c = wp.transform_point(body_q[b], topo.body_com[b])
            u_bar = wp.spatial_top(Vbar)
            w_bar = wp.spatial_bottom(Vbar) - wp.cross(c, u_bar)
            Phi = Phi + point_wrench(c, wp.cross(w, u_bar))
            gl = wp.quat_rotate_inv(Rp, u_bar)
            ga = wp.quat_rotate_inv(Rp, w_bar)
            for i in range(3):
                joint_qd_grad[ds + i] = joint_qd_grad[ds + i] + gl[i]
                joint_qd_grad[ds + 3 + i] = joint_qd_grad[ds + 3 + i] + ga[i]
            add_free_joint_q_adjoint(X_pj, joint_q, qs, Phi, joint_q_grad)
        if parent >= 0:
            phi[parent] = phi[parent] + Phi
            twist_bar[parent] = twist_bar[parent] + Vbar


class KinematicsAdjoint:
    """The backward of one ``newton.eval_fk(model, state.joint_q, state.joint_qd, state)`` of the solver's step, as a
    tape function (``tape.record_func``): :func:`forward_kinematics_adjoint` over all articulations."""

    def __init__(self, topo: Topology, articulations: int, state, scratch: tuple, device):
        """``scratch``: two spatial-vector arrays of one entry per body (reused by every call)."""
        self.topo, self.articulations, self.device = topo, articulations, device
        self.state, self.scratch = state, scratch

    def arrays(self) -> list:
        """The forward launch's array arguments (what :func:`isaaclab_diffsim.bridge.tape_nbytes` counts)."""
        s = self.state
        return [s.joint_q, s.joint_qd, s.body_q, s.body_qd]

    def __call__(self) -> None:
        s = self.state
        wp.launch(
            forward_kinematics_adjoint,
            dim=self.articulations,
            inputs=[
                self.topo,
                s.joint_q,
                s.joint_qd,
                s.body_q,
                s.body_qd,
                s.body_q.grad,
                s.body_qd.grad,
                *self.scratch,
            ],
            outputs=[s.joint_q.grad, s.joint_qd.grad],
            device=self.device,
            record_tape=False,
        )
