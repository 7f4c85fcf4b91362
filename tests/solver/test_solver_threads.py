"""SolverMoreauGS(threads=N): the articulations stepped and differentiated in N ranges on N threads give bit for bit
the states and gradients of one thread (for every contact model, both contact adjoints, uneven ranges, terrain and
captured graphs); only kappa's gradient is summed per range first."""

import newton
import numpy as np
import pytest
import warp as wp
from helpers.solver_cases import CONTACT_CASES

from isaaclab_diffsim.assets.anymal_c import build_anymal_c_model
from isaaclab_diffsim.bridge.physics_step import tape_nbytes
from isaaclab_diffsim.solver import SolverMoreauGS
from isaaclab_diffsim.solver import shards as shards_module
from isaaclab_diffsim.solver import terrain_scenes as ts

STEPS, DT, WORLDS = 4, 0.005, 5


def rollout(
    threads: int, contact_model: str = "smoothed", adjoint: str = "implicit", worlds: int = WORLDS, **solver_kwargs
):
    """STEPS taped steps of ANYmal C from random joint velocities and targets; the final state, the sweep counts
    and the gradients of a random linear loss on it."""
    model, _ = build_anymal_c_model(num_worlds=worlds, device="cpu", base_height=0.57, requires_grad=True)
    solver = SolverMoreauGS(
        model, contact_model=contact_model, adjoint=adjoint, kappa=300.0, threads=threads, **solver_kwargs
    )
    states = [model.state(requires_grad=True) for _ in range(STEPS + 1)]
    rng = np.random.default_rng(0)
    states[0].joint_qd.assign(rng.normal(scale=0.3, size=states[0].joint_qd.shape).astype(np.float32))
    control = model.control()
    target = control.joint_target_q.numpy()
    control.joint_target_q.assign((target + rng.normal(scale=0.2, size=target.shape)).astype(np.float32))
    tape = wp.Tape()
    with tape:
        for i in range(STEPS):
            solver.step(states[i], states[i + 1], control, None, DT)
    sweeps = solver.last_sweep_counts().numpy().copy()
    last = states[-1]
    out = [last.joint_q.numpy().copy(), last.joint_qd.numpy().copy(), last.body_q.numpy().copy(), sweeps]
    last.joint_q.grad.assign(rng.normal(size=last.joint_q.shape).astype(np.float32))
    last.joint_qd.grad.assign(rng.normal(size=last.joint_qd.shape).astype(np.float32))
    last.body_q.grad.fill_(0.5)
    nbytes = tape_nbytes(tape)
    tape.backward()
    grads = [states[0].joint_q.grad, states[0].joint_qd.grad, control.joint_target_q.grad]
    return out, [g.numpy().copy() for g in grads], solver.kappa_array.grad.numpy().copy(), nbytes


@pytest.mark.parametrize("contact_model,adjoint", CONTACT_CASES)
def test_threads_are_bitwise_one_thread(contact_model, adjoint):
    one, one_grads, one_kappa, one_bytes = rollout(1, contact_model, adjoint)
    assert any(np.abs(g).sum() > 0 for g in one_grads)
    for threads in (2, 3):  # 5 worlds: ranges of 2-3 and of 1-2 articulations
        out, grads, kappa, nbytes = rollout(threads, contact_model, adjoint)
        for a, b in zip(one + one_grads, out + grads):
            np.testing.assert_array_equal(a, b)
        np.testing.assert_allclose(kappa, one_kappa, rtol=1e-5, atol=1e-12)
        assert nbytes >= one_bytes  # the shards' launches are counted (plus each range's own kappa copy)


def test_backward_one_shard_after_the_other(monkeypatch):
    """parallel_backward=False: the forward still runs the shards on the pool's threads, the backward on the calling
    thread only; bitwise the same."""
    one, one_grads, one_kappa, _ = rollout(1)
    used = []
    run = shards_module.ShardRunner.run

    def counted(runner, calls):
        used.append(len(calls))
        run(runner, calls)

    monkeypatch.setattr(shards_module.ShardRunner, "run", counted)
    out, grads, kappa, _ = rollout(2, parallel_backward=False)
    for a, b in zip(one + one_grads, out + grads):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_allclose(kappa, one_kappa, rtol=1e-5, atol=1e-12)
    assert used == [2] * STEPS  # the forward's steps only


def test_more_threads_than_articulations():
    one, one_grads, _, _ = rollout(1, worlds=2)
    out, grads, _, _ = rollout(4, worlds=2)
    for a, b in zip(one + one_grads, out + grads):
        np.testing.assert_array_equal(a, b)


def test_ranges_cover_every_articulation_once():
    model, _ = build_anymal_c_model(num_worlds=WORLDS, device="cpu")
    solver = SolverMoreauGS(model, threads=3)
    parts = solver._shards
    assert [p.articulations for p in parts] == [2, 1, 2]
    assert sum(p.joints for p in parts) == solver.layout.joint_count
    assert sum(p.candidates for p in parts) == solver.layout.candidate_count
    for a, b in zip(parts[:-1], parts[1:]):
        assert a.art_offset + a.articulations == b.art_offset
        assert a.joint_offset + a.joints == b.joint_offset and a.cand_offset + a.candidates == b.cand_offset


def terrain_worlds() -> newton.Model:
    """Three spheres, each above its own world's terrain: flat, a 5 cm step, an incline."""
    builder = newton.ModelBuilder()
    meshes = [ts.grid_mesh(np.zeros((2, 2)), 4.0, (-2, -2)), ts.step_mesh(0.05), ts.incline_mesh(np.radians(20.0))]
    for i, mesh in enumerate(meshes):
        one = newton.ModelBuilder()
        body = one.add_body(xform=wp.transform((0.3, 0.1 * i, 0.3)), mass=1.0, inertia=wp.mat33(np.eye(3) * 4e-3))
        one.add_shape_sphere(body, radius=0.1, cfg=newton.ModelBuilder.ShapeConfig(mu=0.5, density=0.0))
        ts.add_terrain(one, mesh, 0.5)
        builder.add_world(one)
    return builder.finalize(device="cpu", requires_grad=True)


def test_terrain_threads_are_bitwise_one_thread():
    runs = []
    for threads in (1, 2):
        model = terrain_worlds()
        solver = SolverMoreauGS(model, contact_model="hard", threads=threads)
        states = [model.state(requires_grad=True) for _ in range(41)]
        tape = wp.Tape()
        with tape:
            for i in range(40):
                solver.step(states[i], states[i + 1], None, None, 0.01)
        states[-1].joint_q.grad.fill_(1.0)
        tape.backward()
        runs.append([states[-1].joint_q.numpy().copy(), states[0].joint_qd.grad.numpy().copy()])
    assert np.abs(runs[0][1]).sum() > 0
    for a, b in zip(*runs):
        np.testing.assert_array_equal(a, b)


def test_captured_graph_with_threads_replays_one_thread():
    """Launches captured into a CPU graph run the ranges one after the other; the replay equals eager stepping."""
    model, _ = build_anymal_c_model(num_worlds=WORLDS, device="cpu", base_height=0.57)
    start = model.state()
    start.joint_qd.assign(np.random.default_rng(1).normal(scale=0.3, size=start.joint_qd.shape).astype(np.float32))
    eager, b = model.state(), model.state()
    eager.assign(start)
    SolverMoreauGS(model, threads=1).step(eager, b, None, None, DT)
    solver = SolverMoreauGS(model, threads=2)
    c, d = model.state(), model.state()
    c.assign(start)
    solver.step(c, d, None, None, DT)  # compiles; then capture one step from c into d
    with wp.ScopedCapture(device="cpu") as cap:
        solver.step(c, d, None, None, DT)
    c.assign(start)
    d.joint_q.zero_()
    wp.capture_launch(cap.graph)
    np.testing.assert_array_equal(d.joint_q.numpy(), b.joint_q.numpy())
    np.testing.assert_array_equal(d.joint_qd.numpy(), b.joint_qd.numpy())


def test_a_failing_range_raises(monkeypatch):
    model, _ = build_anymal_c_model(num_worlds=2, device="cpu")
    solver = SolverMoreauGS(model, threads=2)
    real = solver._advance

    def advance(shard, *args):
        if shard is solver._shards[1]:
            raise RuntimeError("range 2 failed")
        real(shard, *args)

    monkeypatch.setattr(solver, "_advance", advance)
    with pytest.raises(RuntimeError, match="range 2 failed"):
        solver.step(model.state(), model.state(), None, None, DT)


def test_threads_is_validated():
    model, _ = build_anymal_c_model(num_worlds=1, device="cpu")
    with pytest.raises(ValueError, match="threads"):
        SolverMoreauGS(model, threads=0)
    assert shards_module.PER_ARTICULATION and all(n.startswith("art_") for n in shards_module.PER_ARTICULATION)
