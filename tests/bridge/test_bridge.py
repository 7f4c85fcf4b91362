"""Bridge (torch <-> SolverMoreauGS): autograd gradients against central finite differences through one and
three policy steps (4 substeps of 5 ms), no-grad path equality, tape lifetime and memory per step."""

import newton
import pytest
import torch

from isaaclab_diffsim.assets.anymal_c import build_anymal_c_model
from isaaclab_diffsim.bridge import DiffSimulator, live_records, tape_nbytes
from isaaclab_diffsim.solver import scenes

EPS = 1e-2  # central-difference step (float32 simulation)
RTOL, ATOL = 2e-2, 2e-5


def rollout(sim, q0, qd0, targets, steps, kappa=None):
    q, qd = q0, qd0
    for _ in range(steps):
        out = sim.step(q, qd, targets, kappa=kappa)
        q, qd = out.joint_q, out.joint_qd
    return out


def check_fd(loss, args, checks):
    """Compare d loss / d args[i][idx] from autograd with central differences; returns [(tape, fd)]."""
    leaves = [a.detach().clone().requires_grad_(True) for a in args]
    loss(*leaves).backward()
    results = []
    with torch.no_grad():
        for i, idx, eps in checks:
            plus, minus = [a.detach().clone() for a in args], [a.detach().clone() for a in args]
            plus[i][idx] += eps
            minus[i][idx] -= eps
            fd = (loss(*plus) - loss(*minus)).item() / (2 * eps)
            tape = leaves[i].grad[idx].item()
            results.append((tape, fd))
            assert abs(tape - fd) <= ATOL + RTOL * abs(fd), f"arg {i} {idx}: tape {tape:.6g} vs fd {fd:.6g}"
    return results


@pytest.mark.parametrize("steps", [1, 3])
def test_pendulum_gradients(device, steps):
    """Smooth case: a hinge pendulum with a PD drive (ke 20, kd 0.5) and a torque, no contact."""
    model = scenes.pendulum_model(angle=0.8, device=device, requires_grad=True)
    model.joint_target_mode.fill_(int(newton.JointTargetMode.POSITION_VELOCITY))
    model.joint_target_ke.fill_(20.0)
    model.joint_target_kd.fill_(0.5)
    sim = DiffSimulator(model)
    q0, _ = sim.default_state()

    def loss(target, qd0, tau):
        q, qd = q0, qd0
        for _ in range(steps):
            q, qd, body_q, body_qd = sim.step(q, qd, target, joint_f=tau)
        return q.sum() + 0.3 * qd.sum() + body_q[0, 0] - 0.5 * body_qd[0, 4]

    args = [torch.tensor([0.2], device=device), torch.tensor([0.5], device=device), torch.tensor([1.0], device=device)]
    print(check_fd(loss, args, [(0, 0, EPS), (1, 0, EPS), (2, 0, EPS)]))


@pytest.mark.parametrize("steps", [1, 3])
def test_anymal_airborne_gradients(device, steps):
    """Smooth multi-body case: ANYmal C falling freely 2 m above the ground (no contact), legs under PD."""
    model, layout = build_anymal_c_model(num_worlds=1, device=device, base_height=2.0, requires_grad=True)
    sim = DiffSimulator(model)
    q0, qd0 = sim.default_state()
    base, foot = int(layout.base_body[0]), int(layout.foot_bodies[0, 0])

    def loss(target, qd):
        out = rollout(sim, q0, qd, target, steps)
        return out.body_q[foot, 0] + out.body_q[base, 2] + 0.1 * out.joint_qd[0, 3:].sum() + out.joint_q[0, 7:].sum()

    checks = [(0, (0, 8), EPS), (0, (0, 13), EPS), (1, (0, 2), EPS), (1, (0, 4), EPS), (1, (0, 9), EPS)]
    print(check_fd(loss, [q0.clone(), qd0.clone()], checks))


@pytest.fixture(scope="module")
def standing():
    """ANYmal C after 0.8 s of settling on its feet (smoothed contact, kappa 300, kp 40 / kd 5)."""
    model, layout = build_anymal_c_model(num_worlds=1, device="cpu", requires_grad=True)
    sim = DiffSimulator(model, contact_model="smoothed", kappa=300.0)
    q_def, qd = sim.default_state()
    q = q_def.clone()
    with torch.no_grad():
        for _ in range(40):
            q, qd = sim.step(q, qd, q_def)[:2]
    assert sim.last_contact_impulses()[:, 0].min() > 0.1, "all four feet should be loaded"
    return sim, layout, q_def, q, qd


@pytest.mark.parametrize("steps", [1, 3])
def test_anymal_contact_gradients(standing, steps):
    """Through smoothed contact: d(base height + 0.1 base forward/vertical velocity) / d(targets, qd, kappa)."""
    sim, layout, q_def, q0, qd0 = standing
    base = int(layout.base_body[0])

    def loss(target, qd, kappa):
        out = rollout(sim, q0, qd, target, steps, kappa=kappa)
        return out.body_q[base, 2] + 0.1 * out.joint_qd[0, 0] + 0.1 * out.joint_qd[0, 2]

    checks = [
        (0, (0, 8), EPS),
        (0, (0, 9), EPS),
        (0, (0, 15), EPS),
        (1, (0, 0), EPS),
        (1, (0, 2), EPS),
        (1, (0, 10), EPS),
        (2, 0, 10.0),
    ]
    print(check_fd(loss, [q_def.clone(), qd0.clone(), torch.tensor([300.0])], checks))


def test_no_grad_path_matches(device):
    """Same numbers with and without a tape; no-grad outputs are not overwritten by later steps."""
    model, _ = build_anymal_c_model(num_worlds=2, device=device, base_height=0.55, requires_grad=True)
    sim = DiffSimulator(model, kappa=300.0)
    q0, qd0 = sim.default_state()
    target = (q0 + 0.1).requires_grad_(True)
    before = live_records()
    with_tape = rollout(sim, q0, qd0, target, 3)
    assert with_tape.joint_q.requires_grad and live_records() == before + 3
    with torch.no_grad():
        fast = rollout(sim, q0, qd0, target, 3)
        kept = [t.clone() for t in fast]
        rollout(sim, q0, qd0 + 1.0, target, 2)
    for a, b, c in zip(with_tape, fast, kept):
        assert not b.requires_grad
        torch.testing.assert_close(a.detach(), b, rtol=0.0, atol=1e-6)
        assert torch.equal(b, c)
    del with_tape, a  # the loop variable holds an output too
    assert live_records() == before, "tapes must be freed with their outputs"


def test_memory_per_step_bounded(device):
    """Each call keeps one tape (constant bytes, close to the estimate) until backward, which frees it."""
    model, layout = build_anymal_c_model(num_worlds=4, device=device, requires_grad=True)
    sim = DiffSimulator(model, kappa=300.0)
    q, qd = sim.default_state()
    target = q.clone().requires_grad_(True)
    sizes, records, before = [], [], live_records()
    for _ in range(6):
        out = sim.step(q, qd, target)
        q, qd = out.joint_q, out.joint_qd
        rec = out.body_q.grad_fn.record  # the PhysicsStepFunction node
        sizes.append(tape_nbytes(rec.tape, sim.persistent_arrays()))
        records.append(rec)
    assert live_records() == before + 6
    assert len(set(sizes[1:])) == 1 and sizes[0] <= sizes[1], sizes  # step 0: qd needs no gradient buffer
    estimate = sim.step_memory_bytes()
    assert 0.8 * estimate <= sizes[1] <= 1.2 * estimate, (sizes[1], estimate)
    print(f"bytes per policy step (4 worlds, 4 substeps): measured {sizes[1]}, estimate {estimate}")
    out.body_q[layout.base_body, 2].sum().backward()
    assert live_records() == before and all(r.tape is None for r in records)
    assert torch.isfinite(target.grad).all() and target.grad.abs().sum() > 0


def test_misuse_is_reported(device):
    """A second backward (retain_graph) and an in-place edit of a saved tensor raise instead of lying."""
    model = scenes.pendulum_model(device=device, requires_grad=True)
    sim = DiffSimulator(model)
    q0, qd0 = sim.default_state()
    qd = qd0.clone().requires_grad_(True)
    out = sim.step(q0, qd)
    out.joint_q.sum().backward(retain_graph=True)
    with pytest.raises(RuntimeError, match="twice"):
        out.joint_q.sum().backward()
    out = sim.step(q0, qd)
    out.joint_q.add_(1.0)
    with pytest.raises(RuntimeError, match="inplace"):
        out.joint_qd.sum().backward()
