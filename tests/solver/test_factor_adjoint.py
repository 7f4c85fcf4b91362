"""The hand-written adjoint of factor_and_solve (solver/factor_adjoint.py) against Warp's generated adjoint of the
same kernel and against central finite differences, on a real step's mass matrix (ANYmal C, 3 worlds)."""

import numpy as np
import warp as wp
from helpers.taped_scratch import taped_step

from isaaclab_diffsim.solver import kernels
from isaaclab_diffsim.solver.factor_adjoint import factor_and_solve_adjoint
from isaaclab_diffsim.solver.taped_launch import struct_adjoint

WORLDS = 3


def factored_step():
    """A taped step's scratch set (H, h and their factor and solves) and the solver."""
    solver, sc, _, _ = taped_step(WORLDS)
    return solver, sc


def outputs(sc):
    return [sc.L, sc.L_acc, sc.y, sc.y_acc, sc.acc, sc.x_acc]


def forward(solver, sc, H, h):
    wp.launch(
        kernels.factor_and_solve,
        dim=solver.layout.articulation_count,
        inputs=[solver.layout.topo, H, h],
        outputs=outputs(sc),
        device="cpu",
        record_tape=False,
    )


def seeds(sc, rng):
    """Random output gradients for L, y, x (the accumulators get none: nothing downstream reads them)."""
    return {name: rng.normal(size=getattr(sc, name).shape).astype(np.float32) for name in ("L", "y", "acc")}


def warp_adjoint(solver, sc, seed):
    """(H, h) gradients from Warp's generated adjoint of factor_and_solve."""
    H_grad, h_grad = wp.zeros_like(sc.H), wp.zeros_like(sc.hvec)
    adj_out = [wp.zeros_like(a) for a in outputs(sc)]
    for i, name in ((0, "L"), (2, "y"), (4, "acc")):
        adj_out[i].assign(seed[name])
    wp.launch(
        kernels.factor_and_solve,
        dim=solver.layout.articulation_count,
        inputs=[solver.layout.topo, sc.H, sc.hvec],
        outputs=outputs(sc),
        adj_inputs=[struct_adjoint(solver.layout.topo), H_grad, h_grad],
        adj_outputs=adj_out,
        adjoint=True,
        device="cpu",
    )
    return H_grad.numpy(), h_grad.numpy()


def hand_adjoint(solver, sc, seed):
    H_grad, h_grad = wp.zeros_like(sc.H), wp.zeros_like(sc.hvec)
    grads = {name: wp.array(seed[name], dtype=float, device="cpu") for name in seed}
    wp.launch(
        factor_and_solve_adjoint,
        dim=solver.layout.articulation_count,
        inputs=[solver.layout.topo, sc.H, sc.L, sc.L_acc, sc.y, sc.acc, grads["L"], grads["y"], grads["acc"]],
        outputs=[H_grad, h_grad],
        device="cpu",
    )
    return H_grad.numpy(), h_grad.numpy()


def test_hand_adjoint_is_warps():
    solver, sc = factored_step()
    seed = seeds(sc, np.random.default_rng(0))
    ours = hand_adjoint(solver, sc, seed)
    ref = warp_adjoint(solver, sc, seed)
    for a, b in zip(ours, ref):
        assert np.abs(b).max() > 0
        np.testing.assert_allclose(a, b, rtol=2e-4, atol=2e-5 * np.abs(b).max())


def test_hand_adjoint_matches_finite_differences():
    solver, sc = factored_step()
    seed = seeds(sc, np.random.default_rng(1))
    H_grad, h_grad = hand_adjoint(solver, sc, seed)
    H0, h0 = sc.H.numpy().astype(np.float64), sc.hvec.numpy().astype(np.float64)

    def loss(H, h):
        Hw, hw = wp.array(H.astype(np.float32), device="cpu"), wp.array(h.astype(np.float32), device="cpu")
        forward(solver, sc, Hw, hw)
        return sum(float(np.dot(seed[n].astype(np.float64), getattr(sc, n).numpy())) for n in seed)

    rng = np.random.default_rng(2)
    read = np.flatnonzero(H_grad)  # the entries the factor reads (lower triangle and diagonal of each block)
    for idx in rng.choice(read, 6, replace=False):
        eps = 1e-3 * max(abs(H0[idx]), 1.0)
        up, down = H0.copy(), H0.copy()
        up[idx] += eps
        down[idx] -= eps
        fd = (loss(up, h0) - loss(down, h0)) / (2 * eps)
        assert abs(fd - H_grad[idx]) <= 2e-2 * abs(H_grad[idx]) + 1e-3, (idx, fd, H_grad[idx])
    for idx in rng.choice(h0.size, 4, replace=False):
        eps = 1e-2
        up, down = h0.copy(), h0.copy()
        up[idx] += eps
        down[idx] -= eps
        fd = (loss(H0, up) - loss(H0, down)) / (2 * eps)
        assert abs(fd - h_grad[idx]) <= 2e-2 * abs(h_grad[idx]) + 1e-3, (idx, fd, h_grad[idx])
