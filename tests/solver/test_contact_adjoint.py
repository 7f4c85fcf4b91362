"""The contact solve's implicit adjoint (solver/contact_adjoint.py) on ANYmal C standing with four feet on the
ground and perturbed joint and base velocities (sticking and sliding feet):

- the Gauss-Seidel sweeps converge (the exact local block solve does not cycle);
- implicit and unrolled adjoints agree where the solve has converged, and the implicit one does not depend
  on the sweep count;
- both agree with central finite differences of the forward simulation.
"""

import contextlib

import numpy as np
import pytest
import warp as wp

from isaaclab_diffsim.assets.anymal_c import build_anymal_c_model
from isaaclab_diffsim.solver import SolverMoreauGS

DT = 0.005
WORLDS = 4
STEPS = 4


@pytest.fixture(scope="module")
def scene():
    """ANYmal C settled on the ground (hard contact, kp 80), then random velocities per world."""
    model, _ = build_anymal_c_model(num_worlds=WORLDS, device="cpu", kp=80.0, kd=5.0, base_height=0.6)
    model.requires_grad = True
    settle = SolverMoreauGS(model, contact_model="hard")
    s0, s1 = model.state(), model.state()
    for _ in range(300):
        settle.step(s0, s1, None, None, DT)
        s0, s1 = s1, s0
    rng = np.random.default_rng(0)
    q0 = s0.joint_q.numpy().copy()
    qd0 = rng.normal(0.0, 1.0, size=model.joint_dof_count).astype(np.float32)
    nd = model.joint_dof_count // WORLDS
    for w in range(WORLDS):
        qd0[w * nd : w * nd + 6] *= 0.3
        qd0[w * nd] += 0.5  # base sliding forward: some feet slip
    wq = rng.normal(size=q0.shape).astype(np.float32)
    wqd = rng.normal(size=qd0.shape).astype(np.float32)
    return model, q0, qd0, wq, wqd


def rollout(scene, contact_model, adjoint, iterations, qd0=None, grad=True):
    """loss = wq.q_T + wqd.qd_T after STEPS steps; returns (loss, d loss / d qd0 or None, max residual)."""
    model, q0, qd_default, wq, wqd = scene
    solver = SolverMoreauGS(model, contact_model=contact_model, kappa=200.0, iterations=iterations, adjoint=adjoint)
    states = [model.state(requires_grad=grad) for _ in range(STEPS + 1)]
    states[0].joint_q.assign(q0)
    states[0].joint_qd.assign(qd_default if qd0 is None else qd0)
    tape = wp.Tape() if grad else None
    residual = 0.0
    with tape if grad else contextlib.nullcontext():
        for i in range(STEPS):
            solver.step(states[i], states[i + 1], None, None, DT)
            residual = max(residual, float(solver.last_solve_residual().numpy().max()))
    loss = float(states[-1].joint_q.numpy() @ wq + states[-1].joint_qd.numpy() @ wqd)
    if not grad:
        return loss, None, residual
    states[-1].joint_q.grad.assign(wq)
    states[-1].joint_qd.grad.assign(wqd)
    tape.backward()
    return loss, states[0].joint_qd.grad.numpy().copy(), residual


def rel(a, b):
    return float(np.linalg.norm(a - b) / max(np.linalg.norm(b), 1e-12))


@pytest.mark.parametrize("contact_model", ["smoothed", "hard"])
def test_sweeps_converge_on_sliding_feet(scene, contact_model):
    """200 sweeps reach the fixed point (the split normal/tangential update cycled here with period 2)."""
    _, _, residual = rollout(scene, contact_model, "implicit", 200, grad=False)
    assert residual < 1e-5, f"largest impulse change in the last sweep {residual:.3g} N s"


@pytest.mark.parametrize("contact_model", ["smoothed", "hard"])
def test_implicit_matches_unrolled_and_ignores_sweep_count(scene, contact_model):
    _, g_unrolled, _ = rollout(scene, contact_model, "unrolled", 200)
    _, g_implicit, _ = rollout(scene, contact_model, "implicit", 200)
    _, g_implicit_60, residual_60 = rollout(scene, contact_model, "implicit", 60)
    assert np.all(np.isfinite(g_implicit))
    assert rel(g_implicit, g_unrolled) < 1e-3
    # 60 sweeps are converged to ~1e-4 N s here, so the gradient moves by about that much, not more
    assert residual_60 < 1e-3
    assert rel(g_implicit_60, g_implicit) < 5e-3


@pytest.mark.parametrize("contact_model", ["smoothed", "hard"])
def test_implicit_adjoint_against_finite_differences(scene, contact_model):
    """Directional derivatives along random directions of the initial velocities, eps 1e-3 (float32)."""
    _, grad, _ = rollout(scene, contact_model, "implicit", 200)
    qd0 = scene[2]
    rng = np.random.default_rng(1)
    for _ in range(4):
        u = rng.normal(size=qd0.shape).astype(np.float32)
        u /= np.linalg.norm(u)
        eps = 1e-3
        plus = rollout(scene, contact_model, "implicit", 200, qd0=qd0 + eps * u, grad=False)[0]
        minus = rollout(scene, contact_model, "implicit", 200, qd0=qd0 - eps * u, grad=False)[0]
        fd = (plus - minus) / (2 * eps)
        analytic = float(grad @ u)
        assert abs(analytic - fd) <= 0.1 * max(abs(fd), abs(analytic)) + 1e-3, f"adjoint {analytic} vs fd {fd}"


def test_unknown_adjoint_raises(scene):
    with pytest.raises(ValueError, match="adjoint"):
        SolverMoreauGS(scene[0], adjoint="taped")
