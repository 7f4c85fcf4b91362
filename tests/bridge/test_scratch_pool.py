"""Solver scratch pooling across eager differentiable calls (``capture_taped=False``; slots keep their own sets): a
finished tape's scratch sets are reused by later calls, with gradients bitwise equal to a fresh solver's, and a set
is never reused while its tape can still run."""

import torch

from isaaclab_diffsim.assets.anymal_c import build_anymal_c_model
from isaaclab_diffsim.bridge import DiffSimulator


def make_sim():
    model, layout = build_anymal_c_model(num_worlds=2, device="cpu", base_height=0.58, requires_grad=True)
    return DiffSimulator(model, kappa=300.0, capture_taped=False), layout


def horizon_grad(sim, layout, q0, qd0, target0, steps=3):
    """d(base heights + joint velocities) / d(targets) over ``steps`` policy steps, and the loss."""
    target = target0.clone().requires_grad_(True)
    q, qd = q0, qd0
    for k in range(steps):
        out = sim.step(q, qd, target + 0.05 * k)
        q, qd = out.joint_q, out.joint_qd
    loss = out.body_q[layout.base_body, 2].sum() + 0.01 * out.joint_qd.square().sum()
    loss.backward()
    return loss.detach(), target.grad


def test_reused_scratch_gives_the_fresh_gradient():
    sim, layout = make_sim()
    q0, qd0 = sim.default_state()
    solver = sim.solver
    assert solver._free_taped == []
    first = horizon_grad(sim, layout, q0, qd0, q0 + 0.1)
    pooled = list(solver._free_taped)
    assert len(pooled) == 3 * sim.substeps, "every taped substep's set comes back after the backward"
    # different inputs, so the reused sets hold another call's values and gradients before they are prepared
    horizon_grad(sim, layout, q0, qd0 + 0.3, q0 - 0.2)
    second = horizon_grad(sim, layout, q0, qd0, q0 + 0.1)
    assert {id(s) for s in solver._free_taped} == {id(s) for s in pooled}, "no new sets were allocated"

    fresh_sim, _ = make_sim()
    fresh = horizon_grad(fresh_sim, layout, q0, qd0, q0 + 0.1)
    for a, b, c in zip(first, second, fresh):
        assert torch.equal(a, c) and torch.equal(b, c)
    assert second[1].abs().sum() > 0


def test_no_reuse_before_the_backward():
    """Sets of tapes that are alive (backward pending) or dropped without backward are not handed out again."""
    sim, layout = make_sim()
    q0, qd0 = sim.default_state()
    target = (q0 + 0.1).requires_grad_(True)
    pending = sim.step(q0, qd0, target)
    assert sim.solver._free_taped == []
    dropped = sim.step(q0, qd0, target)
    del dropped
    assert sim.solver._free_taped == []
    expected = horizon_grad(make_sim()[0], layout, q0, qd0, q0 + 0.1, steps=1)
    got = horizon_grad(sim, layout, q0, qd0, q0 + 0.1, steps=1)  # while `pending` still holds its tape
    assert torch.equal(expected[1], got[1])
    pending.body_q[layout.base_body, 2].sum().backward()
    assert torch.isfinite(target.grad).all()


def test_model_change_empties_the_pool():
    sim, layout = make_sim()
    q0, qd0 = sim.default_state()
    horizon_grad(sim, layout, q0, qd0, q0 + 0.1, steps=1)
    assert sim.solver._free_taped
    sim.notify_model_changed()
    assert sim.solver._free_taped == []
