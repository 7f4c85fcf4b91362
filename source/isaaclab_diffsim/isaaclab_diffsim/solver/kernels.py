"""Warp kernels of the Moreau / Gauss-Seidel solver (pure Warp, no torch, no isaaclab).

One thread handles one articulation. Differentiability rules followed throughout: every array element
is stored once per step; a value carried across iterations of a dynamic loop goes through an array;
a local sum built in a dynamic loop is stored to an array and read back before any nonlinear use
(Warp's replay does not restore loop-mutated locals, array reads it does). Reverse mode is then exact.
"""

import warp as wp

from .joints import (
    multi_dof_joint_motion,
    multi_dof_joint_transform,
    passive_joint_force,
)
from .kernel_options import module_options
from .spatial import force_cross, inertia_mul, motion_cross, point_velocity_column
from .support import candidate_world_point
from .topology import Topology
from .type_ids import (
    JOINT_BALL,
    JOINT_D6,
    JOINT_FREE,
    JOINT_PRISMATIC,
    JOINT_REVOLUTE,
    MODEL_SMOOTHED,
    MODEL_SOFT,
)

wp.set_module_options(module_options(enable_backward=True))

SIGMOID_EXP_CLAMP = wp.constant(50.0)
CHOL_EPS = wp.constant(1.0e-9)


@wp.func
def contact_weight(d: float, kappa: float):
    """s(d) = 1 / (1 + exp(kappa d)) with the exponent clamped to +-50."""
    e = wp.clamp(kappa * d, -SIGMOID_EXP_CLAMP, SIGMOID_EXP_CLAMP)
    return 1.0 / (1.0 + wp.exp(e))


@wp.func
def contact_mu(topo: Topology, ci: int):
    """Friction coefficient of candidate ci: mean of its shape's and its ground plane's mu."""
    return 0.5 * (topo.shape_mu[topo.cand_shape[ci]] + topo.shape_mu[topo.cand_plane[ci]])


@wp.func
def free_joint_com_offset(topo: Topology, body_com: wp.array(dtype=wp.vec3), j: int):
    """Free joint j's child COM from the joint frame origin, in the joint frame (joint_qd's linear part is the COM
    velocity; the coordinate is the joint frame origin)."""
    return wp.transform_point(wp.transform_inverse(topo.joint_X_c[j]), body_com[topo.joint_child[j]])


@wp.kernel
def integrate_positions(
    topo: Topology,
    body_com: wp.array(dtype=wp.vec3),
    q_in: wp.array(dtype=float),
    qd: wp.array(dtype=float),
    h: float,
    joint_offset: int,
    q_out: wp.array(dtype=float),
):
    """q_out = q_in + h * qdot(q_in, qd) per joint (joint ``joint_offset + tid``); free-joint quaternions are
    renormalised."""
    j = wp.tid() + joint_offset
    jt = topo.joint_type[j]
    qs = topo.joint_q_start[j]
    ds = topo.joint_qd_start[j]
    if jt == JOINT_REVOLUTE or jt == JOINT_PRISMATIC:
        q_out[qs] = q_in[qs] + h * qd[ds]
    if jt == JOINT_FREE:
        p = wp.vec3(q_in[qs], q_in[qs + 1], q_in[qs + 2])
        r = wp.quat(q_in[qs + 3], q_in[qs + 4], q_in[qs + 5], q_in[qs + 6])
        v = wp.vec3(qd[ds], qd[ds + 1], qd[ds + 2])
        w = wp.vec3(qd[ds + 3], qd[ds + 4], qd[ds + 5])
        c_j = free_joint_com_offset(topo, body_com, j)
        p_new = p + h * (v - wp.cross(w, wp.quat_rotate(r, c_j)))
        r_dot = wp.quat(w[0], w[1], w[2], 0.0) * r * 0.5
        r_new = wp.normalize(r + r_dot * h)
        q_out[qs] = p_new[0]
        q_out[qs + 1] = p_new[1]
        q_out[qs + 2] = p_new[2]
        q_out[qs + 3] = r_new[0]
        q_out[qs + 4] = r_new[1]
        q_out[qs + 5] = r_new[2]
        q_out[qs + 6] = r_new[3]


@wp.func
def drive_and_limit(
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
    """Implicit PD drive plus joint-limit spring for dof k.

    Returns (tau, extra): tau is the explicit part of the generalized force, extra the term
    dt * (kd + dt/2 ke) added to H's diagonal, so that the drive acts on v+ and q+ = q_m + dt/2 v+.
    The drive torque is bounded by the joint's effort limit and, when ``saturation`` > 0, by a DC-motor
    torque-speed envelope: saturation * (+-1 - v+ / velocity_limit), taken implicitly. A drive at its
    effort limit is a constant torque.
    """
    tau = float(0.0)
    extra = float(0.0)
    if topo.joint_target_mode[k] != 0:
        ke = topo.joint_target_ke[k]
        kd = topo.joint_target_kd[k]
        ti = k
        if target_by_coord != 0:
            ti = topo.dof_coord[k]
        tau = ke * (target_q[ti] - q) + kd * (target_qd[k] - v) - ke * 0.5 * dt * v
        extra = dt * (kd + 0.5 * dt * ke)
        effort = topo.joint_effort_limit[k]
        hi = effort
        lo = -effort
        hi_slope = float(0.0)
        lo_slope = float(0.0)
        if saturation > 0.0:
            # envelope bounds are linear in v: taken at v+ (implicit), slope saturation / vmax
            vmax = wp.max(topo.joint_velocity_limit[k], 1.0e-6)
            env_hi = saturation * (1.0 - v / vmax)
            env_lo = saturation * (-1.0 - v / vmax)
            if env_hi < hi:
                hi = env_hi
                hi_slope = saturation / vmax
            if env_lo > lo:
                lo = env_lo
                lo_slope = saturation / vmax
        if tau > hi:
            tau = hi
            extra = dt * hi_slope
        if tau < lo:
            tau = lo
            extra = dt * lo_slope
    lo = topo.joint_limit_lower[k]
    hi = topo.joint_limit_upper[k]
    kl = topo.joint_limit_ke[k]
    dl = topo.joint_limit_kd[k]
    if q < lo:
        tau = tau + kl * (lo - q) - dl * v - kl * 0.5 * dt * v
        extra = extra + dt * (dl + 0.5 * dt * kl)
    if q > hi:
        tau = tau + kl * (hi - q) - dl * v - kl * 0.5 * dt * v
        extra = extra + dt * (dl + 0.5 * dt * kl)
    return tau, extra


@wp.kernel
def articulation_dynamics(
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
    H: wp.array(dtype=float),
    hvec: wp.array(dtype=float),
):
    """Kinematics, bias forces (RNEA) and mass matrix (CRBA) at configuration q, velocity qd.

    Writes H (plus armature and implicit drive terms on the diagonal; only the entries of dof pairs on one
    root path, the others stay zero) and h = tau - C(q, qd), gravity included, for one articulation.
    """
    a = wp.tid()
    j0 = topo.art_joint_start[a]
    j1 = topo.art_joint_end[a]
    dof0 = topo.art_dof_start[a]
    n = topo.art_ndof[a]
    hoff = topo.art_h_off[a]
    nj = j1 - j0
    g = topo.gravity[topo.art_world[a]]
    a_root = wp.spatial_vector(-g, wp.vec3(0.0))

    # forward pass: poses, motion subspaces, twists, bias accelerations, body forces
    for j in range(j0, j1):
        jt = topo.joint_type[j]
        parent = topo.joint_parent[j]
        child = topo.joint_child[j]
        qs = topo.joint_q_start[j]
        ds = topo.joint_qd_start[j]
        X_wp = wp.transform_identity()
        V_p = wp.spatial_vector()
        A_p = a_root
        if parent >= 0:
            X_wp = body_X[parent]
            V_p = body_V[parent]
            A_p = body_A[parent]
        X_wj = X_wp * topo.joint_X_p[j]
        X_j = wp.transform_identity()
        if jt == JOINT_REVOLUTE:
            X_j = wp.transform(wp.vec3(0.0), wp.quat_from_axis_angle(topo.joint_axis[ds], q[qs]))
        if jt == JOINT_PRISMATIC:
            X_j = wp.transform(topo.joint_axis[ds] * q[qs], wp.quat_identity())
        if jt == JOINT_FREE:
            X_j = wp.transform(
                wp.vec3(q[qs], q[qs + 1], q[qs + 2]), wp.quat(q[qs + 3], q[qs + 4], q[qs + 5], q[qs + 6])
            )
        if jt == JOINT_BALL or jt == JOINT_D6:
            X_j = multi_dof_joint_transform(topo, j, jt, q)
        X_wc = X_wj * X_j * wp.transform_inverse(topo.joint_X_c[j])
        body_X[child] = X_wc

        R = wp.quat_to_matrix(wp.transform_get_rotation(X_wc))
        c = wp.transform_point(X_wc, topo.body_com[child])
        m = topo.body_mass[child]
        hb = m * c
        Ib = R * topo.body_inertia[child] * wp.transpose(R) - m * wp.skew(c) * wp.skew(c)

        V = V_p
        A = A_p
        if jt == JOINT_REVOLUTE:
            ax = wp.quat_rotate(wp.transform_get_rotation(X_wj), topo.joint_axis[ds])
            s = wp.spatial_vector(wp.cross(wp.transform_get_translation(X_wj), ax), ax)
            S[ds] = s
            V = V_p + s * qd[ds]
            A = A_p + motion_cross(V_p, s * qd[ds])
        if jt == JOINT_PRISMATIC:
            ax = wp.quat_rotate(wp.transform_get_rotation(X_wj), topo.joint_axis[ds])
            s = wp.spatial_vector(ax, wp.vec3(0.0))
            S[ds] = s
            V = V_p + s * qd[ds]
            A = A_p + motion_cross(V_p, s * qd[ds])
        if jt == JOINT_FREE:
            Rp = wp.transform_get_rotation(X_wj)
            e0 = wp.quat_rotate(Rp, wp.vec3(1.0, 0.0, 0.0))
            e1 = wp.quat_rotate(Rp, wp.vec3(0.0, 1.0, 0.0))
            e2 = wp.quat_rotate(Rp, wp.vec3(0.0, 0.0, 1.0))
            S[ds + 0] = wp.spatial_vector(e0, wp.vec3(0.0))
            S[ds + 1] = wp.spatial_vector(e1, wp.vec3(0.0))
            S[ds + 2] = wp.spatial_vector(e2, wp.vec3(0.0))
            S[ds + 3] = wp.spatial_vector(wp.cross(c, e0), e0)
            S[ds + 4] = wp.spatial_vector(wp.cross(c, e1), e1)
            S[ds + 5] = wp.spatial_vector(wp.cross(c, e2), e2)
            v_com = wp.quat_rotate(Rp, wp.vec3(qd[ds], qd[ds + 1], qd[ds + 2]))
            w = wp.quat_rotate(Rp, wp.vec3(qd[ds + 3], qd[ds + 4], qd[ds + 5]))
            V = wp.spatial_vector(v_com - wp.cross(w, c), w)
            # d/dt of the origin twist (v_com - w x c, w) at zero qdd
            A = A_p + wp.spatial_vector(wp.cross(v_com, w), wp.vec3(0.0))
        if jt == JOINT_BALL or jt == JOINT_D6:
            V, A = multi_dof_joint_motion(topo, j, jt, X_wj, q, qd, V_p, A_p, S)
        body_V[child] = V
        body_A[child] = A

        f = inertia_mul(m, hb, Ib, A) + force_cross(V, inertia_mul(m, hb, Ib, V))
        if use_body_f != 0:
            fe = body_f[child]
            fl = wp.spatial_top(fe)
            f = f - wp.spatial_vector(fl, wp.spatial_bottom(fe) + wp.cross(c, fl))
        body_F[child] = f
        body_m[child] = m
        body_h[child] = hb
        body_I[child] = Ib

    # backward pass: composite inertias and subtree forces
    for jj in range(nj):
        j = j1 - 1 - jj
        parent = topo.joint_parent[j]
        child = topo.joint_child[j]
        if parent >= 0:
            body_F[parent] += body_F[child]
            body_m[parent] += body_m[child]
            body_h[parent] += body_h[child]
            body_I[parent] += body_I[child]

    # h = tau - C and the lower/upper triangles of H
    for j in range(j0, j1):
        child = topo.joint_child[j]
        ds = topo.joint_qd_start[j]
        de = topo.joint_qd_start[j + 1]
        jt = topo.joint_type[j]
        mc = body_m[child]
        hc = body_h[child]
        Ic = body_I[child]
        Fc = body_F[child]
        for k in range(ds, de):
            sk = S[k]
            kl = k - dof0
            tau = joint_f[k]
            extra = topo.joint_armature[k]
            if jt == JOINT_FREE:
                # joint_f of a free joint is a world wrench at the COM; S^T maps it onto the dofs
                if k - ds < 3:
                    tau = wp.dot(wp.spatial_top(sk), wp.vec3(joint_f[ds], joint_f[ds + 1], joint_f[ds + 2]))
                else:
                    tau = wp.dot(wp.spatial_bottom(sk), wp.vec3(joint_f[ds + 3], joint_f[ds + 4], joint_f[ds + 5]))
            else:
                qk = q[topo.dof_coord[k]]
                t_drive, e_drive = drive_and_limit(
                    topo, k, qk, qd[k], target_q, target_qd, target_by_coord, saturation, dt
                )
                tau = tau + t_drive
                extra = extra + e_drive
            t_passive, e_passive = passive_joint_force(topo, k, qd[k], dt)
            tau = tau + t_passive
            extra = extra + e_passive
            hvec[k] = tau - wp.dot(sk, Fc)
            # H_kl = S_l . (I_c S_k) for l = k and l above k (I_c: composite inertia of k's subtree); other
            # entries are zero (different branches) and never read (factor_and_solve is branch-sparse)
            Fk = inertia_mul(mc, hc, Ic, sk)
            H[hoff + kl * n + kl] = wp.dot(sk, Fk) + extra
            for t in range(topo.dof_anc_start[k], topo.dof_anc_start[k + 1]):
                l = topo.dof_anc[t]
                val = wp.dot(S[l], Fk)
                ll = l - dof0
                H[hoff + kl * n + ll] = val
                H[hoff + ll * n + kl] = val


@wp.func
def transpose_solve(
    topo: Topology,
    L: wp.array(dtype=float),
    loff: int,
    dof0: int,
    n: int,
    b: wp.array(dtype=float),
    y: wp.array(dtype=float),
    y_acc: wp.array(dtype=float),
):
    """y = L^-T b for the factor of H = L^T L (leaves to root: y_k = (b_k - sum_(m below k) L_mk y_m) / L_kk).
    Each sum is stored to y_acc and read back (keeps Warp's replay exact)."""
    for kk in range(n):
        k = dof0 + n - 1 - kk
        acc = float(0.0)
        for t in range(topo.dof_desc_start[k], topo.dof_desc_start[k + 1]):
            m = topo.dof_desc[t]
            acc += L[loff + (m - dof0) * n + (k - dof0)] * y[m]
        y_acc[k] = acc
        y[k] = (b[k] - y_acc[k]) / L[loff + (k - dof0) * n + (k - dof0)]


@wp.func
def tree_solve(
    topo: Topology,
    L: wp.array(dtype=float),
    loff: int,
    dof0: int,
    n: int,
    y: wp.array(dtype=float),
    x: wp.array(dtype=float),
    x_acc: wp.array(dtype=float),
):
    """x = L^-1 y (root to leaves: x_k = (y_k - sum_(i above k) L_ki x_i) / L_kk)."""
    for kk in range(n):
        k = dof0 + kk
        acc = float(0.0)
        for t in range(topo.dof_anc_start[k], topo.dof_anc_start[k + 1]):
            i = topo.dof_anc[t]
            acc += L[loff + kk * n + (i - dof0)] * x[i]
        x_acc[k] = acc
        x[k] = (y[k] - x_acc[k]) / L[loff + kk * n + kk]


@wp.kernel
def factor_and_solve(
    topo: Topology,
    H: wp.array(dtype=float),
    hvec: wp.array(dtype=float),
    L: wp.array(dtype=float),
    L_acc: wp.array(dtype=float),
    y: wp.array(dtype=float),
    y_acc: wp.array(dtype=float),
    acc: wp.array(dtype=float),
    x_acc: wp.array(dtype=float),
):
    """Sparse LTL factorisation H = L^T L (L lower triangular with the tree's sparsity: L_ki != 0 only for i = k or
    i above k, no fill-in) and the free acceleration acc = H^-1 h = L^-1 L^-T h.

    Leaves first, every entry written once (docs/contact_solver.md "Sparse factorisation"):
    L_kk = sqrt(H_kk - sum_(m below k) L_mk^2) and L_ki = (H_ki - sum_(m below k) L_mk L_mi) / L_kk for i above k.
    """
    a = wp.tid()
    n = topo.art_ndof[a]
    off = topo.art_h_off[a]
    dof0 = topo.art_dof_start[a]
    for kk in range(n):
        k = dof0 + n - 1 - kk
        kl = k - dof0
        sq = float(0.0)
        for t in range(topo.dof_desc_start[k], topo.dof_desc_start[k + 1]):
            ml = topo.dof_desc[t] - dof0
            sq += L[off + ml * n + kl] * L[off + ml * n + kl]
        L_acc[off + kl * n + kl] = sq
        lkk = wp.sqrt(wp.max(H[off + kl * n + kl] - L_acc[off + kl * n + kl], CHOL_EPS))
        L[off + kl * n + kl] = lkk
        for s in range(topo.dof_anc_start[k], topo.dof_anc_start[k + 1]):
            il = topo.dof_anc[s] - dof0
            dot = float(0.0)
            for t in range(topo.dof_desc_start[k], topo.dof_desc_start[k + 1]):
                ml = topo.dof_desc[t] - dof0
                dot += L[off + ml * n + kl] * L[off + ml * n + il]
            L_acc[off + kl * n + il] = dot
            L[off + kl * n + il] = (H[off + kl * n + il] - L_acc[off + kl * n + il]) / lkk
    transpose_solve(topo, L, off, dof0, n, hvec, y, y_acc)
    tree_solve(topo, L, off, dof0, n, y, acc, x_acc)


@wp.func
def on_chain(topo: Topology, aoff: int, j0: int, nj: int, k: int, leaf: int):
    """Whether dof k is ``leaf`` or one of its ancestors (leaf -1: an empty chain): k's joint is an ancestor of
    (or is) leaf's joint, and within one joint the dofs form a chain in index order."""
    found = int(0)
    if leaf >= 0 and k <= leaf:
        found = topo.joint_anc[aoff + (topo.dof_joint[k] - j0) * nj + (topo.dof_joint[leaf] - j0)]
    return found


@wp.func
def chain_dof(topo: Topology, leaf: int, t: int):
    """Entry t of the dof chain from ``leaf`` to the root: the leaf itself at t = dof_anc_start[leaf] - 1, then its
    ancestors, nearest first (t < dof_anc_start[leaf + 1])."""
    if t >= topo.dof_anc_start[leaf]:
        return topo.dof_anc[t]
    return leaf


@wp.kernel
def contact_jacobians(
    topo: Topology,
    body_X: wp.array(dtype=wp.transform),
    S: wp.array(dtype=wp.spatial_vector),
    L: wp.array(dtype=float),
    qd: wp.array(dtype=float),
    acc: wp.array(dtype=float),
    dt: float,
    frame_n: wp.array(dtype=wp.vec3),
    frame_origin: wp.array(dtype=wp.vec3),
    frame_t1: wp.array(dtype=wp.vec3),
    frame_t2: wp.array(dtype=wp.vec3),
    dist: wp.array(dtype=float),
    cpoint: wp.array(dtype=wp.vec3),
    J: wp.array(dtype=float),
    Z: wp.array(dtype=float),
    Z_acc: wp.array(dtype=float),
    G: wp.array(dtype=float),
    c_free: wp.array(dtype=float),
):
    """Signed distances d = n . (p - origin) - radius, contact Jacobian J (normal, t1, t2 rows), Z = L^-T J^T
    (stored as rows), Delassus G = J H^-1 J^T = Z^T Z and free contact velocity c = J (v + dt H^-1 h); each
    candidate's frame (n, origin, t1, t2) is read from frame_* (terrain_frames.py).

    A candidate's rows are nonzero only on the chain of dofs from its body to the root, and so are its
    columns of Z (L^-T runs leaves to root); G_rq sums over the chains' common part only. Entries off a
    candidate's chain are neither written nor read."""
    a = wp.tid()
    n = topo.art_ndof[a]
    nc = topo.art_ncand[a]
    if nc == 0:
        return
    m = 3 * nc
    c0 = topo.art_cand_start[a]
    dof0 = topo.art_dof_start[a]
    joff = topo.art_j_off[a]
    goff = topo.art_g_off[a]
    hoff = topo.art_h_off[a]
    for i in range(nc):
        ci = c0 + i
        b = topo.cand_body[ci]
        nrm = frame_n[ci]
        p = candidate_world_point(topo, ci, body_X[b])
        rad = topo.cand_radius[ci]
        dist[ci] = wp.dot(nrm, p - frame_origin[ci]) - rad
        x = p - rad * nrm
        cpoint[ci] = x
        leaf = topo.body_dof[b]
        if leaf >= 0:
            # the chain leaf first, then its ancestors nearest first: each entry's chain descendants come before it
            for t in range(topo.dof_anc_start[leaf] - 1, topo.dof_anc_start[leaf + 1]):
                k = chain_dof(topo, leaf, t)
                kl = k - dof0
                col = point_velocity_column(S[k], x)
                jn = wp.dot(nrm, col)
                j1 = wp.dot(frame_t1[ci], col)
                j2 = wp.dot(frame_t2[ci], col)
                J[joff + (3 * i + 0) * n + kl] = jn
                J[joff + (3 * i + 1) * n + kl] = j1
                J[joff + (3 * i + 2) * n + kl] = j2
                # Z_k = (J_k - sum over the chain below k of L_mk Z_m) / L_kk, the three rows at once
                r0 = joff + 3 * i * n
                s = wp.vec3(0.0)
                for u in range(topo.dof_anc_start[leaf] - 1, t):
                    ml = chain_dof(topo, leaf, u) - dof0
                    s += L[hoff + ml * n + kl] * wp.vec3(Z[r0 + ml], Z[r0 + n + ml], Z[r0 + 2 * n + ml])
                lkk = L[hoff + kl * n + kl]
                for rr in range(3):
                    Z_acc[r0 + rr * n + kl] = s[rr]
                    Z[r0 + rr * n + kl] = (J[r0 + rr * n + kl] - Z_acc[r0 + rr * n + kl]) / lkk
    j0 = topo.art_joint_start[a]
    nj = topo.art_joint_end[a] - j0
    aoff = topo.art_anc_off[a]
    for i in range(nc):
        ci = c0 + i
        leaf = topo.body_dof[topo.cand_body[ci]]
        for q in range(i + 1):
            leaf_q = topo.body_dof[topo.cand_body[c0 + q]]
            g = wp.mat33(0.0)
            if leaf >= 0:
                for t in range(topo.dof_anc_start[leaf] - 1, topo.dof_anc_start[leaf + 1]):
                    k = chain_dof(topo, leaf, t)
                    if on_chain(topo, aoff, j0, nj, k, leaf_q) != 0:
                        kl = k - dof0
                        yi = wp.vec3(
                            Z[joff + (3 * i) * n + kl], Z[joff + (3 * i + 1) * n + kl], Z[joff + (3 * i + 2) * n + kl]
                        )
                        yq = wp.vec3(
                            Z[joff + (3 * q) * n + kl], Z[joff + (3 * q + 1) * n + kl], Z[joff + (3 * q + 2) * n + kl]
                        )
                        g += wp.outer(yi, yq)
            for rr in range(3):
                for qq in range(3):
                    r = 3 * i + rr
                    qr = 3 * q + qq
                    if q < i or qq <= rr:  # a diagonal block's upper half mirrors its lower: G exactly symmetric
                        G[goff + r * m + qr] = g[rr, qq]
                        if qr != r:
                            G[goff + qr * m + r] = g[rr, qq]
        for rr in range(3):
            r = 3 * i + rr
            cf = float(0.0)
            if leaf >= 0:
                for t in range(topo.dof_anc_start[leaf] - 1, topo.dof_anc_start[leaf + 1]):
                    k = chain_dof(topo, leaf, t)
                    cf += J[joff + r * n + k - dof0] * (qd[k] + dt * acc[k])
            c_free[3 * c0 + r] = cf


SLIDE_ITERATIONS = wp.constant(32)
NORM_FLOOR = wp.constant(1.0e-20)


@wp.func
def tangential_norm(t1: float, t2: float):
    """|(t1, t2)| with a floor under the square root, so its adjoint stays finite (zero) at the origin."""
    return wp.sqrt(wp.max(t1 * t1 + t2 * t2, NORM_FLOOR))


@wp.func
def project_soc(z: wp.vec3, mu: float):
    """Euclidean projection of (n, t1, t2) onto the Coulomb cone |t| <= mu n."""
    s = tangential_norm(z[1], z[2])
    out = z
    if s > mu * z[0]:
        if mu * s <= -z[0]:
            out = wp.vec3(0.0)
        else:
            pn = (z[0] + mu * s) / (1.0 + mu * mu)
            out = wp.vec3(pn, mu * pn * z[1] / s, mu * pn * z[2] / s)
    return out


@wp.func
def local_contact_solve(
    G: wp.array(dtype=float),
    goff: int,
    m: int,
    row: int,
    b: wp.vec3,
    mu: float,
    p_prev: wp.vec3,
    compliance: wp.vec3,
):
    """Coulomb solve of one contact block with the others frozen: p in the cone with r = (G_ii + C) p + b such that
    p = 0 (separating: b_n >= 0), r = 0 (sticking: the 3x3 solve lands in the cone), or else sliding.

    Sliding is solved by SLIDE_ITERATIONS projected steps on De Saxce's modified velocity,
    p <- proj_K(p - rho (r + mu |r_t| e_n)) with rho = 1 / (Gershgorin bound of G_ii), from the previous
    sweep's impulse (or the projected sticking solution): its fixed points are exactly Coulomb's sliding law.
    A split normal-then-tangential step instead oscillates on articulated feet, whose normal-tangential
    coupling |G_nt| can exceed G_nn (a period-2 cycle for a single sliding contact), and the closed-form
    sliding solve p_n = -b_n / (G_nn - mu G_nt.t) breaks down there (Painleve's paradox).
    C = diag(compliance) is zero for hard and smoothed contact and the soft model's compliance otherwise
    (soft_contact_terms).
    """
    out = wp.vec3(0.0)
    if b[0] < 0.0:
        A = wp.mat33(
            G[goff + row * m + row],
            G[goff + row * m + row + 1],
            G[goff + row * m + row + 2],
            G[goff + (row + 1) * m + row],
            G[goff + (row + 1) * m + row + 1],
            G[goff + (row + 1) * m + row + 2],
            G[goff + (row + 2) * m + row],
            G[goff + (row + 2) * m + row + 1],
            G[goff + (row + 2) * m + row + 2],
        ) + wp.diag(compliance)
        reg = CHOL_EPS * wp.max(A[0, 0], 1.0)
        stick = -(wp.inverse(A + wp.mat33(reg, 0.0, 0.0, 0.0, reg, 0.0, 0.0, 0.0, reg)) * b)
        tn = tangential_norm(stick[1], stick[2])
        if stick[0] > 0.0 and tn <= mu * stick[0]:
            out = stick
        else:
            bound = wp.max(
                wp.abs(A[0, 0]) + wp.abs(A[0, 1]) + wp.abs(A[0, 2]),
                wp.max(
                    wp.abs(A[1, 0]) + wp.abs(A[1, 1]) + wp.abs(A[1, 2]),
                    wp.abs(A[2, 0]) + wp.abs(A[2, 1]) + wp.abs(A[2, 2]),
                ),
            )
            rho = 1.0 / wp.max(bound, CHOL_EPS)
            p = project_soc(stick, mu)
            if p_prev[0] > 0.0:
                p = p_prev
            moving = int(1)
            for _k in range(SLIDE_ITERATIONS):
                if moving != 0:
                    r = A * p + b
                    rt = tangential_norm(r[1], r[2])
                    step = project_soc(p - rho * (r + wp.vec3(mu * rt, 0.0, 0.0)), mu)
                    # a step that returns p exactly is a fixed point of the iteration: the rest would repeat it
                    if step[0] == p[0] and step[1] == p[1] and step[2] == p[2]:
                        moving = 0
                    p = step
            out = p
    return out


@wp.func
def soft_contact_terms(contact_model: int, soft: wp.vec3, d: float):
    """Compliance C and normal bias of the soft (penalty) model, as a regularised Coulomb problem.

    The penalty law P_n = dt (ke max(-d, 0) - kd v_n+), P_t = -dt kf v_t+ (capped by the cone), with v+ the
    contact's end-of-step velocity, is the hard problem (G + C) p + c + b in the cone with
    C = diag(1 / (kd dt), 1 / (kf dt), 1 / (kf dt)) and b_n = (ke / kd) min(d, 0): the damping and friction
    are implicit in all contacts' velocities, the spring explicit. ``soft`` = (1 / (kd dt), 1 / (kf dt), ke / kd);
    other models get C = 0 and b = 0.
    """
    c = wp.vec3(0.0)
    bn = float(0.0)
    if contact_model == MODEL_SOFT:
        c = wp.vec3(soft[0], soft[1], soft[1])
        bn = soft[2] * wp.min(d, 0.0)
    return wp.vec4(c[0], c[1], c[2], bn)


@wp.kernel
def gauss_seidel_impulses(
    topo: Topology,
    contact_model: int,
    kappa: wp.array(dtype=float),
    margin: float,
    stabilization: float,
    soft: wp.vec3,
    iterations: int,
    keep_sweeps: int,
    tolerance: float,
    use_warm: int,
    dt: float,
    dist: wp.array(dtype=float),
    G: wp.array(dtype=float),
    c_free: wp.array(dtype=float),
    weight: wp.array(dtype=float),
    p_hist: wp.array(dtype=float),
    res: wp.array(dtype=float),
    impulse: wp.array(dtype=float),
    p_final: wp.array(dtype=float),
    solve_residual: wp.array(dtype=float),
    warm: wp.array(dtype=float),
    sweeps: wp.array(dtype=int),
):
    """Projected Gauss-Seidel on the Coulomb cone, at most ``iterations`` sweeps.

    Each contact block is solved exactly with the others frozen (local_contact_solve). Smoothed model:
    couplings G_ij p_j (j != i) are weighted by s(d_j) and the final impulse is P_i = s(d_i) p_i. Hard
    model: s = 1 on active contacts (d <= margin), 0 otherwise. Soft model: s = 1 in penetration (d < 0), with
    the compliance and bias of soft_contact_terms.
    Penetration stabilisation (Baumgarte): the normal target velocity is -stabilization * min(d, 0) / dt.

    Start: use_warm != 0 starts from ``warm`` (the previous step's unweighted impulses, on active contacts),
    otherwise from each contact's local solve alone. Stop: after the first sweep whose largest impulse change is
    below ``tolerance`` [N s] (a negative tolerance runs all sweeps); ``sweeps`` receives the count per articulation.

    keep_sweeps != 0 stores every sweep in p_hist / res (what Warp's reverse mode replays, the unrolled
    adjoint; the caller then passes use_warm 0 and a negative tolerance, so the sweeps are a fixed function of
    G, c and d); 0 alternates two slots (the implicit adjoint needs only the solution). p_final and ``warm``
    receive the unweighted solution p, solve_residual per articulation the largest impulse change of the last
    sweep [N s].
    """
    a = wp.tid()
    nc = topo.art_ncand[a]
    if nc == 0:
        solve_residual[a] = 0.0
        sweeps[a] = 0
        return
    m = 3 * nc
    c0 = topo.art_cand_start[a]
    goff = topo.art_g_off[a]
    slots = 2
    rslots = 1
    if keep_sweeps != 0:
        slots = iterations + 1
        rslots = iterations
    poff = slots * 3 * c0
    roff = rslots * 3 * c0
    k = kappa[0]
    for i in range(nc):
        ci = c0 + i
        d = dist[ci]
        s = float(0.0)
        if d <= margin:
            s = 1.0
            if contact_model == MODEL_SMOOTHED:
                s = contact_weight(d, k)
        if contact_model == MODEL_SOFT and d >= 0.0:
            s = 0.0
        weight[ci] = s
    # start: the previous step's impulses, or the local solve of contact i alone (p_i = -G_ii^-1 c_i), projected
    for i in range(nc):
        ci = c0 + i
        row = 3 * i
        pc = wp.vec3(warm[3 * ci], warm[3 * ci + 1], warm[3 * ci + 2])
        if use_warm == 0:
            st = soft_contact_terms(contact_model, soft, dist[ci])
            bias = stabilization * wp.min(dist[ci], 0.0) / dt + st[3]
            pc = local_contact_solve(
                G,
                goff,
                m,
                row,
                wp.vec3(c_free[3 * ci] + bias, c_free[3 * ci + 1], c_free[3 * ci + 2]),
                contact_mu(topo, ci),
                wp.vec3(0.0),
                wp.vec3(st[0], st[1], st[2]),
            )
        act = float(0.0)
        if weight[ci] > 0.0:
            act = 1.0
        p_hist[poff + row] = act * pc[0]
        p_hist[poff + row + 1] = act * pc[1]
        p_hist[poff + row + 2] = act * pc[2]
    done = int(0)
    count = iterations
    for it in range(iterations):
        if done == 0:
            prev = poff + (it % slots) * m
            cur = poff + ((it + 1) % slots) * m
            racc = roff + (it % rslots) * m
            change = float(0.0)
            for i in range(nc):
                ci = c0 + i
                row = 3 * i
                coupling = wp.vec3(0.0)
                for jc in range(nc):
                    wj = float(0.0)
                    src = prev
                    if jc != i:
                        wj = 1.0
                        if contact_model == MODEL_SMOOTHED:
                            wj = weight[c0 + jc]
                        if jc < i:
                            src = cur
                    pj = wp.vec3(p_hist[src + 3 * jc], p_hist[src + 3 * jc + 1], p_hist[src + 3 * jc + 2])
                    gij = wp.mat33(
                        G[goff + row * m + 3 * jc],
                        G[goff + row * m + 3 * jc + 1],
                        G[goff + row * m + 3 * jc + 2],
                        G[goff + (row + 1) * m + 3 * jc],
                        G[goff + (row + 1) * m + 3 * jc + 1],
                        G[goff + (row + 1) * m + 3 * jc + 2],
                        G[goff + (row + 2) * m + 3 * jc],
                        G[goff + (row + 2) * m + 3 * jc + 1],
                        G[goff + (row + 2) * m + 3 * jc + 2],
                    )
                    coupling += wj * (gij * pj)
                res[racc + row] = coupling[0]
                res[racc + row + 1] = coupling[1]
                res[racc + row + 2] = coupling[2]
                st = soft_contact_terms(contact_model, soft, dist[ci])
                bias = stabilization * wp.min(dist[ci], 0.0) / dt + st[3]
                r = wp.vec3(
                    res[racc + row] + c_free[3 * ci] + bias,
                    res[racc + row + 1] + c_free[3 * ci + 1],
                    res[racc + row + 2] + c_free[3 * ci + 2],
                )
                p_prev = wp.vec3(p_hist[prev + row], p_hist[prev + row + 1], p_hist[prev + row + 2])
                pc = local_contact_solve(G, goff, m, row, r, contact_mu(topo, ci), p_prev, wp.vec3(st[0], st[1], st[2]))
                act = float(0.0)
                if weight[ci] > 0.0:
                    act = 1.0
                p_hist[cur + row] = act * pc[0]
                p_hist[cur + row + 1] = act * pc[1]
                p_hist[cur + row + 2] = act * pc[2]
                for rr in range(3):
                    change = wp.max(change, wp.abs(p_hist[cur + row + rr] - p_hist[prev + row + rr]))
            if change < tolerance:
                done = 1
                count = it + 1
    sweeps[a] = count
    last = poff + (count % slots) * m
    before = poff + ((count - 1) % slots) * m
    delta = float(0.0)
    for i in range(nc):
        ci = c0 + i
        for rr in range(3):
            pv = p_hist[last + 3 * i + rr]
            p_final[3 * ci + rr] = pv
            warm[3 * ci + rr] = pv
            impulse[3 * ci + rr] = weight[ci] * pv
            delta = wp.max(delta, wp.abs(pv - p_hist[before + 3 * i + rr]))
    solve_residual[a] = delta


@wp.func
def penalty_force(d: float, v: wp.vec3, coefficients: wp.vec3, mu: float):
    """Explicit penalty force (f_n, f_t1, f_t2) of one contact at signed distance d with contact velocity
    v = (v_n, v_t1, v_t2), ``coefficients`` = (ke, kd, kf); zero unless d < 0 (docs/contact_solver.md
    "Penalty contact"):
      f_n = ke (-d) - kd min(v_n, 0)                  (P1: damping only while approaching, never pulling)
      f_t = -min(kf |v_t|, mu f_n) v_t / |v_t|        (P2: viscous friction capped by Coulomb)
    """
    f = wp.vec3(0.0)
    if d < 0.0:
        fn = coefficients[0] * (-d) - coefficients[1] * wp.min(v[0], 0.0)
        s = tangential_norm(v[1], v[2])
        ft = wp.min(coefficients[2] * s, mu * fn) / s
        f = wp.vec3(fn, -ft * v[1], -ft * v[2])
    return f


@wp.kernel
def penalty_impulses(
    topo: Topology,
    J: wp.array(dtype=float),
    qd: wp.array(dtype=float),
    dist: wp.array(dtype=float),
    coefficients: wp.vec3,
    dt: float,
    v_contact: wp.array(dtype=float),
    weight: wp.array(dtype=float),
    impulse: wp.array(dtype=float),
    solve_residual: wp.array(dtype=float),
    sweeps: wp.array(dtype=int),
):
    """Penalty model: P_i = dt f(d_i, J_i qd) per candidate (penalty_force), from the distances, Jacobians and
    velocity at the start of the step (explicit; no contact solve: residual and sweep count 0). ``weight`` is 1 in
    penetration, else 0."""
    a = wp.tid()
    n = topo.art_ndof[a]
    nc = topo.art_ncand[a]
    dof0 = topo.art_dof_start[a]
    joff = topo.art_j_off[a]
    c0 = topo.art_cand_start[a]
    for i in range(nc):
        ci = c0 + i
        leaf = topo.body_dof[topo.cand_body[ci]]
        v = wp.vec3(0.0)
        if leaf >= 0:
            for t in range(topo.dof_anc_start[leaf] - 1, topo.dof_anc_start[leaf + 1]):
                k = chain_dof(topo, leaf, t)
                kl = k - dof0
                v += qd[k] * wp.vec3(
                    J[joff + (3 * i) * n + kl], J[joff + (3 * i + 1) * n + kl], J[joff + (3 * i + 2) * n + kl]
                )
        for rr in range(3):
            v_contact[3 * ci + rr] = v[rr]
        d = dist[ci]
        vc = wp.vec3(v_contact[3 * ci], v_contact[3 * ci + 1], v_contact[3 * ci + 2])
        f = penalty_force(d, vc, coefficients, contact_mu(topo, ci))
        s = float(0.0)
        if d < 0.0:
            s = 1.0
        weight[ci] = s
        for rr in range(3):
            impulse[3 * ci + rr] = dt * f[rr]
    solve_residual[a] = 0.0
    sweeps[a] = 0


@wp.kernel
def update_velocities(
    topo: Topology,
    qd: wp.array(dtype=float),
    acc: wp.array(dtype=float),
    L: wp.array(dtype=float),
    Z: wp.array(dtype=float),
    impulse: wp.array(dtype=float),
    dt: float,
    w: wp.array(dtype=float),
    dv: wp.array(dtype=float),
    dv_acc: wp.array(dtype=float),
    qd_out: wp.array(dtype=float),
):
    """v+ = v + dt H^-1 h + H^-1 J^T P, with H^-1 J^T P = L^-1 (Z P), Z = L^-T J^T (each candidate's rows on
    its chain only)."""
    a = wp.tid()
    n = topo.art_ndof[a]
    nc = topo.art_ncand[a]
    dof0 = topo.art_dof_start[a]
    joff = topo.art_j_off[a]
    c0 = topo.art_cand_start[a]
    for k in range(n):
        w[dof0 + k] = 0.0
    for i in range(nc):
        ci = c0 + i
        leaf = topo.body_dof[topo.cand_body[ci]]
        if leaf >= 0:
            for t in range(topo.dof_anc_start[leaf] - 1, topo.dof_anc_start[leaf + 1]):
                k = chain_dof(topo, leaf, t)
                kl = k - dof0
                w[k] += (
                    Z[joff + (3 * i) * n + kl] * impulse[3 * ci]
                    + Z[joff + (3 * i + 1) * n + kl] * impulse[3 * ci + 1]
                    + Z[joff + (3 * i + 2) * n + kl] * impulse[3 * ci + 2]
                )
    tree_solve(topo, L, topo.art_h_off[a], dof0, n, w, dv, dv_acc)
    for k in range(n):
        qd_out[dof0 + k] = qd[dof0 + k] + dt * acc[dof0 + k] + dv[dof0 + k]


@wp.kernel
def contact_report(
    topo: Topology,
    body_q: wp.array(dtype=wp.transform),
    body_com: wp.array(dtype=wp.vec3),
    impulse: wp.array(dtype=float),
    cpoint: wp.array(dtype=wp.vec3),
    frame_n: wp.array(dtype=wp.vec3),
    frame_t1: wp.array(dtype=wp.vec3),
    frame_t2: wp.array(dtype=wp.vec3),
    inv_dt: float,
    count: wp.array(dtype=int),
    shape0: wp.array(dtype=int),
    shape1: wp.array(dtype=int),
    point0: wp.array(dtype=wp.vec3),
    point1: wp.array(dtype=wp.vec3),
    normal: wp.array(dtype=wp.vec3),
    force_vec: wp.array(dtype=wp.vec3),
    force_spatial: wp.array(dtype=wp.spatial_vector),
    write_spatial: int,
):
    """Write contact candidates and their forces (impulse / dt, world frame, on the shape's body) into a Contacts
    buffer."""
    ci = wp.tid()
    if ci == 0:
        count[0] = topo.cand_body.shape[0]
    b = topo.cand_body[ci]
    nrm = frame_n[ci]
    f = inv_dt * (impulse[3 * ci] * nrm + impulse[3 * ci + 1] * frame_t1[ci] + impulse[3 * ci + 2] * frame_t2[ci])
    x = cpoint[ci]
    X = body_q[b]
    shape0[ci] = topo.cand_shape[ci]
    shape1[ci] = topo.cand_plane[ci]
    point0[ci] = wp.transform_point(wp.transform_inverse(X), x)
    point1[ci] = x
    normal[ci] = -nrm
    force_vec[ci] = f
    if write_spatial != 0:
        lever = x - wp.transform_point(X, body_com[b])
        force_spatial[ci] = wp.spatial_vector(f, wp.cross(lever, f))
