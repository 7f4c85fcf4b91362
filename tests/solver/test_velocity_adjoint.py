"""The hand-written adjoint of update_velocities (solver/velocity_adjoint.py) against Warp's generated adjoint of the
same kernel and against central finite differences, on a real step's buffers (ANYmal C, 3 worlds, feet loaded)."""

import numpy as np
import warp as wp
from helpers.taped_scratch import taped_step

from isaaclab_diffsim.solver import kernels
from isaaclab_diffsim.solver.taped_launch import struct_adjoint
from isaaclab_diffsim.solver.velocity_adjoint import update_velocities_adjoint

DT = 0.005
INPUTS = ("qd", "acc", "L", "Z", "impulse")


def case():
    solver, sc, s0, _ = taped_step()
    values = {"qd": s0.joint_qd, "acc": sc.acc, "L": sc.L, "Z": sc.Z, "impulse": sc.impulse}
    values = {k: wp.clone(v, requires_grad=False) for k, v in values.items()}
    assert np.abs(values["impulse"].numpy()).max() > 0  # loaded feet: the contact terms take part
    return solver, sc, values


def forward(solver, sc, values, qd_out):
    wp.launch(
        kernels.update_velocities,
        dim=solver.layout.articulation_count,
        inputs=[solver.layout.topo, *(values[k] for k in INPUTS), DT],
        outputs=[sc.w, sc.dv, sc.dv_acc, qd_out],
        device="cpu",
        record_tape=False,
    )


def warp_adjoint(solver, sc, values, seed):
    qd_out = wp.zeros_like(values["qd"])
    forward(solver, sc, values, qd_out)
    grads = {k: wp.zeros_like(v) for k, v in values.items()}
    adj_out = [wp.zeros_like(sc.w), wp.zeros_like(sc.dv), wp.zeros_like(sc.dv_acc), wp.array(seed, device="cpu")]
    wp.launch(
        kernels.update_velocities,
        dim=solver.layout.articulation_count,
        inputs=[solver.layout.topo, *(values[k] for k in INPUTS), DT],
        outputs=[sc.w, sc.dv, sc.dv_acc, qd_out],
        adj_inputs=[struct_adjoint(solver.layout.topo), *(grads[k] for k in INPUTS), 0.0],
        adj_outputs=adj_out,
        adjoint=True,
        device="cpu",
    )
    return {k: g.numpy() for k, g in grads.items()}


def hand_adjoint(solver, sc, values, seed):
    forward(solver, sc, values, wp.zeros_like(values["qd"]))  # the stored dv
    grads = {k: wp.zeros_like(v) for k, v in values.items()}
    wp.launch(
        update_velocities_adjoint,
        dim=solver.layout.articulation_count,
        inputs=[
            solver.layout.topo,
            values["L"],
            values["Z"],
            values["impulse"],
            sc.dv,
            DT,
            wp.array(seed, device="cpu"),
            wp.zeros_like(sc.w),
            wp.zeros_like(sc.dv),
        ],
        outputs=[grads["qd"], grads["acc"], grads["L"], grads["Z"], grads["impulse"]],
        device="cpu",
    )
    return {k: g.numpy() for k, g in grads.items()}


def test_hand_adjoint_is_warps():
    solver, sc, values = case()
    seed = np.random.default_rng(0).normal(size=values["qd"].shape).astype(np.float32)
    ours, ref = hand_adjoint(solver, sc, values, seed), warp_adjoint(solver, sc, values, seed)
    for k in INPUTS:
        assert np.abs(ref[k]).max() > 0, k
        np.testing.assert_allclose(ours[k], ref[k], rtol=2e-4, atol=2e-5 * np.abs(ref[k]).max(), err_msg=k)


def test_hand_adjoint_matches_finite_differences():
    solver, sc, values = case()
    seed = np.random.default_rng(1).normal(size=values["qd"].shape)
    grads = hand_adjoint(solver, sc, values, seed.astype(np.float32))
    base = {k: v.numpy().astype(np.float64) for k, v in values.items()}

    def loss(name, x):
        perturbed = {k: wp.array((x if k == name else v).astype(np.float32), device="cpu") for k, v in base.items()}
        qd_out = wp.zeros_like(values["qd"])
        forward(solver, sc, perturbed, qd_out)
        return float(np.dot(seed, qd_out.numpy()))

    rng = np.random.default_rng(2)
    for name in ("impulse", "Z", "L", "acc"):
        read = np.flatnonzero(grads[name])
        for idx in rng.choice(read, 3, replace=False):
            eps = 1e-3 * max(abs(base[name][idx]), 1.0)
            up, down = base[name].copy(), base[name].copy()
            up[idx] += eps
            down[idx] -= eps
            fd = (loss(name, up) - loss(name, down)) / (2 * eps)
            g = grads[name][idx]
            assert abs(fd - g) <= 2e-2 * abs(g) + 2e-3 * np.abs(grads[name]).max(), (name, idx, fd, g)
