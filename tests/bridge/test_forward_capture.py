"""Gradient-free steps replayed from a captured Warp graph (DiffSimulator, capture_forward): bitwise equal to
eager stepping, re-captured after model and solver changes, never used while a tape records or gradients flow."""

import pytest
import torch
import warp as wp

from isaaclab_diffsim.assets.anymal_c import build_anymal_c_model
from isaaclab_diffsim.bridge import DiffSimulator
from isaaclab_diffsim.solver import SolverMoreauGS

STEPS = 6


def pair(device, num_worlds=3):
    """A captured and an eager simulator of two identical models (ANYmal C standing on smoothed contact)."""
    sims = []
    for capture in (True, False):
        model, info = build_anymal_c_model(num_worlds=num_worlds, device=device, requires_grad=True)
        sims.append(DiffSimulator(model, capture_forward=capture, kappa=300.0))
    return sims, info


def run(sim, q, qd, steps, kappa=None, joint_f=None):
    """Steps with moving targets; every output of every step and the last contact impulses."""
    outs = []
    q_def = q.clone()
    with torch.no_grad():
        for t in range(steps):
            target = q_def + 0.2 * torch.sin(torch.tensor(0.7 * t, device=q.device))
            out = sim.step(q, qd, target, joint_f=joint_f, kappa=kappa)
            q, qd = out.joint_q, out.joint_qd
            outs.append([t.clone() for t in out] + [sim.last_contact_impulses()])
    return outs, q, qd


def assert_bitwise(a, b):
    for step, (x, y) in enumerate(zip(a, b)):
        for i, (u, v) in enumerate(zip(x, y)):
            assert torch.equal(u, v), f"step {step}, output {i}: max diff {(u - v).abs().max().item()}"


def test_replay_is_bitwise_eager(device):
    (graph, eager), _ = pair(device)
    q, qd = graph.default_state()
    joint_f = torch.full((q.shape[0], 18), 0.5, device=device)
    a, *_ = run(graph, q, qd, STEPS, joint_f=joint_f)
    b, *_ = run(eager, q, qd, STEPS, joint_f=joint_f)
    assert_bitwise(a, b)
    assert a[-1][2].abs().sum() > 0 and b[-1][4][:, 0].max() > 0  # moving bodies, loaded feet
    assert graph.forward.captures == 1 and graph.forward.replays == STEPS - 1
    assert eager.forward.captures == 0 and eager.forward.replays == 0
    # kappa given (float, then tensor): a new configuration, captured once more, still bitwise
    a, *_ = run(graph, q, qd, 3, kappa=150.0)
    b, *_ = run(eager, q, qd, 3, kappa=150.0)
    assert_bitwise(a, b)
    a, *_ = run(graph, q, qd, 3, kappa=torch.tensor([150.0], device=device))
    assert_bitwise(a, b)
    assert graph.forward.captures == 2


def test_sharded_replay_is_bitwise_one_thread(device):
    """threads=2 on the CPU: the shards' graphs replayed at once over 4 substeps, bitwise one eager thread (outputs
    and contact impulses), also after a differentiable step in between."""
    if not str(device).startswith("cpu"):
        pytest.skip("threads shard CPU steps")
    sims = []
    for threads, capture in ((2, True), (1, False)):
        model, _ = build_anymal_c_model(num_worlds=3, device=device, requires_grad=True)
        sims.append(DiffSimulator(model, substeps=4, capture_forward=capture, kappa=300.0, threads=threads))
    graph, eager = sims
    q, qd = graph.default_state()
    a, q_a, qd_a = run(graph, q, qd, STEPS)
    b, q_b, qd_b = run(eager, q, qd, STEPS)
    assert_bitwise(a, b)
    assert graph.forward.captures == 1 and graph.forward.replays == STEPS - 1
    for _ in range(2):  # the first taped step makes the solver's adjoint scratch: a new configuration
        for sim, (q1, qd1) in ((graph, (q_a, qd_a)), (eager, (q_b, qd_b))):
            sim.step(q1, qd1.clone().requires_grad_(True)).joint_q.sum().backward()
        assert_bitwise(run(graph, q_a, qd_a, 3)[0], run(eager, q_b, qd_b, 3)[0])
    assert graph.forward.captures == 2 and graph.forward.replays == STEPS - 1 + 5


def test_model_and_solver_changes_recapture(device):
    """In place edits are seen by the graph; replaced arrays (notify_model_changed), solver settings and a new
    solver each trigger a fresh capture, so replay stays bitwise equal to eager stepping."""
    (graph, eager), info = pair(device)
    q, qd = graph.default_state()
    base = torch.as_tensor(info.base_body, device=device).long()
    a, qa, qda = run(graph, q, qd, 3)
    b, qb, qdb = run(eager, q, qd, 3)
    assert_bitwise(a, b)

    for sim in (graph, eager):  # a heavier base, through a replaced array (the solver's layout must follow)
        mass = wp.to_torch(sim.model.body_mass, requires_grad=False).clone()
        mass[base] += 8.0
        sim.model.body_mass = wp.from_torch(mass, dtype=wp.float32)
        sim.notify_model_changed(0)
    a, qa, qda = run(graph, qa, qda, 3)
    b, qb, qdb = run(eager, qb, qdb, 3)
    assert_bitwise(a, b)
    assert graph.forward.captures == 2

    for sim in (graph, eager):  # a solver setting changed without notification
        sim.solver.stabilization = 0.3
    a, qa, qda = run(graph, qa, qda, 3)
    b, qb, qdb = run(eager, qb, qdb, 3)
    assert_bitwise(a, b)
    assert graph.forward.captures == 3

    for sim in (graph, eager):  # a new solver (contact model switch)
        sim.solver = SolverMoreauGS(sim.model, contact_model="hard")
    a, *_ = run(graph, qa, qda, 3)
    b, *_ = run(eager, qb, qdb, 3)
    assert_bitwise(a, b)
    assert graph.forward.captures == 4 and graph.forward.replays == 4 * 2


def test_gradients_flow_and_tapes_see_every_launch(device):
    """With a captured graph in place: a step whose inputs require grad records its own tape (same gradient as a
    simulator that never captured); a no-grad step inside an active wp.Tape runs eagerly so the tape records it."""
    (graph, eager), info = pair(device, num_worlds=2)
    q, qd = graph.default_state()
    run(graph, q, qd, 3)
    assert graph.forward.captures == 1
    base = int(info.base_body[0])
    grads = []
    for sim in (graph, eager):
        target = q.clone().requires_grad_(True)
        out = sim.step(q, qd, target)
        (out.body_q[base, 2] + out.joint_qd[:, 0].sum()).backward()
        grads.append(target.grad)
    assert torch.equal(grads[0], grads[1]) and grads[0].abs().sum() > 0
    assert graph.forward.replays == 2

    a, *_ = run(graph, q, qd, 2)  # after a taped step: the last contact impulses are the new step's
    b, *_ = run(eager, q, qd, 2)
    assert_bitwise(a, b)

    replays = graph.forward.replays
    tape = wp.Tape()
    with tape, torch.no_grad():
        graph.step(q, qd, q)
    assert graph.forward.replays == replays and len(tape.launches) > 0
