"""Hand-written adjoint of ``kernels.integrate_positions`` (pure Warp, no torch, no isaaclab).

The forward, per joint: a 1-dof joint's q+ = q + h qd; a free joint's position p+ = p + h (v - w x a) with
a = R(r) c_j (the body's centre of mass from the joint frame origin, rotated by the quaternion r), and its quaternion
r+ = n(r_u), r_u = r + (h/2) (w, 0) r, n(x) = x / |x|. With g = qbar+ the reverse is

  1-dof: qbar += g, qdbar += h g;
  p:     pbar += g_p, vbar += h g_p, wbar -= h a x g_p, abar = -h g_p x w;
  n:     r_ubar = (g_r - r_u (r_u . g_r) / |r_u|^2) / |r_u|  (zero at r_u = 0, where Warp's normalize is constant);
  r_u:   with G = (h/2) r_ubar = (G_v, G_s) and r = (u, s), since (w, 0) r = (s w + w x u, -w . u):
         ubar += r_ubar_v + G_v x w - G_s w,  sbar += r_ubar_s + w . G_v,  wbar += s G_v + u x G_v - G_s u;
  a:     Warp's quat_rotate is x (2 s^2 - 1) + 2 u (u . x) + 2 s (u x x), differentiated as written (r need not be
         a unit quaternion): sbar += abar . (4 s x + 2 u x x), ubar += 2 (u . x) abar + 2 x (u . abar) + 2 s x x abar.

Warp's generated adjoint does the same arithmetic in a different order and, per thread, also maps the model's
``body_com`` and ``joint_X_c`` (gradients this solver's hand adjoints leave alone: ``dynamics_adjoint.supported``).
Equal to Warp's adjoint up to the order of float additions, and to central finite differences
(tests/solver/test_position_adjoint.py).
"""

import warp as wp

from .kernel_options import module_options
from .kernels import free_joint_com_offset
from .topology import Topology
from .type_ids import JOINT_FREE, JOINT_PRISMATIC, JOINT_REVOLUTE

wp.set_module_options(module_options(enable_backward=False))


@wp.kernel
def integrate_positions_adjoint(
    topo: Topology,
    body_com: wp.array(dtype=wp.vec3),
    q_in: wp.array(dtype=float),
    qd: wp.array(dtype=float),
    h: float,
    joint_offset: int,
    q_out_grad: wp.array(dtype=float),
    q_in_grad: wp.array(dtype=float),
    qd_grad: wp.array(dtype=float),
):
    j = wp.tid() + joint_offset
    jt = topo.joint_type[j]
    qs = topo.joint_q_start[j]
    ds = topo.joint_qd_start[j]
    if jt == JOINT_REVOLUTE or jt == JOINT_PRISMATIC:
        g = q_out_grad[qs]
        q_in_grad[qs] = q_in_grad[qs] + g
        qd_grad[ds] = qd_grad[ds] + h * g
    if jt == JOINT_FREE:
        u = wp.vec3(q_in[qs + 3], q_in[qs + 4], q_in[qs + 5])
        s = q_in[qs + 6]
        w = wp.vec3(qd[ds + 3], qd[ds + 4], qd[ds + 5])
        x = free_joint_com_offset(topo, body_com, j)
        a = wp.quat_rotate(wp.quat(u, s), x)
        g_p = wp.vec3(q_out_grad[qs], q_out_grad[qs + 1], q_out_grad[qs + 2])
        g_v = wp.vec3(q_out_grad[qs + 3], q_out_grad[qs + 4], q_out_grad[qs + 5])
        g_s = q_out_grad[qs + 6]
        v_bar = h * g_p
        w_bar = -h * wp.cross(a, g_p)
        a_bar = -h * wp.cross(g_p, w)
        # r_u and the normalisation
        hh = 0.5 * h
        ru_v = u + hh * (s * w + wp.cross(w, u))
        ru_s = s - hh * wp.dot(w, u)
        n2 = wp.dot(ru_v, ru_v) + ru_s * ru_s
        rb_v = wp.vec3(0.0)
        rb_s = float(0.0)
        if n2 > 0.0:
            inv = 1.0 / wp.sqrt(n2)
            d = (wp.dot(ru_v, g_v) + ru_s * g_s) * inv * inv * inv
            rb_v = g_v * inv - ru_v * d
            rb_s = g_s * inv - ru_s * d
        Gv = hh * rb_v
        Gs = hh * rb_s
        u_bar = rb_v + wp.cross(Gv, w) - Gs * w
        s_bar = rb_s + wp.dot(w, Gv)
        w_bar = w_bar + s * Gv + wp.cross(u, Gv) - Gs * u
        # a = quat_rotate(r, x)
        s_bar = s_bar + wp.dot(a_bar, 4.0 * s * x + 2.0 * wp.cross(u, x))
        u_bar = u_bar + 2.0 * wp.dot(u, x) * a_bar + 2.0 * wp.dot(u, a_bar) * x + 2.0 * s * wp.cross(x, a_bar)
        for i in range(3):
            q_in_grad[qs + i] = q_in_grad[qs + i] + g_p[i]
            q_in_grad[qs + 3 + i] = q_in_grad[qs + 3 + i] + u_bar[i]
            qd_grad[ds + i] = qd_grad[ds + i] + v_bar[i]
            qd_grad[ds + 3 + i] = qd_grad[ds + 3 + i] + w_bar[i]
        q_in_grad[qs + 6] = q_in_grad[qs + 6] + s_bar


class PositionAdjoint:
    """The backward of one ``integrate_positions`` launch over a joint range, as a tape function
    (``tape.record_func``): :func:`integrate_positions_adjoint` from ``q_out``'s gradient into those of ``q_in`` and
    ``qd``."""

    def __init__(self, topo: Topology, joints: int, joint_offset: int, body_com, q_in, qd, h, q_out, sinks, device):
        """``sinks``: a coordinate-sized and a dof-sized array written in place of a missing ``q_in.grad`` and
        ``qd.grad`` (never read); ``q_out`` must carry a gradient."""
        self.topo, self.joints, self.joint_offset, self.device = topo, joints, joint_offset, device
        self.body_com, self.q_in, self.qd, self.h, self.q_out = body_com, q_in, qd, float(h), q_out
        self.q_in_grad = q_in.grad if q_in.grad is not None else sinks[0]
        self.qd_grad = qd.grad if qd.grad is not None else sinks[1]

    def arrays(self) -> list:
        """The forward launch's array arguments (what :func:`isaaclab_diffsim.bridge.tape_nbytes` counts)."""
        return [self.body_com, self.q_in, self.qd, self.q_out]

    def __call__(self) -> None:
        wp.launch(
            integrate_positions_adjoint,
            dim=self.joints,
            inputs=[self.topo, self.body_com, self.q_in, self.qd, self.h, self.joint_offset, self.q_out.grad],
            outputs=[self.q_in_grad, self.qd_grad],
            device=self.device,
            record_tape=False,
        )
