"""The hand-written adjoint of contact_jacobians (solver/jacobian_adjoint.py) against Warp's generated adjoint of the
same kernel and against central finite differences, on a real step's buffers (ANYmal C, 3 worlds, feet loaded),
with gradients on the contact frames too (as on terrain)."""

import numpy as np
import warp as wp
from helpers.taped_scratch import taped_step

from isaaclab_diffsim.solver import kernels
from isaaclab_diffsim.solver.jacobian_adjoint import contact_jacobians_adjoint
from isaaclab_diffsim.solver.taped_launch import struct_adjoint

DT = 0.005
INPUTS = ("body_X", "S", "L", "qd", "acc", "frame_n", "frame_origin", "frame_t1", "frame_t2")
OUTPUTS = ("dist", "cpoint", "J", "Z", "Z_acc", "G", "c_free")
SEEDED = ("dist", "cpoint", "J", "Z", "G", "c_free")  # the outputs read after the kernel


def case():
    """(solver, scratch set, input values): a taped step's poses, S, L, velocities and accelerations, and the
    planes' frames as arrays of their own."""
    solver, sc, s0, _ = taped_step()
    topo = solver.layout.topo
    values = {"body_X": sc.body_X, "S": sc.S, "L": sc.L, "qd": s0.joint_qd, "acc": sc.acc}
    frames = (topo.cand_normal, topo.cand_origin, topo.cand_t1, topo.cand_t2)
    values.update(zip(INPUTS[5:], frames))
    values = {k: wp.clone(v, requires_grad=False) for k, v in values.items()}
    return solver, sc, values


def forward(solver, sc, values):
    wp.launch(
        kernels.contact_jacobians,
        dim=solver.layout.articulation_count,
        inputs=[solver.layout.topo, *(values[k] for k in INPUTS[:5]), DT, *(values[k] for k in INPUTS[5:])],
        outputs=[getattr(sc, n) for n in OUTPUTS],
        device="cpu",
    )


def seeds(sc, rng):
    return {n: rng.normal(size=getattr(sc, n).numpy().shape).astype(np.float32) for n in SEEDED}


def seeded(sc, seed, name):
    arr = getattr(sc, name)
    return wp.array(seed[name], dtype=arr.dtype, device="cpu") if name in seed else wp.zeros_like(arr)


def warp_adjoint(solver, sc, values, seed):
    forward(solver, sc, values)
    grads = {k: wp.zeros_like(v) for k, v in values.items()}
    wp.launch(
        kernels.contact_jacobians,
        dim=solver.layout.articulation_count,
        inputs=[solver.layout.topo, *(values[k] for k in INPUTS[:5]), DT, *(values[k] for k in INPUTS[5:])],
        outputs=[getattr(sc, n) for n in OUTPUTS],
        adj_inputs=[
            struct_adjoint(solver.layout.topo),
            *(grads[k] for k in INPUTS[:5]),
            0.0,
            *(grads[k] for k in INPUTS[5:]),
        ],  # fmt: skip
        adj_outputs=[seeded(sc, seed, n) for n in OUTPUTS],
        adjoint=True,
        device="cpu",
    )
    return {k: g.numpy() for k, g in grads.items()}


def hand_adjoint(solver, sc, values, seed):
    forward(solver, sc, values)
    grads = {k: wp.zeros_like(v) for k, v in values.items()}
    out = {n: seeded(sc, seed, n) for n in OUTPUTS}
    wp.launch(
        contact_jacobians_adjoint,
        dim=solver.layout.articulation_count,
        inputs=[
            solver.layout.topo,
            *(values[k] for k in INPUTS[:5]),
            DT,
            *(values[k] for k in INPUTS[5:]),
            sc.J,
            sc.Z,
            *(out[n] for n in ("dist", "cpoint", "G", "c_free", "J", "Z")),
            1,
            1,
        ],
        outputs=[grads[k] for k in INPUTS],
        device="cpu",
    )
    return {k: g.numpy() for k, g in grads.items()}


def test_hand_adjoint_is_warps():
    solver, sc, values = case()
    seed = seeds(sc, np.random.default_rng(0))
    ours = hand_adjoint(solver, sc, values, seed)
    ref = warp_adjoint(solver, sc, values, seed)
    for k in INPUTS:
        a, b = ours[k], ref[k]
        assert np.abs(b).max() > 0, k
        np.testing.assert_allclose(a, b, rtol=1e-3, atol=1e-4 * np.abs(b).max(), err_msg=k)


def test_hand_adjoint_matches_finite_differences():
    solver, sc, values = case()
    seed = seeds(sc, np.random.default_rng(1))
    grads = hand_adjoint(solver, sc, values, seed)
    base = {k: v.numpy().astype(np.float64) for k, v in values.items()}

    def loss(name, direction, eps):
        total = []
        for sign in (1.0, -1.0):
            v = dict(values)
            v[name] = wp.array((base[name] + sign * eps * direction).astype(np.float32), dtype=values[name].dtype)
            forward(solver, sc, v)
            total.append(sum(float(np.dot(seed[n].ravel(), getattr(sc, n).numpy().astype(np.float64).ravel()))
                             for n in seed))  # fmt: skip
        return (total[0] - total[1]) / (2.0 * eps)

    foot = int(solver.layout.topo.cand_body.numpy()[0])
    L_read = np.flatnonzero(grads["L"])
    checks = [("body_X", (foot, c), 1e-3) for c in (0, 2, 4, 6)]  # a foot's position and quaternion entries
    checks += [("S", (13, c), 1e-3) for c in (1, 5)]
    checks += [("L", (int(i),), 1e-3) for i in L_read[:: max(1, L_read.size // 3)][:3]]
    checks += [("qd", (3,), 1e-2), ("acc", (12,), 1e-2), ("frame_n", (0, 2), 1e-3), ("frame_t1", (1, 0), 1e-3)]
    for name, idx, eps in checks:
        d = np.zeros_like(base[name])
        d[idx] = 1.0
        if name == "L":
            eps *= max(abs(base[name][idx]), 1.0)
        fd = loss(name, d, eps)
        ours = float(grads[name][idx])
        assert abs(fd - ours) <= 2e-2 * abs(ours) + 2e-2, (name, idx, fd, ours)
