"""Solver launches recorded with prebuilt struct adjoints (solver/taped_launch.py) give bit for bit the gradients of
Warp's own tape recording, for every contact model and both contact adjoints."""

import numpy as np
import pytest
import warp as wp
from helpers.solver_cases import CONTACT_CASES

from isaaclab_diffsim.assets.anymal_c import build_anymal_c_model
from isaaclab_diffsim.solver import SolverMoreauGS, taped_launch

STEPS, DT = 3, 0.005


def gradients(contact_model: str, adjoint: str, warp_recording: bool, monkeypatch) -> list[np.ndarray]:
    model, _ = build_anymal_c_model(num_worlds=2, device="cpu", base_height=0.57, requires_grad=True)
    solver = SolverMoreauGS(model, contact_model=contact_model, adjoint=adjoint, kappa=300.0)
    if warp_recording:  # the tape records the forward launches itself (and builds struct adjoints per launch)

        def plain(kernel, dim, inputs, outputs, device, struct_adjoints, record_tape=True, tape=None):
            assert tape is None or tape is wp._src.context.runtime.tape  # one shard records on the active tape
            wp.launch(kernel, dim=dim, inputs=inputs, outputs=outputs, device=device, record_tape=record_tape)

        monkeypatch.setattr("isaaclab_diffsim.solver.solver_moreau_gs.launch", plain)
    states = [model.state(requires_grad=True) for _ in range(STEPS + 1)]
    rng = np.random.default_rng(0)
    qd = states[0].joint_qd.numpy()
    qd[:] = rng.normal(scale=0.3, size=qd.shape)
    states[0].joint_qd.assign(qd)
    control = model.control()
    tape = wp.Tape()
    with tape:
        for i in range(STEPS):
            solver.step(states[i], states[i + 1], control, None, DT)
    states[-1].joint_q.grad.assign(rng.normal(size=states[-1].joint_q.shape).astype(np.float32))
    states[-1].joint_qd.grad.assign(rng.normal(size=states[-1].joint_qd.shape).astype(np.float32))
    states[-1].body_q.grad.fill_(0.5)
    tape.backward()
    grads = [states[0].joint_q.grad, states[0].joint_qd.grad, control.joint_target_q.grad, solver.kappa_array.grad]
    return [g.numpy().copy() for g in grads if g is not None]


@pytest.mark.parametrize("contact_model,adjoint", CONTACT_CASES)
def test_same_gradients_as_warps_recording(contact_model, adjoint, monkeypatch):
    ours = gradients(contact_model, adjoint, False, monkeypatch)
    warps = gradients(contact_model, adjoint, True, monkeypatch)
    assert len(ours) == len(warps) >= 2
    for a, b in zip(ours, warps):
        np.testing.assert_array_equal(a, b)
    assert any(np.abs(a).sum() > 0 for a in ours)


def test_struct_adjoint_is_prebuilt_once():
    """The Topology's adjoint is built with the layout, not per launch."""
    model, _ = build_anymal_c_model(num_worlds=1, device="cpu", requires_grad=True)
    solver = SolverMoreauGS(model)
    (held,) = solver._struct_adjoints.values()
    assert held[0] is solver.layout.topo
    solver.notify_model_changed(0)
    (rebuilt,) = solver._struct_adjoints.values()
    assert rebuilt[0] is solver.layout.topo and rebuilt[1] is not held[1]
    assert taped_launch.struct_adjoint(solver.layout.topo) is not rebuilt[1]
