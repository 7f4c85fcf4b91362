"""The hand-written adjoint of integrate_positions (solver/position_adjoint.py) against Warp's generated adjoint of the
same kernel and against central finite differences, at a real step's state (ANYmal C, 3 worlds: a free base and
1-dof legs) with random base orientations, as unit quaternions and as non-unit ones (Warp's formulas hold for any)."""

import numpy as np
import pytest
import warp as wp
from helpers.taped_scratch import taped_step

from isaaclab_diffsim.solver import kernels
from isaaclab_diffsim.solver.position_adjoint import integrate_positions_adjoint
from isaaclab_diffsim.solver.taped_launch import struct_adjoint
from isaaclab_diffsim.solver.type_ids import JOINT_FREE

H = 0.0025  # the midpoint's half step


def case(quaternion_scale: float):
    solver, _, s0, _ = taped_step()
    model = solver.model
    q = s0.joint_q.numpy().astype(np.float64)
    rng = np.random.default_rng(4)
    for j in np.flatnonzero(model.joint_type.numpy() == int(JOINT_FREE)):  # tilted bases: every quaternion term acts
        qs = model.joint_q_start.numpy()[j]
        r = rng.normal(size=4)
        q[qs + 3 : qs + 7] = quaternion_scale * r / np.linalg.norm(r)
    qd = rng.normal(scale=3.0, size=model.joint_dof_count)  # fast spins: the quaternion terms take part
    return solver, q, qd


def forward(solver, q, qd):
    model = solver.model
    q_out = wp.zeros(model.joint_coord_count, dtype=float, device="cpu")
    wp.launch(
        kernels.integrate_positions,
        dim=model.joint_count,
        inputs=[
            solver.layout.topo,
            model.body_com,
            wp.array(q.astype(np.float32)),
            wp.array(qd.astype(np.float32)),
            H,
            0,
        ],
        outputs=[q_out],
        device="cpu",
        record_tape=False,
    )
    return q_out.numpy().astype(np.float64)


def warp_adjoint(solver, q, qd, seed):
    model = solver.model
    q_in, qd_in = wp.array(q.astype(np.float32)), wp.array(qd.astype(np.float32))
    q_grad, qd_grad = wp.zeros_like(q_in), wp.zeros_like(qd_in)
    q_out = wp.zeros_like(q_in)
    wp.launch(
        kernels.integrate_positions,
        dim=model.joint_count,
        inputs=[solver.layout.topo, model.body_com, q_in, qd_in, H, 0],
        outputs=[q_out],
        adj_inputs=[struct_adjoint(solver.layout.topo), None, q_grad, qd_grad, 0.0, 0],
        adj_outputs=[wp.array(seed.astype(np.float32))],
        adjoint=True,
        device="cpu",
    )
    return q_grad.numpy(), qd_grad.numpy()


def hand_adjoint(solver, q, qd, seed):
    model = solver.model
    q_in, qd_in = wp.array(q.astype(np.float32)), wp.array(qd.astype(np.float32))
    q_grad, qd_grad = wp.zeros_like(q_in), wp.zeros_like(qd_in)
    wp.launch(
        integrate_positions_adjoint,
        dim=model.joint_count,
        inputs=[solver.layout.topo, model.body_com, q_in, qd_in, H, 0, wp.array(seed.astype(np.float32))],
        outputs=[q_grad, qd_grad],
        device="cpu",
    )
    return q_grad.numpy(), qd_grad.numpy()


@pytest.mark.parametrize("quaternion_scale", [1.0, 1.3])
def test_hand_adjoint_is_warps(quaternion_scale):
    solver, q, qd = case(quaternion_scale)
    seed = np.random.default_rng(0).normal(size=q.shape)
    for ours, ref, name in zip(hand_adjoint(solver, q, qd, seed), warp_adjoint(solver, q, qd, seed), ("q", "qd")):
        assert np.abs(ref).max() > 0, name
        np.testing.assert_allclose(ours, ref, rtol=1e-4, atol=1e-5 * np.abs(ref).max(), err_msg=name)


@pytest.mark.parametrize("quaternion_scale", [1.0, 1.3])
def test_hand_adjoint_matches_finite_differences(quaternion_scale):
    solver, q, qd = case(quaternion_scale)
    seed = np.random.default_rng(1).normal(size=q.shape)
    q_grad, qd_grad = hand_adjoint(solver, q, qd, seed)
    free = solver.model.joint_q_start.numpy()[np.flatnonzero(solver.model.joint_type.numpy() == int(JOINT_FREE))]
    base_coords = [qs + i for qs in free[:2] for i in range(7)]  # every coordinate of two bases
    base_dofs = list(range(6)) + list(range(18, 24))  # and every velocity (18 dofs per world)
    leg = [int(free[0]) + 7, int(free[1]) + 9]
    for name, x, grad, picks, scale in (
        ("q", q, q_grad, base_coords + leg, 1e-3),
        ("qd", qd, qd_grad, base_dofs, 1e-2),
    ):
        for idx in picks:
            up, down = x.copy(), x.copy()
            up[idx] += scale
            down[idx] -= scale
            if name == "q":
                fd = seed @ (forward(solver, up, qd) - forward(solver, down, qd)) / (2 * scale)
            else:
                fd = seed @ (forward(solver, q, up) - forward(solver, q, down)) / (2 * scale)
            g = grad[idx]
            assert abs(fd - g) <= 2e-2 * abs(g) + 2e-3 * np.abs(grad).max(), (name, idx, fd, g)
