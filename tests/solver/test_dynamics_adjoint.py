"""The hand-written adjoint of articulation_dynamics (solver/dynamics_adjoint.py) against Warp's generated adjoint of
the same kernel and against central finite differences, on a real step's midpoint configuration (ANYmal C, 3 worlds)
with every term of the kernel active: drives at and below the torque-speed envelope, joint limits, passive damping
and friction, joint and body forces."""

import newton
import numpy as np
import pytest
import warp as wp
from helpers.taped_scratch import taped_step

from isaaclab_diffsim.solver import kernels
from isaaclab_diffsim.solver.dynamics_adjoint import articulation_dynamics_adjoint
from isaaclab_diffsim.solver.taped_launch import struct_adjoint

DT = 0.005
SATURATION = 120.0
INPUTS = ("q", "qd", "joint_f", "target_q", "target_qd")
SEEDED = ("body_X", "body_V", "body_A", "S", "H", "hvec")  # outputs read downstream (or by users)
OUTPUTS = ("body_X", "body_V", "body_A", "body_F", "body_m", "body_h", "body_I", "S", "H", "hvec")


def case(by_coord: int):
    """(solver, scratch set, input values): a taped step's midpoint q, random velocities, forces and targets (half
    of them far enough off to saturate the drive), tight limits on two joints, damping and friction on all."""
    solver, sc, _, _ = taped_step()
    model = solver.model
    rng = np.random.default_rng(7)
    nd, nc = model.joint_dof_count, model.joint_coord_count
    model.joint_damping.assign(np.full(nd, 0.2, dtype=np.float32))
    model.joint_friction.assign(np.full(nd, 0.5, dtype=np.float32))
    q = sc.q_mid.numpy()
    coord = solver.layout.topo.dof_coord.numpy()
    lower, upper = model.joint_limit_lower.numpy(), model.joint_limit_upper.numpy()
    lower[7], upper[8] = q[coord[7]] + 0.05, q[coord[8]] - 0.05  # one below its lower limit, one above its upper
    model.joint_limit_lower.assign(lower)
    model.joint_limit_upper.assign(upper)
    target = q.copy() if by_coord else q[coord].copy()
    target += rng.normal(scale=1.5, size=target.shape) * (rng.random(target.shape) < 0.5)
    qd = rng.normal(scale=1.0, size=nd)
    for k, sign in ((9, 1.0), (12, -1.0), (27, 1.0)):  # fast joints driven on: bounded by the torque-speed envelope
        qd[k] = 4.0 * sign
        target[coord[k] if by_coord else k] = q[coord[k]] + 2.0 * sign
    values = {
        "q": q,
        "qd": qd,
        "joint_f": rng.normal(scale=5.0, size=nd),
        "target_q": target,
        "target_qd": rng.normal(scale=0.5, size=nd),
    }
    values = {k: wp.array(v.astype(np.float32), dtype=float, device="cpu") for k, v in values.items()}
    values["body_f"] = wp.array(
        rng.normal(scale=10.0, size=(model.body_count, 6)).astype(np.float32), dtype=wp.spatial_vector, device="cpu"
    )
    assert nc != nd
    return solver, sc, values


def launch_args(solver, sc, values, by_coord):
    inputs = [solver.layout.topo, *(values[k] for k in INPUTS), by_coord, values["body_f"], 1, SATURATION, DT]
    return inputs, [getattr(sc, name) for name in OUTPUTS]


def forward(solver, sc, values, by_coord):
    inputs, outputs = launch_args(solver, sc, values, by_coord)
    wp.launch(kernels.articulation_dynamics, dim=solver.layout.articulation_count, inputs=inputs, outputs=outputs)


def seeds(sc, rng):
    """Random adjoints of the outputs read after the kernel (the composites get none)."""
    return {name: rng.normal(size=getattr(sc, name).numpy().shape).astype(np.float32) for name in SEEDED}


def seed_array(sc, name, seed):
    return wp.array(seed[name], dtype=getattr(sc, name).dtype, device="cpu")


def warp_adjoint(solver, sc, values, seed, by_coord):
    forward(solver, sc, values, by_coord)
    inputs, outputs = launch_args(solver, sc, values, by_coord)
    grads = {k: wp.zeros_like(values[k]) for k in (*INPUTS, "body_f")}
    adj_out = [seed_array(sc, n, seed) if n in seed else wp.zeros_like(getattr(sc, n)) for n in OUTPUTS]
    adj_in = [struct_adjoint(solver.layout.topo), *(grads[k] for k in INPUTS), 0, grads["body_f"], 0, 0.0, 0.0]
    wp.launch(
        kernels.articulation_dynamics,
        dim=solver.layout.articulation_count,
        inputs=inputs,
        outputs=outputs,
        adj_inputs=adj_in,
        adj_outputs=adj_out,
        adjoint=True,
        device="cpu",
    )
    return {k: g.numpy() for k, g in grads.items()}


def hand_adjoint(solver, sc, values, seed, by_coord):
    forward(solver, sc, values, by_coord)
    grads = {k: wp.zeros_like(values[k]) for k in (*INPUTS, "body_f")}
    out = {n: seed_array(sc, n, seed) if n in seed else wp.zeros_like(getattr(sc, n)) for n in OUTPUTS}
    wp.launch(
        articulation_dynamics_adjoint,
        dim=solver.layout.articulation_count,
        inputs=[
            *launch_args(solver, sc, values, by_coord)[0],
            *(getattr(sc, n) for n in OUTPUTS[:-2]),
            wp.vec4i(1, 1, 1, 1),
            1,
            *(out[n] for n in ("body_X", "H", "hvec", "body_V", "body_A", "S", "body_F", "body_h", "body_I")),
            sc.body_phi,
            grads["q"],
        ],
        outputs=[grads[k] for k in ("qd", "joint_f", "target_q", "target_qd", "body_f")],
        device="cpu",
    )
    return {k: g.numpy() for k, g in grads.items()}


def base_quaternions(solver):
    """Coordinate indices (one row of 4 per world) of the free joints' quaternions."""
    model = solver.model
    free = np.flatnonzero(model.joint_type.numpy() == int(newton.JointType.FREE))
    starts = model.joint_q_start.numpy()[free]
    return starts[:, None] + np.arange(3, 7)


def tangent(g, q, rows):
    """g with the radial part of each quaternion's adjoint removed (q's quaternions are unit)."""
    g = g.copy()
    for idx in rows:
        r = q[idx] / np.linalg.norm(q[idx])
        g[idx] -= np.dot(g[idx], r) * r
    return g


@pytest.mark.parametrize("by_coord", [0, 1])
def test_hand_adjoint_is_warps(by_coord):
    solver, sc, values = case(by_coord)
    seed = seeds(sc, np.random.default_rng(0))
    ours = hand_adjoint(solver, sc, values, seed, by_coord)
    ref = warp_adjoint(solver, sc, values, seed, by_coord)
    rows = base_quaternions(solver)
    q = values["q"].numpy()
    ref["q"], ours_q = tangent(ref["q"], q, rows), ours["q"]
    np.testing.assert_allclose(tangent(ours_q, q, rows), ours_q, atol=1e-3 * np.abs(ours_q).max())  # tangent already
    for k in (*INPUTS, "body_f"):
        a, b = ours[k], ref[k]
        assert np.abs(b).max() > 0, k
        np.testing.assert_allclose(a, b, rtol=1e-3, atol=1e-4 * np.abs(b).max(), err_msg=k)


def test_hand_adjoint_matches_finite_differences():
    by_coord = 1
    solver, sc, values = case(by_coord)
    seed = seeds(sc, np.random.default_rng(1))
    grads = hand_adjoint(solver, sc, values, seed, by_coord)
    base = {k: v.numpy().astype(np.float64) for k, v in values.items()}

    def loss(name, direction, eps):
        total = []
        for sign in (1.0, -1.0):
            v = dict(values)
            arr = base[name] + sign * eps * direction
            v[name] = wp.array(arr.astype(np.float32), dtype=values[name].dtype, device="cpu")
            forward(solver, sc, v, by_coord)
            total.append(sum(float(np.dot(seed[n].ravel(), getattr(sc, n).numpy().astype(np.float64).ravel()))
                             for n in seed))  # fmt: skip
        return (total[0] - total[1]) / (2.0 * eps)

    def check(name, direction, eps):
        fd = loss(name, direction, eps)
        ours = float(np.sum(grads[name] * direction))
        assert abs(fd - ours) <= 2e-2 * abs(ours) + 2e-2, (name, fd, ours)

    q = base["q"]
    rows = base_quaternions(solver)
    leg = solver.layout.topo.dof_coord.numpy()[[6, 10, 17]]
    for idx in (*leg, 0, 2):  # leg angles, base position
        d = np.zeros_like(q)
        d[idx] = 1.0
        check("q", d, 1e-3)
    r = q[rows[1]]
    for axis in range(3):  # base rotations: tangent directions 0.5 (e, 0) r
        d = np.zeros_like(q)
        e = np.zeros(3)
        e[axis] = 1.0
        d[rows[1]] = 0.5 * np.concatenate([r[3] * e + np.cross(e, r[:3]), [-np.dot(e, r[:3])]])
        check("q", d, 1e-3)
    for name, idxs, eps in (("qd", (1, 4, 9, 15), 1e-2), ("joint_f", (2, 5, 12), 1e-1), ("target_qd", (8, 13), 1e-2)):
        for idx in idxs:
            d = np.zeros_like(base[name])
            d[idx] = 1.0
            check(name, d, eps)
    moving = np.flatnonzero(np.abs(grads["target_q"]) > 0)  # drives off their torque bounds
    for idx in moving[:3]:
        d = np.zeros_like(base["target_q"])
        d[idx] = 1.0
        check("target_q", d, 1e-3)
    d = np.zeros_like(base["body_f"])
    d[5, :] = 1.0
    check("body_f", d, 1e-1)
