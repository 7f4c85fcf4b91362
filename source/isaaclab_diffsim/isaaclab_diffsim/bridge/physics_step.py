"""``PhysicsStepFunction``: one policy step (``substeps`` solver steps) as a torch autograd op.

Forward records the substeps on its own ``wp.Tape``; backward seeds the output gradients (torch ->
Warp, outside any recording tape), replays the tape once and hands the input gradients back to torch.
Inputs are wrapped zero-copy (``wp.from_torch``), outputs are zero-copy torch views of the last
substep's Warp state (``wp.to_torch``), so the output of call t feeds call t+1 and torch chains the calls.

Alive per call until its backward runs and then released (if no backward runs: until the outputs are
garbage-collected): the tape, its ``substeps`` solver scratch sets (``solver.step_memory_bytes()`` each),
``substeps`` states (the last one the output tensors) with gradient buffers, and the input gradient
buffers. :func:`tape_nbytes` measures it. ``retain_graph`` (a second backward) is not supported.

Inside :func:`probe_substeps` every differentiable call also records per substep the solver's final Gauss-Seidel
residual (forward) and the norms of the adjoints of joint_q and joint_qd (after its backward); off, it costs
one check per call.
"""

from __future__ import annotations

import contextlib
import weakref

import newton
import numpy as np
import torch
import warp as wp

_LIVE = weakref.WeakSet()
_PROBE: SubstepProbe | None = None


class StepTrace:
    """Per-substep diagnostics of one differentiable call (arrays of length ``substeps``, NaN until known).

    ``residual``: max over articulations of the final Gauss-Seidel sweep's impulse change [N s]
    (``solver.last_solve_residual()``; NaN when the solver does not report it). ``adjoint_q``, ``adjoint_qd``: norms
    of the loss's gradient with respect to joint_q, joint_qd after each substep, filled by the backward;
    ``adjoint_qd_world`` (substeps, worlds): the joint_qd norm per world.
    """

    def __init__(self, substeps: int, worlds: int):
        nan = lambda *shape: np.full(shape, np.nan)  # noqa: E731
        self.residual, self.adjoint_q, self.adjoint_qd = nan(substeps), nan(substeps), nan(substeps)
        self.adjoint_qd_world = nan(substeps, worlds)

    def after_substep(self, k: int, solver, state, tape: wp.Tape) -> None:
        """Read the residual of substep k; mark the tape so that its backward reads the adjoint of ``state`` (the
        substep's output) once complete: after the later substeps' adjoints, before Warp zeroes it in this one's."""
        read = getattr(solver, "last_solve_residual", None)
        res = read() if callable(read) else None
        if res is not None and res.size > 0:
            self.residual[k] = float(np.abs(res.numpy()).max())
        tape.record_func(lambda: self._read_adjoint(k, state), [])

    def _read_adjoint(self, k: int, state) -> None:
        gq, gqd = state.joint_q.grad.numpy(), state.joint_qd.grad.numpy()
        self.adjoint_q[k], self.adjoint_qd[k] = np.linalg.norm(gq), np.linalg.norm(gqd)
        worlds = self.adjoint_qd_world.shape[1]
        if gqd.size % worlds == 0:
            self.adjoint_qd_world[k] = np.linalg.norm(gqd.reshape(worlds, -1), axis=1)


class SubstepProbe:
    """The :class:`StepTrace` of every differentiable call made inside :func:`probe_substeps`, in call order."""

    def __init__(self):
        self.steps: list[StepTrace] = []


@contextlib.contextmanager
def probe_substeps():
    """Trace the differentiable calls made inside (forward residuals; adjoints once their backward has run)."""
    global _PROBE
    previous, _PROBE = _PROBE, SubstepProbe()
    try:
        yield _PROBE
    finally:
        _PROBE = previous


class StepRecord:
    """What one differentiable call keeps alive for its backward."""

    def __init__(self, tape, out_grads, in_grads, solver=None, scratch=()):
        self.tape, self.out_grads, self.in_grads = tape, out_grads, in_grads
        self.solver, self.scratch = solver, list(scratch)
        _LIVE.add(self)

    def backward(self, out_grads) -> tuple:
        """Seed the outputs' gradients, run the tape and release; returns the inputs' gradients."""
        for buf, g in zip(self.out_grads, out_grads):
            buf.copy_(g)
        self.tape.backward()
        in_grads = self.in_grads
        self.release()
        return in_grads

    def release(self):
        """After the backward: drop the tape and hand the solver scratch it recorded back for reuse."""
        # Not tape.reset(): it zeroes every recorded gradient buffer, the ones handed to torch included.
        self.tape.launches.clear()
        self.tape.gradients.clear()
        if self.solver is not None:
            self.solver.recycle_scratch(self.scratch)
        self.tape = self.out_grads = self.in_grads = self.solver = None
        self.scratch = []


STEP_INPUTS = ("joint_q", "joint_qd", "target_q", "joint_f", "kappa")
"""The differentiable inputs of a policy step, in ``PhysicsStepFunction``'s argument order."""


class SlotRecord:
    """What one differentiable call through a ``TapedStepper`` slot keeps for its backward: the slot, handed back
    after the backward, or when this record is garbage (no backward will run)."""

    def __init__(self, stepper, slot):
        self.slot, self.tape = slot, slot.tape
        self._finalizer = stepper.release_when_collected(self, slot)
        _LIVE.add(self)

    def backward(self, out_grads) -> list:
        try:
            return self.slot.backward(out_grads)
        finally:
            self._finalizer()  # hands the slot back
            self.slot = self.tape = None


def live_records() -> int:
    """Number of calls whose tape is still alive (awaiting backward, outputs not yet garbage)."""
    return sum(r.tape is not None for r in list(_LIVE))


def stream_scope(device: torch.device):
    """Run Warp on torch's current CUDA stream (ordering without host syncs); no-op on CPU."""
    if device.type == "cuda":
        return wp.ScopedStream(wp.stream_from_torch(device))
    return contextlib.nullcontext()


def wrap(t: torch.Tensor | None, dtype=wp.float32, grad: bool = False):
    """Zero-copy Warp view of ``t``; with ``grad``, a fresh zeroed torch gradient buffer is attached."""
    if t is None:
        return None, None
    t = t.detach()
    if not t.is_contiguous():
        t = t.contiguous()
    g = torch.zeros_like(t) if grad else None
    return wp.from_torch(t, dtype=dtype, grad=g, requires_grad=grad), g


def new_state(model: newton.Model, requires_grad: bool) -> newton.State:
    """A state holding only what the solver reads and writes (joint and body q/qd)."""
    s = newton.State()
    nq, nd, nb = model.joint_coord_count, model.joint_dof_count, model.body_count
    z = lambda n, dt: wp.zeros(n, dtype=dt, device=model.device, requires_grad=requires_grad)  # noqa: E731
    s.joint_q, s.joint_qd = z(nq, wp.float32), z(nd, wp.float32)
    s.body_q, s.body_qd = z(nb, wp.transform), z(nb, wp.spatial_vector)
    return s


def run_substeps(solver, chain, control, kappa, dt, after=None):
    """Step chain[k] -> chain[k + 1] for every k (a chain may reuse state objects), with ``kappa`` bound;
    ``after(k, solver)`` is called after substep k when given. Only the last state gets body_q / body_qd (forward
    kinematics): the intermediate states' bodies are read by nobody."""
    saved = solver.kappa_array
    if kappa is not None:
        solver.kappa_array = kappa
    last = len(chain) - 2
    try:
        for k, (src, dst) in enumerate(zip(chain[:-1], chain[1:])):
            solver.step(src, dst, control, None, dt, forward_kinematics=k == last)
            if after is not None:
                after(k, solver)
    finally:
        solver.kappa_array = saved


def make_control(model, target_q, joint_f):
    ctrl = model.control(clone_variables=False)
    ctrl.joint_target_q = target_q if target_q is not None else model.joint_target_q
    ctrl.joint_f = joint_f
    return ctrl


def check_inputs(model, joint_q, joint_qd, target_q, joint_f):
    want = {
        "joint_q": (joint_q, model.joint_coord_count),
        "joint_qd": (joint_qd, model.joint_dof_count),
        "joint_target_q": (target_q, model.joint_coord_count),
        "joint_f": (joint_f, model.joint_dof_count),
    }
    for name, (t, n) in want.items():
        if t is not None and (t.numel() != n or t.dtype != torch.float32):
            raise ValueError(f"{name}: expected {n} float32 values, got {tuple(t.shape)} {t.dtype}")


class PhysicsStepFunction(torch.autograd.Function):
    """(joint_q, joint_qd, joint_target_q, joint_f, kappa) -> (joint_q, joint_qd, body_q, body_qd) after
    ``substeps`` steps of ``dt``. Flat float32 tensors shaped like the model's arrays (joint_target_q
    coordinate-shaped, joint_f dof-shaped; None = model default / zero); kappa a 1-element tensor or
    None (the solver's value at call time). Outputs: (nq,), (nd,), (nb, 7) [p, quat xyzw], (nb, 6).
    """

    @staticmethod
    def forward(
        ctx, solver, substeps, dt, joint_q, joint_qd, joint_target_q=None, joint_f=None, kappa=None, stepper=None
    ):
        model = solver.model
        check_inputs(model, joint_q, joint_qd, joint_target_q, joint_f)
        need = ctx.needs_input_grad[3:8]
        ctx.kappa_shape = None if kappa is None else kappa.shape
        if stepper is not None and any(need) and _PROBE is None and stepper.supports(solver, substeps, dt, need):
            values = dict(zip(STEP_INPUTS, (joint_q, joint_qd, joint_target_q, joint_f, kappa)))
            slot, outs = stepper.step(solver, substeps, dt, values, need)
            ctx.record = SlotRecord(stepper, slot)
            ctx.save_for_backward(joint_q, joint_qd, joint_target_q, joint_f, kappa, *outs)
            return tuple(outs)
        dev = joint_q.device
        with stream_scope(dev):
            (q, gq), (qd, gqd) = wrap(joint_q, grad=need[0]), wrap(joint_qd, grad=need[1])
            (tq, gtq), (f, gf) = wrap(joint_target_q, grad=need[2]), wrap(joint_f, grad=need[3])
            if kappa is not None:
                kap, gk = wrap(kappa.reshape(1), grad=need[4])
            else:  # snapshot: a later change of solver.kappa must not alter this call's backward
                kap, gk = wp.clone(solver.kappa_array, requires_grad=False), None
            s0 = newton.State()
            s0.joint_q, s0.joint_qd = q, qd
            # Warp-owned outputs seen through torch views: a torch-owned output wrapped into the tape would
            # close a reference cycle output -> grad_fn -> tape -> output that the garbage collector misses.
            last = new_state(model, True)
            arrays = (last.joint_q, last.joint_qd, last.body_q, last.body_qd)
            outs = [wp.to_torch(a, requires_grad=False) for a in arrays]
            out_grads = [wp.to_torch(a.grad, requires_grad=False) for a in arrays]
            states = [s0] + [new_state(model, True) for _ in range(substeps - 1)] + [last]
            ctrl = make_control(model, tq, f)
            tape = wp.Tape() if any(need) else None
            after = None
            if _PROBE is not None and tape is not None:
                trace = StepTrace(substeps, max(model.world_count, 1))
                _PROBE.steps.append(trace)
                after = lambda k, solver: trace.after_substep(k, solver, states[k + 1], tape)  # noqa: E731
            with solver.taped_scratch() as scratch, tape if tape is not None else contextlib.nullcontext():
                run_substeps(solver, states, ctrl, kap, dt, after)  # a distinct state per substep
        in_grads = (gq, gqd, gtq, gf, gk)
        ctx.record = StepRecord(tape, out_grads, in_grads, solver, scratch) if tape is not None else None
        ctx.save_for_backward(joint_q, joint_qd, joint_target_q, joint_f, kappa, *outs)  # in-place edit checks
        return tuple(outs)

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, g_q, g_qd, g_bq, g_bqd):
        rec = ctx.record
        if rec is None or rec.tape is None:
            raise RuntimeError("PhysicsStepFunction: backward ran twice (retain_graph is not supported)")
        ctx.saved_tensors  # noqa: B018  raises if an input/output was modified in place
        ctx.record = None
        with stream_scope(g_q.device):
            gq, gqd, gtq, gf, gk = rec.backward((g_q, g_qd, g_bq, g_bqd))
        if gk is not None:
            gk = gk.reshape(ctx.kappa_shape)
        return None, None, None, gq, gqd, gtq, gf, gk, None


def tape_nbytes(tape: wp.Tape, exclude=()) -> int:
    """Bytes of distinct arrays (data + gradient) a tape references, minus the arrays in ``exclude``."""
    seen = {(a.ptr, a.size) for a in exclude if isinstance(a, wp.array)}
    total = 0
    for launch in tape.launches:
        if callable(launch):  # a recorded function: the solver's TapedLaunch names its arrays
            arrays = launch.arrays() if hasattr(launch, "arrays") else ()
        else:
            arrays = (*launch[3], *launch[4])
        for a in arrays:
            if isinstance(a, wp.array) and a.ptr is not None and (a.ptr, a.size) not in seen:
                seen.add((a.ptr, a.size))
                total += a.size * wp.types.type_size_in_bytes(a.dtype) * (2 if a.grad is not None else 1)
    return total
