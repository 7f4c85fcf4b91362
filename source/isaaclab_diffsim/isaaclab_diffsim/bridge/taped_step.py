"""``TapedStepper``: differentiable policy steps through persistent buffers, forward and backward replayed from
captured Warp graphs (CPU).

An eager differentiable step wraps new arrays around its inputs, makes new states and records ~10 launches per
substep on a new ``wp.Tape``, and its backward launches every adjoint from Python: at the main job's size that Python
costs about as much as the kernels. A :class:`TapedSlot` keeps what one step in flight needs: input buffers with
gradients, the substeps' states, the solver's scratch sets and a tape. The first step through a slot runs eagerly
on them (recording the tape) and the same launches are then captured into a forward graph; its first backward runs
the tape and captures it into a backward graph. Later steps through the slot copy their inputs in and replay the
forward graph, and their backward replays the backward graph: the same kernels on the same buffers in the same
order, so states and gradients are bitwise the eager ones. With sharded threads (``SolverMoreauGS(threads=N)``)
each direction is a few graphs, the shards' replayed at once on their threads (``solver.step_graphs``). A slot
serves one step from its forward until its backward has run (or its outputs are garbage), so a horizon of h steps
holds h slots.

A slot's graphs hold for one configuration: the solver and model objects and their settings (as
``ForwardStepper``'s, less the solver's ``STEP_RECORDS``, which a replay sets back to what the eager run left) and
which inputs are given or differentiated. A step whose configuration differs runs eagerly and captures anew. Steps
the graphs cannot express run eagerly without a slot (:meth:`TapedStepper.supports`): a CUDA device, a
differentiated kappa with sharded threads, warm starting, penalty substeps, an enclosing tape, or the substep probe.
"""

from __future__ import annotations

import weakref

import newton
import torch
import warp as wp
import warp._src.context as _warp_context  # the active wp.Tape (runtime.tape) has no public accessor

from ..solver.step_graphs import StepGraphs
from .forward_step import config_signature, paused_gc, same_config
from .physics_step import STEP_INPUTS, make_control, new_state, run_substeps


class TapedSlot:
    """Persistent buffers, tape and graphs of one differentiable policy step of ``substeps`` substeps; ``given`` and
    ``need`` (5 flags each, in ``STEP_INPUTS`` order) say which inputs are given and which get gradients."""

    def __init__(self, model: newton.Model, substeps: int, given: tuple, need: tuple):
        self.shape = (int(substeps), tuple(given), tuple(need))
        dev = torch.device(wp.device_to_torch(model.device))
        nq, nd = model.joint_coord_count, model.joint_dof_count
        sizes = dict(zip(STEP_INPUTS, (nq, nd, nq, nd, 1)))
        self.inputs, self.grads, views = {}, {}, {}
        for name, has, grad in zip(STEP_INPUTS, given, need):
            if not has and name != "kappa":  # kappa is always read: the given one or the solver's, copied in
                continue
            t = torch.zeros(sizes[name], device=dev)
            g = torch.zeros_like(t) if grad else None
            self.inputs[name], self.grads[name] = t, g
            views[name] = wp.from_torch(t, dtype=wp.float32, grad=g, requires_grad=grad)
        start = newton.State()
        start.joint_q, start.joint_qd = views["joint_q"], views["joint_qd"]
        self.states = [start] + [new_state(model, True) for _ in range(substeps)]
        self.control = make_control(model, views.get("target_q"), views.get("joint_f"))
        self.kappa = views["kappa"]
        last = self.states[-1]
        arrays = (last.joint_q, last.joint_qd, last.body_q, last.body_qd)
        self.outputs = [wp.to_torch(a, requires_grad=False) for a in arrays]
        self.out_grads = [wp.to_torch(a.grad, requires_grad=False) for a in arrays]
        self._zeroed = [a.grad for s in self.states[1:] for a in (s.joint_q, s.joint_qd, s.body_q, s.body_qd)]
        self._zeroed += [v.grad for v in views.values() if v.grad is not None]
        self.tape: wp.Tape | None = None
        self.scratch: list = []
        self.key: tuple | None = None
        self.records: dict = {}
        self.graphs: StepGraphs | None = None

    def _zero_grads(self) -> None:
        for g in self._zeroed:
            g.zero_()

    def _steps(self, solver, dt: float) -> list:
        """The step on the slot's buffers (recorded on the active tape, if any); returns the scratch sets it used."""
        with solver.taped_scratch(self.scratch) as used:
            run_substeps(solver, self.states, self.control, self.kappa, dt)
        return used

    def forward(self, solver, dt: float, signature, values: dict) -> bool:
        """Copy ``values`` (name -> tensor) in and step; replays the forward graphs when ``signature()`` is the
        captured configuration, else runs eagerly and captures. Returns whether it replayed."""
        for name, t in values.items():
            self.inputs[name].copy_(t.detach().reshape(-1))
        if self.graphs is not None and same_config(self.key, signature()):
            self.graphs.launch()
            for name, value in self.records.items():
                setattr(solver, name, value)
            return True
        solver.recycle_scratch(self.scratch)  # a re-capture: the old tape is dropped, its sets go back to the pool
        self.tape, self.scratch, self.graphs = wp.Tape(), [], None
        self._zero_grads()
        with self.tape:
            self.scratch = self._steps(solver, dt)
        self.records = {name: getattr(solver, name) for name in solver.STEP_RECORDS}
        graphs = StepGraphs(solver)
        with paused_gc():  # after the eager run: its lazy allocations made
            graphs.capture(self._zero_grads, lambda: self._steps(solver, dt))
        self.graphs, self.key = graphs, signature()
        return False

    def backward(self, out_grads) -> list:
        """Seed the outputs' gradients and run the backward (replayed after the first); returns the inputs'
        gradients (new tensors, None where not needed) in ``STEP_INPUTS`` order."""
        for buf, g in zip(self.out_grads, out_grads):
            buf.copy_(g)
        if self.graphs.backward_graphs is None:
            self.tape.backward()
            with paused_gc():
                self.graphs.capture_backward(self.tape)
        else:
            self.graphs.launch_backward()
        return [None if self.grads.get(n) is None else self.grads[n].clone() for n in STEP_INPUTS]


class TapedStepper:
    """The slots of a model's differentiable steps: taken by a step's forward, handed back after its backward or
    when its outputs are garbage. ``captures`` / ``replays`` count the slot steps run eagerly / replayed."""

    def __init__(self, model: newton.Model):
        self.model = model
        self._free: dict[tuple, list[TapedSlot]] = {}
        self._generation = 0
        self.captures = 0
        self.replays = 0

    def supports(self, solver, substeps: int, dt: float, need: tuple) -> bool:
        """Whether a differentiable step of ``solver`` getting the gradients ``need`` (``STEP_INPUTS`` order) can go
        through a slot (see the module doc)."""
        sharded = getattr(solver, "threads", 1) > 1
        return (
            wp.get_device(self.model.device).is_cpu
            and _warp_context.runtime.tape is None
            and getattr(solver, "STEP_RECORDS", None) is not None
            and hasattr(solver, "step_parts")
            and not (sharded and need[STEP_INPUTS.index("kappa")])
            and not getattr(solver, "warm_start", False)
            and solver.substeps(dt) == 1
            and substeps >= 1
        )

    def invalidate(self) -> None:
        """Drop every free slot; slots in flight are dropped when handed back."""
        self._free.clear()
        self._generation += 1

    def step(self, solver, substeps: int, dt: float, values: dict, need: tuple):
        """Step through a free slot; ``values``: the given inputs by name (kappa a tensor or None: the solver's,
        copied in). Returns (slot, its output tensors: new tensors) and keeps the slot until :meth:`release`."""
        given = tuple(values.get(n) is not None for n in STEP_INPUTS)
        shape = (int(substeps), given, tuple(need))
        free = self._free.setdefault(shape, [])
        slot = free.pop() if free else TapedSlot(self.model, substeps, given, need)
        slot.generation = self._generation
        try:
            values = {n: t for n, t in values.items() if t is not None}
            if "kappa" not in values:  # snapshot: a later change of solver.kappa must not alter this step's backward
                values["kappa"] = wp.to_torch(solver.kappa_array, requires_grad=False)

            def signature():
                records = solver.STEP_RECORDS
                return (solver, substeps, dt, *given, *need) + config_signature(solver, self.model, skip=records)

            if slot.forward(solver, dt, signature, values):
                self.replays += 1
            else:
                self.captures += 1
        except BaseException:
            self.release(slot)
            raise
        return slot, [t.clone() for t in slot.outputs]

    def release(self, slot: TapedSlot) -> None:
        """Hand a slot back (its backward has run, or will never run)."""
        if getattr(slot, "generation", None) == self._generation:
            self._free.setdefault(slot.shape, []).append(slot)

    def release_when_collected(self, owner, slot: TapedSlot):
        """Hand ``slot`` back when ``owner`` is garbage; returns the finalizer (call it to hand back earlier)."""
        return weakref.finalize(owner, self.release, slot)
