"""Hand-written adjoint of ``kernels.update_velocities`` (pure Warp, no torch, no isaaclab).

The forward gathers w = sum_i Z_i P_i over each candidate's chain, solves dv = L^-1 w and writes
v+ = v + dt acc + dv. With g = vbar+ the reverse is vbar += g, accbar += dt g, dvbar = g; the tree solve reversed
(``factor_adjoint.tree_solve_adjoint``: wbar, Lbar); then Zbar_i += wbar P_i^T and Pbar_i += Z_i^T wbar on the chain
entries. Warp's generated adjoint re-runs the forward first; this one reads the stored dv. The gradients of the
intermediates w and dv serve as working adjoints. Equal to Warp's adjoint up to the order of float additions
(tests/solver/test_velocity_adjoint.py).
"""

import warp as wp

from .factor_adjoint import tree_solve_adjoint
from .kernel_options import module_options
from .kernels import chain_dof
from .topology import Topology

wp.set_module_options(module_options(enable_backward=False))


@wp.kernel
def update_velocities_adjoint(
    topo: Topology,
    L: wp.array(dtype=float),
    Z: wp.array(dtype=float),
    impulse: wp.array(dtype=float),
    dv: wp.array(dtype=float),
    dt: float,
    qd_out_grad: wp.array(dtype=float),
    w_grad: wp.array(dtype=float),
    dv_grad: wp.array(dtype=float),
    qd_grad: wp.array(dtype=float),
    acc_grad: wp.array(dtype=float),
    L_grad: wp.array(dtype=float),
    Z_grad: wp.array(dtype=float),
    impulse_grad: wp.array(dtype=float),
):
    a = wp.tid()
    n = topo.art_ndof[a]
    nc = topo.art_ncand[a]
    dof0 = topo.art_dof_start[a]
    joff = topo.art_j_off[a]
    c0 = topo.art_cand_start[a]
    for k in range(n):
        g = qd_out_grad[dof0 + k]
        qd_grad[dof0 + k] = qd_grad[dof0 + k] + g
        acc_grad[dof0 + k] = acc_grad[dof0 + k] + dt * g
        dv_grad[dof0 + k] = dv_grad[dof0 + k] + g
    tree_solve_adjoint(topo, L, topo.art_h_off[a], dof0, n, dv, dv_grad, w_grad, L_grad)
    for i in range(nc):
        ci = c0 + i
        leaf = topo.body_dof[topo.cand_body[ci]]
        if leaf >= 0:
            for t in range(topo.dof_anc_start[leaf] - 1, topo.dof_anc_start[leaf + 1]):
                k = chain_dof(topo, leaf, t)
                kl = k - dof0
                wb = w_grad[k]
                for r in range(3):
                    z = joff + (3 * i + r) * n + kl
                    Z_grad[z] = Z_grad[z] + wb * impulse[3 * ci + r]
                    impulse_grad[3 * ci + r] = impulse_grad[3 * ci + r] + Z[z] * wb


class VelocityAdjoint:
    """The backward of one ``update_velocities`` launch over an articulation range, as a tape function
    (``tape.record_func``): :func:`update_velocities_adjoint` on the step's scratch set ``sc``."""

    def __init__(self, topo: Topology, articulations: int, sc, qd, qd_out, dt: float, zeros, sink, device):
        """``zeros``, ``sink``: dof-sized arrays read in place of a missing ``qd_out.grad`` (zeros) and written in
        place of a missing ``qd.grad`` (never read)."""
        self.topo, self.articulations, self.sc, self.device = topo, articulations, sc, device
        self.qd, self.qd_out, self.dt = qd, qd_out, float(dt)
        self.qd_out_grad = qd_out.grad if qd_out.grad is not None else zeros
        self.qd_grad = qd.grad if qd.grad is not None else sink

    def arrays(self) -> list:
        """The forward launch's array arguments (what :func:`isaaclab_diffsim.bridge.tape_nbytes` counts)."""
        sc = self.sc
        return [self.qd, sc.acc, sc.L, sc.Z, sc.impulse, sc.w, sc.dv, sc.dv_acc, self.qd_out]

    def __call__(self) -> None:
        sc = self.sc
        wp.launch(
            update_velocities_adjoint,
            dim=self.articulations,
            inputs=[self.topo, sc.L, sc.Z, sc.impulse, sc.dv, self.dt, self.qd_out_grad, sc.w.grad, sc.dv.grad],
            outputs=[self.qd_grad, sc.acc.grad, sc.L.grad, sc.Z.grad, sc.impulse.grad],
            device=self.device,
            record_tape=False,
        )
