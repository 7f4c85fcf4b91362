"""Implicit adjoint of the Gauss-Seidel contact solve (pure Warp, no torch, no isaaclab).

The projected Gauss-Seidel sweeps converge to impulses p that satisfy, per contact i with coupled residual
r_i = sum_j W_ij G_ij p_j + c_i + b_i (W_ii = 1, W_ij = s(d_j) in smoothed mode, 1 in hard mode; b_i the
Baumgarte bias on the normal row), one of:

  separated (p_n = 0 or candidate inactive):  p_i = 0
  sticking (|p_t| < mu p_n):                  r_i = 0                                     (3 rows)
  sliding (|p_t| = mu p_n):                   r_n = 0,  n.p_t + mu p_n = 0,  p_t = -mu p_n r_t / |r_t|

with n = r_t / |r_t| the slip direction. The soft model adds its compliance C_i p_i to r_i and its spring bias
(ke / kd) min(d_i, 0) to b_i (kernels.soft_contact_terms); both enter the rows below unchanged. Linearised with the
active set and the slip direction frozen at the solution, the sliding rows read (e = n rotated by 90 degrees in the
tangent plane, alpha = |r_t| / (mu p_n))

  dr_n = 0,   n.dp_t + mu dp_n = 0,   alpha e.dp_t + e.dr_t = 0,

which tends to sticking along e as the slip speed vanishes, so the stick/slip boundary stays well posed.
Collecting the rows gives A dp = -B de with de = d(W G) p + W dG p + dc + db (implicit function theorem).
For a loss gradient g = dL/dp the adjoint is y = A^-T g, lambda = -B^T y, and dL/dc = lambda,
dL/dG_ij = W_ij lambda_i p_j^T, dL/ds_j = sum_(i != j) lambda_i . G_ij p_j (+ the final scaling P = s p).
The result does not depend on the number of sweeps and needs no per-sweep storage.

This module only holds backward kernels; they are never differentiated themselves.
"""

import warp as wp

from .kernel_options import module_options
from .kernels import CHOL_EPS, SIGMOID_EXP_CLAMP, contact_mu, soft_contact_terms
from .topology import Topology
from .type_ids import MODEL_SMOOTHED, MODEL_SOFT

wp.set_module_options(module_options(enable_backward=False))

KIND_SEPARATED = wp.constant(0)
KIND_STICKING = wp.constant(1)
KIND_SLIDING = wp.constant(2)
KIND_FRICTIONLESS = wp.constant(3)

# a contact whose tangential impulse is within this fraction of the cone radius counts as sliding
SLIP_TOL = wp.constant(1.0e-4)
# Tikhonov term on the constraint rows, relative to the contact's G_nn (keeps redundant sticking contacts,
# e.g. eight box corners on 18 dofs, solvable; about 1e-5 relative bias on well-posed ones)
REGULARIZATION = wp.constant(1.0e-5)
# When the solve amplifies g by more than MAX_GAIN (in units of 1 / max G_rr), A is nearly singular: a sliding
# foot whose normal-tangential coupling cancels its normal response (G_nn - mu G_nt.n ~ 0, Painleve), or a solve
# stopped far from its fixed point. The exact sensitivity is then unbounded or meaningless; the system is solved
# again with FALLBACK_REGULARIZATION, which bounds the gain at about its inverse.
MAX_GAIN = wp.constant(1.0e3)
FALLBACK_REGULARIZATION = wp.constant(1.0e-2)


@wp.func
def coupling_weight(contact_model: int, weight: wp.array(dtype=float), cj: int, i: int, j: int):
    w = float(1.0)
    if i != j and contact_model == MODEL_SMOOTHED:
        w = weight[cj]
    return w


@wp.func
def g_block_row(G: wp.array(dtype=float), goff: int, m: int, row: int, col0: int, p: wp.vec3):
    """(G_ij p_j) for the 3 rows starting at ``row`` and the contact block starting at column ``col0``."""
    out = wp.vec3(0.0)
    for r in range(3):
        out[r] = (
            G[goff + (row + r) * m + col0] * p[0]
            + G[goff + (row + r) * m + col0 + 1] * p[1]
            + G[goff + (row + r) * m + col0 + 2] * p[2]
        )
    return out


@wp.func
def load_p(p: wp.array(dtype=float), ci: int):
    return wp.vec3(p[3 * ci], p[3 * ci + 1], p[3 * ci + 2])


@wp.func
def solve_adjoint_system(
    topo: Topology,
    contact_model: int,
    G: wp.array(dtype=float),
    weight: wp.array(dtype=float),
    adj_impulse: wp.array(dtype=float),
    M: wp.array(dtype=float),
    y: wp.array(dtype=float),
    kind: wp.array(dtype=int),
    slip: wp.array(dtype=wp.vec3),
    nc: int,
    c0: int,
    goff: int,
    regularization: float,
    dist: wp.array(dtype=float),
    soft: wp.vec3,
):
    """Build A^T (rows of the linearised fixed-point conditions, see the module docstring) into M and solve
    A^T y = g in place; returns the gain max|y| max(G_rr) / max|g| (1 to ~100 when A is well conditioned)."""
    m = 3 * nc
    # M = A^T, row-major: M[col * m + row] = A[row, col]
    for i in range(nc):
        ci = c0 + i
        row = 3 * i
        k = kind[ci]
        reg = regularization * wp.max(G[goff + row * m + row], CHOL_EPS)
        n1 = slip[ci][0]
        n2 = slip[ci][1]
        e1 = -n2
        e2 = n1
        cc = soft_contact_terms(contact_model, soft, dist[ci])
        for j in range(nc):
            w = coupling_weight(contact_model, weight, c0 + j, i, j)
            for l in range(3):
                col = 3 * j + l
                g0 = w * G[goff + row * m + col]
                g1 = w * G[goff + (row + 1) * m + col]
                g2 = w * G[goff + (row + 2) * m + col]
                if j == i:
                    g0 += wp.where(l == 0, cc[0], 0.0)
                    g1 += wp.where(l == 1, cc[1], 0.0)
                    g2 += wp.where(l == 2, cc[2], 0.0)
                a0 = float(0.0)
                a1 = float(0.0)
                a2 = float(0.0)
                if k == KIND_STICKING:
                    a0 = g0
                    a1 = g1
                    a2 = g2
                if k == KIND_SLIDING:
                    a0 = g0
                    a2 = e1 * g1 + e2 * g2
                if k == KIND_FRICTIONLESS:
                    a0 = g0
                M[goff + col * m + row] = a0
                M[goff + col * m + row + 1] = a1
                M[goff + col * m + row + 2] = a2
        if k == KIND_SEPARATED:
            for r in range(3):
                M[goff + (row + r) * m + row + r] = 1.0
        else:
            M[goff + row * m + row] = M[goff + row * m + row] + reg
        if k == KIND_STICKING:
            M[goff + (row + 1) * m + row + 1] = M[goff + (row + 1) * m + row + 1] + reg
            M[goff + (row + 2) * m + row + 2] = M[goff + (row + 2) * m + row + 2] + reg
        if k == KIND_SLIDING:
            # n.dp_t + mu dp_n = 0, scaled by G_nn to the units of the other rows
            gs = wp.max(G[goff + row * m + row], CHOL_EPS)
            M[goff + row * m + row + 1] = gs * contact_mu(topo, ci)
            M[goff + (row + 1) * m + row + 1] = gs * n1
            M[goff + (row + 2) * m + row + 1] = gs * n2
            alpha = slip[ci][2]
            M[goff + (row + 1) * m + row + 2] = M[goff + (row + 1) * m + row + 2] + alpha * e1
            M[goff + (row + 2) * m + row + 2] = M[goff + (row + 2) * m + row + 2] + alpha * e2 + reg
        if k == KIND_FRICTIONLESS:
            M[goff + (row + 1) * m + row + 1] = 1.0
            M[goff + (row + 2) * m + row + 2] = 1.0

    # y = A^-T g with g = dL/dp = s dL/dP, by Gaussian elimination with partial pivoting
    y0 = 3 * c0
    for i in range(nc):
        ci = c0 + i
        for r in range(3):
            y[y0 + 3 * i + r] = weight[ci] * adj_impulse[3 * ci + r]
    for col in range(m):
        piv = col
        best = wp.abs(M[goff + col * m + col])
        for r in range(col + 1, m):
            v = wp.abs(M[goff + r * m + col])
            if v > best:
                best = v
                piv = r
        if piv != col:
            for c in range(col, m):
                tmp = M[goff + col * m + c]
                M[goff + col * m + c] = M[goff + piv * m + c]
                M[goff + piv * m + c] = tmp
            tmp = y[y0 + col]
            y[y0 + col] = y[y0 + piv]
            y[y0 + piv] = tmp
        d = M[goff + col * m + col]
        if wp.abs(d) < 1.0e-30:
            d = 1.0e-30
            M[goff + col * m + col] = d
        for r in range(col + 1, m):
            f = M[goff + r * m + col] / d
            if f != 0.0:
                for c in range(col, m):
                    M[goff + r * m + c] = M[goff + r * m + c] - f * M[goff + col * m + c]
                y[y0 + r] = y[y0 + r] - f * y[y0 + col]
    for ii in range(m):
        r = m - 1 - ii
        acc = y[y0 + r]
        for c in range(r + 1, m):
            acc = acc - M[goff + r * m + c] * y[y0 + c]
        y[y0 + r] = acc / M[goff + r * m + r]

    g_max = float(0.0)
    y_max = float(0.0)
    diag = float(0.0)
    for r in range(m):
        y_max = wp.max(y_max, wp.abs(y[y0 + r]))
        g_max = wp.max(g_max, wp.abs(weight[c0 + r // 3] * adj_impulse[3 * c0 + r]))
        diag = wp.max(diag, G[goff + r * m + r])
    gain = float(0.0)
    if g_max > 0.0:
        gain = y_max * diag / g_max
    return gain


@wp.kernel
def contact_adjoint(
    topo: Topology,
    contact_model: int,
    kappa: wp.array(dtype=float),
    stabilization: float,
    soft: wp.vec3,
    dt: float,
    dist: wp.array(dtype=float),
    G: wp.array(dtype=float),
    c_free: wp.array(dtype=float),
    weight: wp.array(dtype=float),
    p_final: wp.array(dtype=float),
    adj_impulse: wp.array(dtype=float),
    M: wp.array(dtype=float),
    y: wp.array(dtype=float),
    kind: wp.array(dtype=int),
    slip: wp.array(dtype=wp.vec3),
    adj_dist: wp.array(dtype=float),
    adj_G: wp.array(dtype=float),
    adj_c_free: wp.array(dtype=float),
    adj_kappa: wp.array(dtype=float),
    write_kappa: int,
):
    """Accumulate dL/d(dist, G, c_free, kappa) from dL/d(impulse) at the converged impulses (one articulation
    per thread). M (G-sized), y (3 per candidate), kind and slip (1 per candidate) are scratch."""
    a = wp.tid()
    nc = topo.art_ncand[a]
    if nc == 0:
        return
    m = 3 * nc
    c0 = topo.art_cand_start[a]
    goff = topo.art_g_off[a]

    # active set and slip directions at the solution
    for i in range(nc):
        ci = c0 + i
        p = load_p(p_final, ci)
        k = KIND_SEPARATED
        sl = wp.vec3(0.0)
        if weight[ci] > 0.0 and p[0] > 0.0:
            k = KIND_STICKING
            lim = contact_mu(topo, ci) * p[0]
            tn = wp.sqrt(p[1] * p[1] + p[2] * p[2])
            if lim <= 0.0:
                k = KIND_FRICTIONLESS
            elif tn >= lim * (1.0 - SLIP_TOL):
                k = KIND_SLIDING
                n1 = -p[1] / tn
                n2 = -p[2] / tn
                rv = wp.vec3(c_free[3 * ci], c_free[3 * ci + 1], c_free[3 * ci + 2])
                for j in range(nc):
                    rv += coupling_weight(contact_model, weight, c0 + j, i, j) * g_block_row(
                        G, goff, m, 3 * i, 3 * j, load_p(p_final, c0 + j)
                    )
                cc = soft_contact_terms(contact_model, soft, dist[ci])
                rv += wp.cw_mul(wp.vec3(cc[0], cc[1], cc[2]), p)
                sl = wp.vec3(n1, n2, wp.max(rv[1] * n1 + rv[2] * n2, 0.0) / lim)
        kind[ci] = k
        slip[ci] = sl

    # y = A^-T g; retried with a stronger Tikhonov term when A is nearly singular
    gain = solve_adjoint_system(
        topo, contact_model, G, weight, adj_impulse, M, y, kind, slip, nc, c0, goff, REGULARIZATION, dist, soft
    )
    if not (gain <= MAX_GAIN):
        solve_adjoint_system(
            topo,
            contact_model,
            G,
            weight,
            adj_impulse,
            M,
            y,
            kind,
            slip,
            nc,
            c0,
            goff,
            FALLBACK_REGULARIZATION,
            dist,
            soft,
        )
    y0 = 3 * c0

    # lambda = -B^T y, stored over y
    for i in range(nc):
        ci = c0 + i
        k = kind[ci]
        base = y0 + 3 * i
        l0 = -y[base]
        l1 = -y[base + 1]
        l2 = -y[base + 2]
        if k == KIND_SEPARATED:
            l0 = 0.0
            l1 = 0.0
            l2 = 0.0
        if k == KIND_SLIDING:
            e1 = -slip[ci][1]
            e2 = slip[ci][0]
            yt = y[base + 2]
            l1 = -e1 * yt
            l2 = -e2 * yt
        if k == KIND_FRICTIONLESS:
            l1 = 0.0
            l2 = 0.0
        y[base] = l0
        y[base + 1] = l1
        y[base + 2] = l2

    # dL/dc, dL/db, dL/dG
    for i in range(nc):
        ci = c0 + i
        row = 3 * i
        lam = wp.vec3(y[y0 + row], y[y0 + row + 1], y[y0 + row + 2])
        for r in range(3):
            adj_c_free[3 * ci + r] += lam[r]
        if stabilization > 0.0 and dist[ci] < 0.0:
            adj_dist[ci] += lam[0] * stabilization / dt
        if contact_model == MODEL_SOFT and dist[ci] < 0.0:
            adj_dist[ci] += lam[0] * soft[2]
        if kind[ci] != KIND_SEPARATED:
            for j in range(nc):
                w = coupling_weight(contact_model, weight, c0 + j, i, j)
                pj = load_p(p_final, c0 + j)
                for r in range(3):
                    for l in range(3):
                        adj_G[goff + (row + r) * m + 3 * j + l] += w * lam[r] * pj[l]

    # dL/ds through the coupling weights and the final scaling P = s p, then s(d) -> d, kappa
    if contact_model == MODEL_SMOOTHED:
        kap = kappa[0]
        adj_k = float(0.0)
        for j in range(nc):
            cj = c0 + j
            s = weight[cj]
            if s > 0.0:
                pj = load_p(p_final, cj)
                adj_s = wp.dot(pj, wp.vec3(adj_impulse[3 * cj], adj_impulse[3 * cj + 1], adj_impulse[3 * cj + 2]))
                for i in range(nc):
                    if i != j and kind[c0 + i] != KIND_SEPARATED:
                        lam = wp.vec3(y[y0 + 3 * i], y[y0 + 3 * i + 1], y[y0 + 3 * i + 2])
                        adj_s += wp.dot(lam, g_block_row(G, goff, m, 3 * i, 3 * j, pj))
                e = kap * dist[cj]
                if wp.abs(e) < SIGMOID_EXP_CLAMP:
                    ds_de = -s * (1.0 - s)
                    adj_dist[cj] += adj_s * ds_de * kap
                    adj_k += adj_s * ds_de * dist[cj]
        if write_kappa != 0:
            wp.atomic_add(adj_kappa, 0, adj_k)
