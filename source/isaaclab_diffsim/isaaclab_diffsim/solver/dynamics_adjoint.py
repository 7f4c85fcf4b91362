"""Hand-written adjoint of ``kernels.articulation_dynamics`` (pure Warp, no torch, no isaaclab).

The forward runs RNEA and CRBA in world frame: body poses X_i, joint twists S_k, body twists V_i and bias
accelerations A_i root to leaves; body forces f_i = I_i A_i + V_i x* I_i V_i - f_ext,i; composite forces and
inertias leaves to root; then h_k = tau_k - S_k . F_c and H_kl = S_l . (I_c S_k). Warp's generated adjoint re-runs
each loop iteration's forward before its reverse and also adds into every model array that carries a gradient
(masses, inertias, joint frames). This one reads the stored poses, twists and composites, recomputes only the
bodies' own inertias and forces, and differentiates with respect to the step's inputs (q, qd, joint_f, targets,
body_f), not the model's parameters. Three sweeps:

1. h and H reversed (any order): hbar_k and Hbar_kl go to S_k, S_l, tau_k's inputs and the composite (F_c, h_c, I_c)
   adjoints, through I_c S_k = inertia_mul(...) reversed (:func:`inertia_mul_adjoint`).
2. The composite sums reversed, root first: each body's composite adjoint is added to its children's, so a body
   ends with the adjoint of its own f_i, h_i, I_i.
3. The kinematics reversed, leaves first. The position dependence is taken through rigid motions: a small change of
   body i's pose is a world twist xi_i, and xi_i = xi_p + S_k dq_k for a 1-dof joint. Every pose-dependent quantity
   of body i moves with it: a point c by xi_top + xi_bot x c, a joint twist s by xi x s (so sbar gives
   s x* sbar), the rotated inertia R I R^T by [w] I - I [w] (so Ibar gives axial(I Ibar^T - Ibar^T I), with
   tr(M [a]) = a . axial(M)), the pose's quaternion by 0.5 (w, 0) r. Their adjoints sum into a wrench phi_i,
   children's phi into their parent's, and qbar_k = S_k . phi (subtree of k). A free joint's position p moves
   the body by (R_wj dp, 0), its quaternion r by a rotation dtheta = 2 vec(dr r*) about the joint frame origin o,
   i.e. the twist (o x dtheta_w, dtheta_w), dtheta_w = R_wj dtheta: the adjoint is tangent to the unit sphere of r
   (the radial part, which Warp's formulas give for a non-unit r, is removed by the renormalisation that
   produces q). The twists reverse as V = V_p + u, A = A_p + V_p x u (u = S_k qd_k):
   Vbar_p += Vbar + u x* Abar, ubar = Vbar - V_p x* Abar, with (a x)^T = -(a x*).

It covers 1-dof, fixed and root free joints and leaves the model's parameters without gradients (``supported``); the
solver uses Warp's generated adjoint otherwise.
Equal to Warp's adjoint up to the order of float additions, and to central finite differences
(tests/solver/test_dynamics_adjoint.py).
"""

from __future__ import annotations

import numpy as np
import warp as wp

from .joints import TANH_SERIES_BELOW
from .kernel_options import module_options
from .spatial import add_free_joint_q_adjoint, force_cross, inertia_mul, quat_torque
from .topology import Layout, Topology
from .type_ids import JOINT_FREE, JOINT_PRISMATIC, JOINT_REVOLUTE

wp.set_module_options(module_options(enable_backward=False))


PARAMETERS = (
    "joint_X_p",
    "joint_X_c",
    "joint_axis",
    "body_mass",
    "body_inertia",
    "body_com",
    "joint_armature",
    "joint_target_ke",
    "joint_target_kd",
    "joint_limit_lower",
    "joint_limit_upper",
    "joint_limit_ke",
    "joint_limit_kd",
    "joint_effort_limit",
    "joint_velocity_limit",
    "joint_damping",
    "joint_friction",
    "gravity",
)
"""The model arrays ``articulation_dynamics`` reads whose gradients only Warp's generated adjoint computes."""


def supported(layout: Layout, joint_type: np.ndarray, joint_parent: np.ndarray) -> bool:
    """Whether :func:`articulation_dynamics_adjoint` gives the whole gradient: no BALL or D6 joints, free joints only at
    roots, and no model parameter in :data:`PARAMETERS` that requires a gradient (a model finalized with
    ``requires_grad=True`` asks for them)."""
    free_below_body = (np.asarray(joint_type) == int(JOINT_FREE)) & (np.asarray(joint_parent) >= 0)
    if layout.has_multi_dof or free_below_body.any():
        return False
    return not any(getattr(layout.topo, name).requires_grad for name in PARAMETERS)


@wp.func
def axial(M: wp.mat33):
    """The vector a with tr(M [a]x) = a . axial(M)."""
    return wp.vec3(M[1, 2] - M[2, 1], M[2, 0] - M[0, 2], M[0, 1] - M[1, 0])


@wp.func
def inertia_mul_adjoint(m: float, h: wp.vec3, i_o: wp.mat33, v: wp.spatial_vector, g: wp.spatial_vector):
    """Adjoints (hbar, Ibar, vbar) of ``spatial.inertia_mul(m, h, i_o, v)`` for the output adjoint g (m constant)."""
    g1 = wp.spatial_top(g)
    g2 = wp.spatial_bottom(g)
    vo = wp.spatial_top(v)
    w = wp.spatial_bottom(v)
    h_bar = wp.cross(g1, w) + wp.cross(vo, g2)
    i_bar = wp.outer(g2, w)
    v_bar = wp.spatial_vector(m * g1 + wp.cross(g2, h), wp.cross(h, g1) + wp.transpose(i_o) * g2)
    return h_bar, i_bar, v_bar


@wp.func
def drive_and_limit_partials(
    topo: Topology,
    k: int,
    q: float,
    v: float,
    target_q: wp.array(dtype=float),
    target_qd: wp.array(dtype=float),
    target_by_coord: int,
    saturation: float,
    dt: float,
):
    """d tau / d(q, v, target_q, target_qd) of ``kernels.drive_and_limit``'s tau, through the same branches (its
    extra is piecewise constant in these)."""
    dq = float(0.0)
    dv = float(0.0)
    dtq = float(0.0)
    dtqd = float(0.0)
    if topo.joint_target_mode[k] != 0:
        ke = topo.joint_target_ke[k]
        kd = topo.joint_target_kd[k]
        ti = k
        if target_by_coord != 0:
            ti = topo.dof_coord[k]
        tau = ke * (target_q[ti] - q) + kd * (target_qd[k] - v) - ke * 0.5 * dt * v
        dq = -ke
        dv = -kd - ke * 0.5 * dt
        dtq = ke
        dtqd = kd
        effort = topo.joint_effort_limit[k]
        hi = effort
        lo = -effort
        hi_dv = float(0.0)
        lo_dv = float(0.0)
        if saturation > 0.0:
            vmax = wp.max(topo.joint_velocity_limit[k], 1.0e-6)
            env_hi = saturation * (1.0 - v / vmax)
            env_lo = saturation * (-1.0 - v / vmax)
            if env_hi < hi:
                hi = env_hi
                hi_dv = -saturation / vmax
            if env_lo > lo:
                lo = env_lo
                lo_dv = -saturation / vmax
        if tau > hi:
            tau = hi
            dq = 0.0
            dv = hi_dv
            dtq = 0.0
            dtqd = 0.0
        if tau < lo:
            tau = lo
            dq = 0.0
            dv = lo_dv
            dtq = 0.0
            dtqd = 0.0
    lo = topo.joint_limit_lower[k]
    hi = topo.joint_limit_upper[k]
    kl = topo.joint_limit_ke[k]
    dl = topo.joint_limit_kd[k]
    if q < lo:
        dq = dq - kl
        dv = dv - dl - kl * 0.5 * dt
    if q > hi:
        dq = dq - kl
        dv = dv - dl - kl * 0.5 * dt
    return dq, dv, dtq, dtqd


@wp.func
def passive_joint_partials(topo: Topology, k: int, v: float, dt: float):
    """d tau / dv and d extra / dv of ``joints.passive_joint_force`` (tau = -c(v) v, extra = dt c(v))."""
    c = topo.joint_damping[k]
    f = topo.joint_friction[k]
    dc = float(0.0)
    if f > 0.0:
        vs = topo.friction_velocity
        x = v / vs
        g = 1.0 - x * x / 3.0
        dg = -2.0 * x / 3.0
        if wp.abs(x) > TANH_SERIES_BELOW:
            th = wp.tanh(x)
            g = th / x
            dg = (1.0 - th * th) / x - th / (x * x)
        c = c + f / vs * g
        dc = f / vs * dg / vs
    return -(c + v * dc), dt * dc


@wp.func
def torque_adjoint(
    topo: Topology,
    j: int,
    jt: int,
    k: int,
    sk: wp.spatial_vector,
    g: float,
    g_diag: float,
    q: wp.array(dtype=float),
    qd: wp.array(dtype=float),
    joint_f: wp.array(dtype=float),
    target_q: wp.array(dtype=float),
    target_qd: wp.array(dtype=float),
    target_by_coord: int,
    saturation: float,
    dt: float,
    grads: wp.vec4i,
    q_grad: wp.array(dtype=float),
    qd_grad: wp.array(dtype=float),
    joint_f_grad: wp.array(dtype=float),
    target_q_grad: wp.array(dtype=float),
    target_qd_grad: wp.array(dtype=float),
):
    """tau_k's inputs' adjoints for tau's adjoint g and H_kk's g_diag (the passive term's extra depends on qd);
    returns S_k's adjoint from a free joint's wrench mapping. ``grads``: which of (qd, joint_f, target_q,
    target_qd) have gradients."""
    ds = topo.joint_qd_start[j]
    s_bar = wp.spatial_vector()
    if jt == JOINT_FREE:
        r = k - ds
        if r < 3:
            s_bar = wp.spatial_vector(g * wp.vec3(joint_f[ds], joint_f[ds + 1], joint_f[ds + 2]), wp.vec3(0.0))
            if grads[1] != 0:
                top = wp.spatial_top(sk)
                for i in range(3):
                    joint_f_grad[ds + i] = joint_f_grad[ds + i] + g * top[i]
        else:
            s_bar = wp.spatial_vector(wp.vec3(0.0), g * wp.vec3(joint_f[ds + 3], joint_f[ds + 4], joint_f[ds + 5]))
            if grads[1] != 0:
                bottom = wp.spatial_bottom(sk)
                for i in range(3):
                    joint_f_grad[ds + 3 + i] = joint_f_grad[ds + 3 + i] + g * bottom[i]
    else:
        if grads[1] != 0:
            joint_f_grad[k] = joint_f_grad[k] + g
        ck = topo.dof_coord[k]
        dq, dv, dtq, dtqd = drive_and_limit_partials(
            topo, k, q[ck], qd[k], target_q, target_qd, target_by_coord, saturation, dt
        )
        q_grad[ck] = q_grad[ck] + g * dq
        if grads[0] != 0:
            qd_grad[k] = qd_grad[k] + g * dv
        if grads[2] != 0:
            ti = k
            if target_by_coord != 0:
                ti = ck
            target_q_grad[ti] = target_q_grad[ti] + g * dtq
        if grads[3] != 0:
            target_qd_grad[k] = target_qd_grad[k] + g * dtqd
    dtau, dextra = passive_joint_partials(topo, k, qd[k], dt)
    if grads[0] != 0:
        qd_grad[k] = qd_grad[k] + g * dtau + g_diag * dextra
    return s_bar


@wp.kernel
def articulation_dynamics_adjoint(
    topo: Topology,
    q: wp.array(dtype=float),
    qd: wp.array(dtype=float),
    joint_f: wp.array(dtype=float),
    target_q: wp.array(dtype=float),
    target_qd: wp.array(dtype=float),
    target_by_coord: int,
    body_f: wp.array(dtype=wp.spatial_vector),
    use_body_f: int,
    saturation: float,
    dt: float,
    body_X: wp.array(dtype=wp.transform),
    body_V: wp.array(dtype=wp.spatial_vector),
    body_A: wp.array(dtype=wp.spatial_vector),
    body_F: wp.array(dtype=wp.spatial_vector),
    body_m: wp.array(dtype=float),
    body_h: wp.array(dtype=wp.vec3),
    body_I: wp.array(dtype=wp.mat33),
    S: wp.array(dtype=wp.spatial_vector),
    grads: wp.vec4i,
    has_body_f_grad: int,
    body_X_grad: wp.array(dtype=wp.transform),
    H_grad: wp.array(dtype=float),
    hvec_grad: wp.array(dtype=float),
    body_V_grad: wp.array(dtype=wp.spatial_vector),
    body_A_grad: wp.array(dtype=wp.spatial_vector),
    S_grad: wp.array(dtype=wp.spatial_vector),
    body_F_grad: wp.array(dtype=wp.spatial_vector),
    body_h_grad: wp.array(dtype=wp.vec3),
    body_I_grad: wp.array(dtype=wp.mat33),
    phi: wp.array(dtype=wp.spatial_vector),
    q_grad: wp.array(dtype=float),
    qd_grad: wp.array(dtype=float),
    joint_f_grad: wp.array(dtype=float),
    target_q_grad: wp.array(dtype=float),
    target_qd_grad: wp.array(dtype=float),
    body_f_grad: wp.array(dtype=wp.spatial_vector),
):
    """Adds the gradients of one articulation's step inputs (q, qd, joint_f, targets, body_f). The output gradients
    of V, A and S and the composite gradients (body_F/h/I, zero on entry: nothing downstream reads them) serve as
    working adjoints and are left modified; ``phi`` is per-body scratch."""
    a = wp.tid()
    j0 = topo.art_joint_start[a]
    j1 = topo.art_joint_end[a]
    dof0 = topo.art_dof_start[a]
    n = topo.art_ndof[a]
    hoff = topo.art_h_off[a]
    nj = j1 - j0

    # 1. h = tau - S^T F_c and H_kl = S_l . (I_c S_k), reversed
    for j in range(j0, j1):
        child = topo.joint_child[j]
        phi[child] = wp.spatial_vector()
        jt = topo.joint_type[j]
        mc = body_m[child]
        hc = body_h[child]
        Ic = body_I[child]
        Fc = body_F[child]
        for k in range(topo.joint_qd_start[j], topo.joint_qd_start[j + 1]):
            sk = S[k]
            kl = k - dof0
            g = hvec_grad[k]
            Fk = inertia_mul(mc, hc, Ic, sk)
            g_diag = H_grad[hoff + kl * n + kl]
            s_bar = g_diag * Fk - g * Fc
            Fk_bar = g_diag * sk
            for t in range(topo.dof_anc_start[k], topo.dof_anc_start[k + 1]):
                l = topo.dof_anc[t]
                ll = l - dof0
                g_val = H_grad[hoff + kl * n + ll] + H_grad[hoff + ll * n + kl]
                S_grad[l] = S_grad[l] + g_val * Fk
                Fk_bar = Fk_bar + g_val * S[l]
            h_bar, i_bar, v_bar = inertia_mul_adjoint(mc, hc, Ic, sk, Fk_bar)
            body_h_grad[child] = body_h_grad[child] + h_bar
            body_I_grad[child] = body_I_grad[child] + i_bar
            body_F_grad[child] = body_F_grad[child] - g * sk
            s_bar = s_bar + v_bar
            s_bar = s_bar + torque_adjoint(
                topo, j, jt, k, sk, g, g_diag, q, qd, joint_f, target_q, target_qd, target_by_coord, saturation,
                dt, grads, q_grad, qd_grad, joint_f_grad, target_q_grad, target_qd_grad,
            )  # fmt: skip
            S_grad[k] = S_grad[k] + s_bar

    # 2. composite sums reversed, root first: each body gets its ancestors' composite adjoints
    for j in range(j0, j1):
        parent = topo.joint_parent[j]
        child = topo.joint_child[j]
        if parent >= 0:
            body_F_grad[child] = body_F_grad[child] + body_F_grad[parent]
            body_h_grad[child] = body_h_grad[child] + body_h_grad[parent]
            body_I_grad[child] = body_I_grad[child] + body_I_grad[parent]

    # 3. kinematics and body forces reversed, leaves first
    for jj in range(nj):
        j = j1 - 1 - jj
        jt = topo.joint_type[j]
        parent = topo.joint_parent[j]
        child = topo.joint_child[j]
        qs = topo.joint_q_start[j]
        ds = topo.joint_qd_start[j]
        X_wc = body_X[child]
        R = wp.quat_to_matrix(wp.transform_get_rotation(X_wc))
        c = wp.transform_point(X_wc, topo.body_com[child])
        m = topo.body_mass[child]
        hb = m * c
        Ir = R * topo.body_inertia[child] * wp.transpose(R)
        Ib = Ir - m * wp.skew(c) * wp.skew(c)
        V = body_V[child]
        A = body_A[child]
        V_bar = body_V_grad[child]
        A_bar = body_A_grad[child]
        f_bar = body_F_grad[child]

        # f = I A + V x* (I V) - (f_lin, f_ang + c x f_lin)
        h1, i1, a1 = inertia_mul_adjoint(m, hb, Ib, A, f_bar)
        A_bar = A_bar + a1
        mom = inertia_mul(m, hb, Ib, V)
        ft = wp.spatial_top(f_bar)
        fb = wp.spatial_bottom(f_bar)
        mt = wp.spatial_top(mom)
        mb = wp.spatial_bottom(mom)
        V_bar = V_bar + wp.spatial_vector(wp.cross(mt, fb), wp.cross(mt, ft) + wp.cross(mb, fb))
        mom_bar = wp.spatial_vector(
            wp.cross(ft, wp.spatial_bottom(V)) + wp.cross(fb, wp.spatial_top(V)), wp.cross(fb, wp.spatial_bottom(V))
        )
        h2, i2, v2 = inertia_mul_adjoint(m, hb, Ib, V, mom_bar)
        V_bar = V_bar + v2
        h_bar = body_h_grad[child] + h1 + h2
        I_bar = body_I_grad[child] + i1 + i2
        It = wp.transpose(I_bar)
        c_bar = m * h_bar - m * axial(wp.skew(c) * It + It * wp.skew(c))
        w_bar = axial(Ir * It - It * Ir)
        if use_body_f != 0:
            fe_lin = wp.spatial_top(body_f[child])
            c_bar = c_bar + wp.cross(fb, fe_lin)
            if has_body_f_grad != 0:
                body_f_grad[child] = body_f_grad[child] - wp.spatial_vector(ft + wp.cross(fb, c), fb)

        V_p = wp.spatial_vector()
        V_p_bar = V_bar
        A_p_bar = A_bar
        if parent >= 0:
            V_p = body_V[parent]
        if jt == JOINT_REVOLUTE or jt == JOINT_PRISMATIC:
            s = S[ds]
            u = s * qd[ds]
            V_p_bar = V_bar + force_cross(u, A_bar)
            u_bar = V_bar - force_cross(V_p, A_bar)
            if grads[0] != 0:
                qd_grad[ds] = qd_grad[ds] + wp.dot(s, u_bar)
            s_bar = S_grad[ds] + qd[ds] * u_bar
            phi[child] = phi[child] + force_cross(s, s_bar)
        if jt == JOINT_FREE:
            Rp = wp.transform_get_rotation(topo.joint_X_p[j])
            v_com = wp.quat_rotate(Rp, wp.vec3(qd[ds], qd[ds + 1], qd[ds + 2]))
            w = wp.quat_rotate(Rp, wp.vec3(qd[ds + 3], qd[ds + 4], qd[ds + 5]))
            vt = wp.spatial_top(V_bar)
            at = wp.spatial_top(A_bar)
            v_com_bar = vt + wp.cross(w, at)
            w_bar_qd = wp.spatial_bottom(V_bar) + wp.cross(vt, c) + wp.cross(at, v_com)
            c_bar = c_bar + wp.cross(w, vt)
            if grads[0] != 0:
                gl = wp.quat_rotate_inv(Rp, v_com_bar)
                ga = wp.quat_rotate_inv(Rp, w_bar_qd)
                for i in range(3):
                    qd_grad[ds + i] = qd_grad[ds + i] + gl[i]
                    qd_grad[ds + 3 + i] = qd_grad[ds + 3 + i] + ga[i]
            # S's angular columns (c x e_a, e_a) move with the COM
            for i in range(3):
                unit = wp.vec3(0.0)
                unit[i] = 1.0
                e = wp.quat_rotate(Rp, unit)
                c_bar = c_bar + wp.cross(e, wp.spatial_top(S_grad[ds + 3 + i]))
            V_p_bar = wp.spatial_vector()
            A_p_bar = wp.spatial_vector()

        # the pose-attached quantities' adjoints as a wrench on body i's motion
        origin = wp.transform_get_translation(X_wc)
        r = wp.transform_get_rotation(X_wc)
        gX = body_X_grad[child]
        gt = wp.transform_get_translation(gX)
        w_pose = quat_torque(r, wp.transform_get_rotation(gX))
        Phi = phi[child] + wp.spatial_vector(gt + c_bar, wp.cross(origin, gt) + wp.cross(c, c_bar) + w_bar + w_pose)

        if jt == JOINT_REVOLUTE or jt == JOINT_PRISMATIC:
            q_grad[qs] = q_grad[qs] + wp.dot(S[ds], Phi)
        if jt == JOINT_FREE:
            add_free_joint_q_adjoint(topo.joint_X_p[j], q, qs, Phi, q_grad)
        if parent >= 0:
            phi[parent] = phi[parent] + Phi
            body_V_grad[parent] = body_V_grad[parent] + V_p_bar
            body_A_grad[parent] = body_A_grad[parent] + A_p_bar


class DynamicsAdjoint:
    """The backward of one ``articulation_dynamics`` launch over an articulation range, as a tape function
    (``tape.record_func``): :func:`articulation_dynamics_adjoint` on the step's scratch set ``sc``."""

    def __init__(self, topo: Topology, articulations: int, sc, step, saturation: float, sink, device):
        """``step``: the solver step's inputs (state_in, joint_f, target_q, target_qd, by_coord, body_f, use_body_f,
        dt); ``sink``: a float array passed in place of a missing gradient (not written)."""
        self.topo, self.articulations, self.sc, self.step, self.device = topo, articulations, sc, step, device
        self.qd, self.saturation, self.sink = step.state_in.joint_qd, float(saturation), sink

    def arrays(self) -> list:
        """The forward launch's array arguments (what :func:`isaaclab_diffsim.bridge.tape_nbytes` counts)."""
        sc, st = self.sc, self.step
        inputs = [sc.q_mid, self.qd, st.joint_f, st.target_q, st.target_qd, st.body_f]
        outputs = [sc.body_X, sc.body_V, sc.body_A, sc.body_F, sc.body_m, sc.body_h, sc.body_I, sc.S, sc.H, sc.hvec]
        return inputs + outputs

    def __call__(self) -> None:
        sc, st = self.sc, self.step

        qd_g, jf_g, tq_g, tqd_g = (a.grad for a in (self.qd, st.joint_f, st.target_q, st.target_qd))
        bf_g = st.body_f.grad if st.use_body_f else None
        grads = wp.vec4i(*(int(g is not None) for g in (qd_g, jf_g, tq_g, tqd_g)))
        sink = self.sink
        wp.launch(
            articulation_dynamics_adjoint,
            dim=self.articulations,
            inputs=[
                self.topo,
                sc.q_mid,
                self.qd,
                st.joint_f,
                st.target_q,
                st.target_qd,
                st.by_coord,
                st.body_f,
                st.use_body_f,
                self.saturation,
                st.dt,
                sc.body_X,
                sc.body_V,
                sc.body_A,
                sc.body_F,
                sc.body_m,
                sc.body_h,
                sc.body_I,
                sc.S,
                grads,
                int(bf_g is not None),
                sc.body_X.grad,
                sc.H.grad,
                sc.hvec.grad,
                sc.body_V.grad,
                sc.body_A.grad,
                sc.S.grad,
                sc.body_F.grad,
                sc.body_h.grad,
                sc.body_I.grad,
                sc.body_phi,
                sc.q_mid.grad,
            ],
            outputs=[
                qd_g if qd_g is not None else sink,
                jf_g if jf_g is not None else sink,
                tq_g if tq_g is not None else sink,
                tqd_g if tqd_g is not None else sink,
                bf_g if bf_g is not None else sc.body_phi,
            ],
            device=self.device,
            record_tape=False,
        )
