"""Hand-written adjoint of ``kernels.factor_and_solve`` (pure Warp, no torch, no isaaclab).

The forward factors H = L^T L (tree sparsity, leaves first) and solves y = L^-T h, x = L^-1 y. Warp's generated
adjoint re-runs each loop iteration's forward before its reverse; this one reads the stored L, y, x and only runs
the reverse sweeps, in reverse order of the forward:

  x = L^-1 y (root to leaves), reversed leaves to root: with r_k = -xbar_k / L_kk,
      ybar_k += xbar_k / L_kk,  Lbar_kk += r_k x_k,  Lbar_ki += r_k x_i,  xbar_i += r_k L_ki  (i above k);
  y = L^-T h (leaves to root), reversed root to leaves: with r_k = -ybar_k / L_kk,
      hbar_k += ybar_k / L_kk,  Lbar_kk += r_k y_k,  Lbar_mk += r_k y_m,  ybar_m += r_k L_mk  (m below k);
  L_ki = (H_ki - sum_m L_mk L_mi) / L_kk and L_kk = sqrt(max(H_kk - sum_m L_mk^2, eps)), reversed root first
  (row k's off-diagonal entries before its diagonal, which they read): with d = -Lbar_ki / L_kk,
      Hbar_ki += Lbar_ki / L_kk,  Lbar_kk += d L_ki,  Lbar_mk += d L_mi,  Lbar_mi += d L_mk;
  then, unless the max clamped (Warp's rule: the clamp gets the gradient on a tie), with g = Lbar_kk / (2 L_kk),
      Hbar_kk += g,  Lbar_mk -= 2 g L_mk.

Every adjoint of row k goes to rows not yet reversed, so one sweep per stage suffices. The output gradients
(L, y, x) serve as the working adjoints and are left modified; nothing reads them after this kernel's backward.
Equal to Warp's adjoint up to the order of float additions (tests/solver/test_factor_adjoint.py).
"""

import warp as wp

from .kernel_options import module_options
from .kernels import CHOL_EPS
from .topology import Topology

wp.set_module_options(module_options(enable_backward=False))


@wp.func
def tree_solve_adjoint(
    topo: Topology,
    L: wp.array(dtype=float),
    off: int,
    dof0: int,
    n: int,
    x: wp.array(dtype=float),
    x_grad: wp.array(dtype=float),
    y_grad: wp.array(dtype=float),
    L_grad: wp.array(dtype=float),
):
    """The reverse of ``kernels.tree_solve`` (x = L^-1 y, root to leaves), leaves to root: adds into y_grad and
    L_grad (and, for the ancestors' terms, x_grad)."""
    for kk in range(n):
        k = dof0 + n - 1 - kk
        kl = k - dof0
        lkk = L[off + kl * n + kl]
        r = -x_grad[k] / lkk
        y_grad[k] = y_grad[k] + x_grad[k] / lkk
        L_grad[off + kl * n + kl] = L_grad[off + kl * n + kl] + r * x[k]
        for t in range(topo.dof_anc_start[k], topo.dof_anc_start[k + 1]):
            i = topo.dof_anc[t]
            il = i - dof0
            L_grad[off + kl * n + il] = L_grad[off + kl * n + il] + r * x[i]
            x_grad[i] = x_grad[i] + r * L[off + kl * n + il]


@wp.kernel
def factor_and_solve_adjoint(
    topo: Topology,
    H: wp.array(dtype=float),
    L: wp.array(dtype=float),
    L_acc: wp.array(dtype=float),
    y: wp.array(dtype=float),
    x: wp.array(dtype=float),
    L_grad: wp.array(dtype=float),
    y_grad: wp.array(dtype=float),
    x_grad: wp.array(dtype=float),
    H_grad: wp.array(dtype=float),
    h_grad: wp.array(dtype=float),
):
    a = wp.tid()
    n = topo.art_ndof[a]
    off = topo.art_h_off[a]
    dof0 = topo.art_dof_start[a]
    tree_solve_adjoint(topo, L, off, dof0, n, x, x_grad, y_grad, L_grad)  # x = L^-1 y
    for kk in range(n):  # y = L^-T h, reversed: root to leaves
        k = dof0 + kk
        kl = kk
        lkk = L[off + kl * n + kl]
        r = -y_grad[k] / lkk
        h_grad[k] = h_grad[k] + y_grad[k] / lkk
        L_grad[off + kl * n + kl] = L_grad[off + kl * n + kl] + r * y[k]
        for t in range(topo.dof_desc_start[k], topo.dof_desc_start[k + 1]):
            m = topo.dof_desc[t]
            ml = m - dof0
            L_grad[off + ml * n + kl] = L_grad[off + ml * n + kl] + r * y[m]
            y_grad[m] = y_grad[m] + r * L[off + ml * n + kl]
    for kk in range(n):  # the factor, reversed: root first
        k = dof0 + kk
        kl = kk
        dk = off + kl * n + kl
        lkk = L[dk]
        for s in range(topo.dof_anc_start[k], topo.dof_anc_start[k + 1]):
            il = topo.dof_anc[s] - dof0
            lb = L_grad[off + kl * n + il]
            H_grad[off + kl * n + il] = H_grad[off + kl * n + il] + lb / lkk
            d = -lb / lkk
            L_grad[dk] = L_grad[dk] + d * L[off + kl * n + il]
            for t in range(topo.dof_desc_start[k], topo.dof_desc_start[k + 1]):
                ml = topo.dof_desc[t] - dof0
                L_grad[off + ml * n + kl] = L_grad[off + ml * n + kl] + d * L[off + ml * n + il]
                L_grad[off + ml * n + il] = L_grad[off + ml * n + il] + d * L[off + ml * n + kl]
        if H[dk] - L_acc[dk] > CHOL_EPS:
            g = L_grad[dk] * 0.5 / lkk
            H_grad[dk] = H_grad[dk] + g
            for t in range(topo.dof_desc_start[k], topo.dof_desc_start[k + 1]):
                ml = topo.dof_desc[t] - dof0
                L_grad[off + ml * n + kl] = L_grad[off + ml * n + kl] - 2.0 * g * L[off + ml * n + kl]


class FactorAdjoint:
    """The backward of one ``factor_and_solve`` launch over an articulation range, as a tape function
    (``tape.record_func``): :func:`factor_and_solve_adjoint` on the step's scratch set ``sc``."""

    def __init__(self, topo: Topology, articulations: int, sc, device):
        self.topo, self.articulations, self.sc, self.device = topo, articulations, sc, device

    def arrays(self) -> list:
        """The forward launch's array arguments (what :func:`isaaclab_diffsim.bridge.tape_nbytes` counts)."""
        sc = self.sc
        return [sc.H, sc.hvec, sc.L, sc.L_acc, sc.y, sc.y_acc, sc.acc, sc.x_acc]

    def __call__(self) -> None:
        sc = self.sc
        wp.launch(
            factor_and_solve_adjoint,
            dim=self.articulations,
            inputs=[self.topo, sc.H, sc.L, sc.L_acc, sc.y, sc.acc, sc.L.grad, sc.y.grad, sc.acc.grad],
            outputs=[sc.H.grad, sc.hvec.grad],
            device=self.device,
            record_tape=False,
        )
