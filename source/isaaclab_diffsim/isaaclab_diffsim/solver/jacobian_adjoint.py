"""Hand-written adjoint of ``kernels.contact_jacobians`` (pure Warp, no torch, no isaaclab).

The forward writes, per candidate i on body b with contact frame (n, o, t1, t2) and radius rho: p = X_b pt,
d = n . (p - o) - rho, x = p - rho n, the Jacobian rows J_k = (n, t1, t2) . (s_k + w_k x x) over the dofs k of the
body's chain (s_k, w_k the linear and angular parts of S_k), Z_k = (J_k - sum_(m below k) L_mk Z_m) / L_kk (leaves to
root), then G_iq = sum_k Z_ik Z_qk^T over the chains' common dofs and c_i = sum_k J_ik (qd_k + dt acc_k). Reversed:

  c:  Jbar_ik += cbar_i (qd_k + dt acc_k),  qdbar_k += cbar_i . J_ik,  accbar_k += dt cbar_i . J_ik;
  G:  with Gbar_iq the adjoint of the block (both mirrored entries summed),
      Zbar_ik += Gbar_iq Z_qk,  Zbar_qk += Gbar_iq^T Z_ik;
  Z (root to leaves): Jbar_k += Zbar_k / L_kk,  Lbar_kk -= Zbar_k . Z_k / L_kk,
      and with r = -Zbar_k / L_kk: Lbar_mk += r . Z_m,  Zbar_m += r L_mk  (m below k);
  J:  colbar = (n, t1, t2)^T Jbar_k:  sbar_k += colbar,  wbar_k += x x colbar,  xbar += colbar x w_k,  and the frame
      vectors get Jbar_k's rows times the column when they carry gradients (terrain);
  d, x:  pbar = xbar + dbar n,  nbar += dbar (p - o) - rho xbar,  obar -= dbar n;
  p = t + R(r) pt:  tbar += pbar, and r's adjoint through Warp's quat_rotate formula,
      rbar_w = 4 w pbar . pt + 2 pbar . (r_v x pt),  rbar_v = 2 (pbar . r_v) pt + 2 (r_v . pt) pbar + 2 w (pt x pbar).

Warp's generated adjoint re-runs each loop iteration's forward before its reverse; this one reads the stored J and
Z. It covers fixed-point candidates (``supported``: an ellipsoid's support point moves on the body, and keeps Warp's
adjoint). The output gradients of J and Z serve as working adjoints and are left modified. Equal to Warp's adjoint up
to the order of float additions, and to central finite differences (tests/solver/test_jacobian_adjoint.py).
"""

from __future__ import annotations

import numpy as np
import warp as wp

from .kernel_options import module_options
from .kernels import chain_dof, on_chain
from .spatial import point_velocity_column
from .topology import Topology

wp.set_module_options(module_options(enable_backward=False))


def supported(topo: Topology) -> bool:
    """Whether :func:`contact_jacobians_adjoint` covers the model's candidates: none is an ellipsoid's support
    point."""
    semi_axes = topo.cand_ellipsoid.numpy()[:, 0] if topo.cand_ellipsoid.shape[0] else np.zeros(0)
    return not (semi_axes > 0.0).any()


@wp.func
def quat_rotate_adjoint_q(r: wp.quat, x: wp.vec3, g: wp.vec3):
    """The adjoint of r in ``wp.quat_rotate(r, x)`` for the output adjoint g (Warp's formula
    x (2 w^2 - 1) + 2 r_v (r_v . x) + 2 w r_v x x, exact also off the unit sphere)."""
    rv = wp.vec3(r[0], r[1], r[2])
    w = r[3]
    v_bar = 2.0 * wp.dot(g, rv) * x + 2.0 * wp.dot(rv, x) * g + 2.0 * w * wp.cross(x, g)
    w_bar = 4.0 * w * wp.dot(g, x) + 2.0 * wp.dot(g, wp.cross(rv, x))
    return wp.quat(v_bar[0], v_bar[1], v_bar[2], w_bar)


@wp.func
def z_row(Z: wp.array(dtype=float), r0: int, n: int, kl: int):
    """Entry kl of the three Z rows of a candidate starting at r0."""
    return wp.vec3(Z[r0 + kl], Z[r0 + n + kl], Z[r0 + 2 * n + kl])


@wp.func
def add_z_row(Z: wp.array(dtype=float), r0: int, n: int, kl: int, v: wp.vec3):
    for rr in range(3):
        Z[r0 + rr * n + kl] = Z[r0 + rr * n + kl] + v[rr]


@wp.kernel
def contact_jacobians_adjoint(
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
    J: wp.array(dtype=float),
    Z: wp.array(dtype=float),
    dist_grad: wp.array(dtype=float),
    cpoint_grad: wp.array(dtype=wp.vec3),
    G_grad: wp.array(dtype=float),
    c_free_grad: wp.array(dtype=float),
    J_grad: wp.array(dtype=float),
    Z_grad: wp.array(dtype=float),
    has_qd_grad: int,
    has_frame_grad: int,
    body_X_grad: wp.array(dtype=wp.transform),
    S_grad: wp.array(dtype=wp.spatial_vector),
    L_grad: wp.array(dtype=float),
    qd_grad: wp.array(dtype=float),
    acc_grad: wp.array(dtype=float),
    frame_n_grad: wp.array(dtype=wp.vec3),
    frame_origin_grad: wp.array(dtype=wp.vec3),
    frame_t1_grad: wp.array(dtype=wp.vec3),
    frame_t2_grad: wp.array(dtype=wp.vec3),
):
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
    j0 = topo.art_joint_start[a]
    nj = topo.art_joint_end[a] - j0
    aoff = topo.art_anc_off[a]

    # c = J (qd + dt acc) and G = Z^T Z, reversed
    for i in range(nc):
        leaf = topo.body_dof[topo.cand_body[c0 + i]]
        if leaf >= 0:
            for rr in range(3):
                r = 3 * i + rr
                g = c_free_grad[3 * c0 + r]
                for t in range(topo.dof_anc_start[leaf] - 1, topo.dof_anc_start[leaf + 1]):
                    k = chain_dof(topo, leaf, t)
                    e = joff + r * n + k - dof0
                    J_grad[e] = J_grad[e] + g * (qd[k] + dt * acc[k])
                    if has_qd_grad != 0:
                        qd_grad[k] = qd_grad[k] + g * J[e]
                    acc_grad[k] = acc_grad[k] + dt * g * J[e]
            for q in range(i + 1):
                leaf_q = topo.body_dof[topo.cand_body[c0 + q]]
                gb = wp.mat33(0.0)
                for rr in range(3):
                    for qq in range(3):
                        r = 3 * i + rr
                        qr = 3 * q + qq
                        if q < i or qq <= rr:
                            v = G_grad[goff + r * m + qr]
                            if qr != r:
                                v = v + G_grad[goff + qr * m + r]
                            gb[rr, qq] = v
                for t in range(topo.dof_anc_start[leaf] - 1, topo.dof_anc_start[leaf + 1]):
                    k = chain_dof(topo, leaf, t)
                    if on_chain(topo, aoff, j0, nj, k, leaf_q) != 0:
                        kl = k - dof0
                        yi = z_row(Z, joff + 3 * i * n, n, kl)
                        yq = z_row(Z, joff + 3 * q * n, n, kl)
                        add_z_row(Z_grad, joff + 3 * i * n, n, kl, gb * yq)
                        add_z_row(Z_grad, joff + 3 * q * n, n, kl, wp.transpose(gb) * yi)

    # Z = L^-T J along each chain reversed (root first), then J's, x's and p's dependencies
    for i in range(nc):
        ci = c0 + i
        b = topo.cand_body[ci]
        nrm = frame_n[ci]
        t1 = frame_t1[ci]
        t2 = frame_t2[ci]
        X = body_X[b]
        pt = topo.cand_point[ci]
        p = wp.transform_point(X, pt)
        rad = topo.cand_radius[ci]
        x = p - rad * nrm
        x_bar = cpoint_grad[ci]
        n_bar = wp.vec3(0.0)
        t1_bar = wp.vec3(0.0)
        t2_bar = wp.vec3(0.0)
        leaf = topo.body_dof[b]
        r0 = joff + 3 * i * n
        if leaf >= 0:
            first = topo.dof_anc_start[leaf] - 1
            last = topo.dof_anc_start[leaf + 1]
            for tt in range(last - first):
                t = last - 1 - tt
                k = chain_dof(topo, leaf, t)
                kl = k - dof0
                lkk = L[hoff + kl * n + kl]
                z_bar = z_row(Z_grad, r0, n, kl)
                L_grad[hoff + kl * n + kl] = L_grad[hoff + kl * n + kl] - wp.dot(z_bar, z_row(Z, r0, n, kl)) / lkk
                add_z_row(J_grad, r0, n, kl, z_bar / lkk)
                s_bar = -z_bar / lkk
                for u in range(first, t):
                    ml = chain_dof(topo, leaf, u) - dof0
                    e = hoff + ml * n + kl
                    L_grad[e] = L_grad[e] + wp.dot(s_bar, z_row(Z, r0, n, ml))
                    add_z_row(Z_grad, r0, n, ml, s_bar * L[e])
                j_bar = z_row(J_grad, r0, n, kl)
                sk = S[k]
                col_bar = j_bar[0] * nrm + j_bar[1] * t1 + j_bar[2] * t2
                S_grad[k] = S_grad[k] + wp.spatial_vector(col_bar, wp.cross(x, col_bar))
                x_bar = x_bar + wp.cross(col_bar, wp.spatial_bottom(sk))
                if has_frame_grad != 0:
                    col = point_velocity_column(sk, x)
                    n_bar = n_bar + j_bar[0] * col
                    t1_bar = t1_bar + j_bar[1] * col
                    t2_bar = t2_bar + j_bar[2] * col
        d_bar = dist_grad[ci]
        p_bar = x_bar + d_bar * nrm
        if has_frame_grad != 0:
            n_bar = n_bar + d_bar * (p - frame_origin[ci]) - rad * x_bar
            frame_n_grad[ci] = frame_n_grad[ci] + n_bar
            frame_origin_grad[ci] = frame_origin_grad[ci] - d_bar * nrm
            frame_t1_grad[ci] = frame_t1_grad[ci] + t1_bar
            frame_t2_grad[ci] = frame_t2_grad[ci] + t2_bar
        r_bar = quat_rotate_adjoint_q(wp.transform_get_rotation(X), pt, p_bar)
        body_X_grad[b] = body_X_grad[b] + wp.transform(p_bar, r_bar)


class JacobianAdjoint:
    """The backward of one ``contact_jacobians`` launch over an articulation range, as a tape function
    (``tape.record_func``): :func:`contact_jacobians_adjoint` on the step's scratch set ``sc``."""

    def __init__(self, topo: Topology, articulations: int, sc, qd, dt: float, sink, device):
        """``qd``: the step's input velocities; ``sink``: a dof-sized array passed in place of a missing qd
        gradient (not written)."""
        self.topo, self.articulations, self.sc, self.qd, self.dt = topo, articulations, sc, qd, float(dt)
        self.sink, self.device = sink, device

    def arrays(self) -> list:
        """The forward launch's array arguments (what :func:`isaaclab_diffsim.bridge.tape_nbytes` counts)."""
        sc = self.sc
        inputs = [sc.body_X, sc.S, sc.L, self.qd, sc.acc, *sc.frames]
        return inputs + [sc.dist, sc.cpoint, sc.J, sc.Z, sc.Z_acc, sc.G, sc.c_free]

    def __call__(self) -> None:
        sc = self.sc
        frame_grads = [f.grad for f in sc.frames]
        has_frames = all(g is not None for g in frame_grads)
        wp.launch(
            contact_jacobians_adjoint,
            dim=self.articulations,
            inputs=[
                self.topo,
                sc.body_X,
                sc.S,
                sc.L,
                self.qd,
                sc.acc,
                self.dt,
                *sc.frames,
                sc.J,
                sc.Z,
                sc.dist.grad,
                sc.cpoint.grad,
                sc.G.grad,
                sc.c_free.grad,
                sc.J.grad,
                sc.Z.grad,
                int(self.qd.grad is not None),
                int(has_frames),
            ],
            outputs=[
                sc.body_X.grad,
                sc.S.grad,
                sc.L.grad,
                self.qd.grad if self.qd.grad is not None else self.sink,
                sc.acc.grad,
                *(frame_grads if has_frames else sc.frames),
            ],
            device=self.device,
            record_tape=False,
        )
