"""Central finite differences of solver rollouts against their tape gradients."""

import math

import numpy as np
import warp as wp


@wp.kernel
def weighted_sum(
    q: wp.array(dtype=float),
    qd: wp.array(dtype=float),
    wq: wp.array(dtype=float),
    wqd: wp.array(dtype=float),
    out: wp.array(dtype=float),
):
    i = wp.tid()
    if i < q.shape[0]:
        wp.atomic_add(out, 0, wq[i] * q[i])
    if i < qd.shape[0]:
        wp.atomic_add(out, 0, wqd[i] * qd[i])


class Rollout:
    """loss = wq . q_T + wqd . qd_T after ``steps`` steps from (q0, qd0) under ``control``."""

    def __init__(self, model, solver, steps, dt, wq, wqd, control=None):
        self.model, self.solver, self.steps, self.dt, self.control = model, solver, steps, dt, control
        dev = model.device
        self.wq = wp.array(np.asarray(wq, dtype=np.float32), dtype=float, device=dev)
        self.wqd = wp.array(np.asarray(wqd, dtype=np.float32), dtype=float, device=dev)

    def _run(self, q0, qd0, tape=None):
        states = [self.model.state(requires_grad=tape is not None) for _ in range(self.steps + 1)]
        states[0].joint_q.assign(np.asarray(q0, dtype=np.float32))
        states[0].joint_qd.assign(np.asarray(qd0, dtype=np.float32))
        out = wp.zeros(1, dtype=float, device=self.model.device, requires_grad=True)
        ctx = tape if tape is not None else wp.ScopedDevice(self.model.device)
        with ctx:
            for i in range(self.steps):
                self.solver.step(states[i], states[i + 1], self.control, None, self.dt)
            dim = max(states[-1].joint_q.shape[0], states[-1].joint_qd.shape[0])
            wp.launch(weighted_sum, dim=dim, inputs=[states[-1].joint_q, states[-1].joint_qd, self.wq, self.wqd, out])
        return states, out

    def loss(self, q0, qd0) -> float:
        return float(self._run(q0, qd0)[1].numpy()[0])

    def gradients(self, q0, qd0):
        tape = wp.Tape()
        states, out = self._run(q0, qd0, tape)
        tape.backward(loss=out)
        return states, tape


def central_difference(f, x, idx, eps):
    xp, xm = np.array(x, dtype=np.float64), np.array(x, dtype=np.float64)
    xp[idx] += eps
    xm[idx] -= eps
    return (f(xp) - f(xm)) / (2 * eps)


def assert_close(tape_grad, fd, rtol, atol):
    assert np.isfinite(tape_grad)
    assert abs(tape_grad - fd) <= atol + rtol * abs(fd), f"tape {tape_grad} vs finite difference {fd}"


def assert_action_gradient_matches_fd(objective, a0, joints, min_fd, rel_tol=0.15, abs_tol=2e-6, eps=1e-2):
    """autograd's d objective / d a0[0, j] against the central difference of step ``eps``, for each j in ``joints``
    (``objective``: a torch function of the (envs, joints) actions that restores its own start state); each central
    difference must exceed ``min_fd`` in magnitude, so the term under test does move with that action."""
    import torch

    a = a0.clone().requires_grad_(True)
    (grad,) = torch.autograd.grad(objective(a), a)
    for j in joints:
        d = torch.zeros_like(a0)
        d[0, j] = eps
        with torch.no_grad():
            fd = float((objective(a0 + d) - objective(a0 - d)) / (2 * eps))
        assert abs(fd) > min_fd, (j, fd)
        assert math.isclose(float(grad[0, j]), fd, rel_tol=rel_tol, abs_tol=abs_tol), (j, float(grad[0, j]), fd)
