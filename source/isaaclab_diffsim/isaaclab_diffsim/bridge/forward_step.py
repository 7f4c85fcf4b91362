"""``ForwardStepper``: gradient-free policy steps through persistent buffers, replayed from a captured Warp graph.

The inputs are copied into buffers allocated once (their Warp views made once), the substeps write into two
reused states, so every array a launch reads or writes keeps its address from step to step. That makes the
substeps of one policy step capturable (``wp.ScopedCapture``: a CUDA graph on GPUs, Warp's recorded launch stream
on the CPU), and the capture is replayed with one ``wp.capture_launch`` instead of ~30 ``wp.launch`` calls.

A graph is valid for one configuration: the solver object and everything it holds (its layout, rebuilt by
``notify_model_changed``; its scratch; its scalar settings), the model's arrays, the substep count and dt, and
which optional inputs are given. Each call compares that configuration with the captured one (identity for
objects, value for scalars) and steps eagerly, then re-captures, when it differs; :meth:`invalidate` drops the
graph explicitly. The step never reads a device value on the host (no synchronization), and a replay performs
the same launches on the same addresses as the eager step, so both give bitwise equal results. A step made while
a ``wp.Tape`` records never replays or captures (the tape must see the launches).
"""

from __future__ import annotations

import contextlib
import gc

import newton
import torch
import warp as wp
import warp._src.context as _warp_context  # the active wp.Tape (runtime.tape) has no public accessor

from ..solver.step_graphs import StepGraphs
from .physics_step import make_control, new_state, run_substeps

_SCALARS = (bool, int, float, str, type(None))
_OUTPUTS = ("joint_q", "joint_qd", "body_q", "body_qd")


def _sharded(solver) -> bool:
    """Whether ``solver`` splits its steps over shards on CPU threads (``SolverMoreauGS(threads=N)``)."""
    parts = getattr(solver, "step_parts", None)
    return parts is not None and wp.get_device(solver.model.device).is_cpu and len(parts()) > 1


def config_signature(*objects, skip=()) -> tuple:
    """The attribute values of ``objects`` (compared by :func:`same_config`): what a captured graph depends on;
    attributes named in ``skip`` left out."""
    return tuple(v for obj in objects for k, v in vars(obj).items() if k not in skip)


def same_config(a: tuple | None, b: tuple) -> bool:
    """Whether two signatures match: the same objects (identity) and equal scalars (value and type)."""
    if a is None or len(a) != len(b):
        return False
    for x, y in zip(a, b):
        if x is y:
            continue
        if type(x) is not type(y) or not isinstance(x, _SCALARS) or x != y:
            return False
    return True


class ForwardStepper:
    """Steps a model's solver without a tape through persistent buffers; ``capture`` enables graph replay."""

    def __init__(self, model: newton.Model, capture: bool = True):
        self.model, self.capture = model, bool(capture)
        dev = torch.device(wp.device_to_torch(model.device))
        nq, nd = model.joint_coord_count, model.joint_dof_count
        self._buffers = {
            "joint_q": torch.zeros(nq, device=dev),
            "joint_qd": torch.zeros(nd, device=dev),
            "target_q": torch.zeros(nq, device=dev),
            "joint_f": torch.zeros(nd, device=dev),
            "kappa": torch.zeros(1, device=dev),
        }
        self._views = {k: wp.from_torch(t, dtype=wp.float32, requires_grad=False) for k, t in self._buffers.items()}
        self._start = newton.State()
        self._start.joint_q, self._start.joint_qd = self._views["joint_q"], self._views["joint_qd"]
        self._states = [new_state(model, False), new_state(model, False)]
        self._outputs = [[wp.to_torch(getattr(s, n), requires_grad=False) for n in _OUTPUTS] for s in self._states]
        self._controls: dict[tuple[bool, bool], newton.Control] = {}
        self._graph = None
        self._key: tuple | None = None
        self._records: dict = {}  # the solver's STEP_RECORDS as a replay leaves them
        self._capture_stream = None
        self.captures = 0
        """Number of graphs captured so far (a re-capture after a configuration change counts again)."""
        self.replays = 0
        """Number of steps run by replaying a captured graph."""

    @contextlib.contextmanager
    def _capture_scope(self):
        """Record on the CPU; on CUDA on a stream of our own (torch's default stream is the legacy one, which cannot
        capture). The graph is then launched on the caller's current stream, ordered after the input copies."""
        device = wp.get_device(self.model.device)
        if not device.is_cuda:
            with wp.ScopedCapture(device=device) as cap:
                yield cap
            return
        if self._capture_stream is None:
            self._capture_stream = wp.Stream(device)
        with wp.ScopedStream(self._capture_stream), wp.ScopedCapture(stream=self._capture_stream) as cap:
            yield cap

    def invalidate(self) -> None:
        """Drop the captured graph; the next step runs eagerly and captures anew."""
        self._graph, self._key = None, None

    def _control(self, with_target: bool, with_force: bool) -> newton.Control:
        ctrl = self._controls.get((with_target, with_force))
        if ctrl is None:
            tq = self._views["target_q"] if with_target else None
            ctrl = make_control(self.model, tq, self._views["joint_f"] if with_force else None)
            self._controls[(with_target, with_force)] = ctrl
        return ctrl

    def step(self, solver, substeps: int, dt: float, joint_q, joint_qd, target_q=None, joint_f=None, kappa=None):
        """Advance flat float32 (joint_q, joint_qd) by ``substeps`` x ``dt``; inputs as in ``PhysicsStepFunction``
        (already checked; ``kappa`` may also be a float). Returns new tensors (joint_q, joint_qd, body_q (nb, 7),
        body_qd (nb, 6))."""
        given = {"joint_q": joint_q, "joint_qd": joint_qd, "target_q": target_q, "joint_f": joint_f, "kappa": kappa}
        for name, t in given.items():
            if isinstance(t, float):
                self._buffers[name].fill_(t)
            elif t is not None:
                self._buffers[name].copy_(t.detach().reshape(-1))
        ctrl = self._control(target_q is not None, joint_f is not None)
        kap = self._views["kappa"] if kappa is not None else None
        chain = [self._start] + [self._states[k % 2] for k in range(substeps)]
        config = (solver, substeps, dt, target_q is not None, joint_f is not None, kappa is not None)
        replayable = self.capture and _warp_context.runtime.tape is None
        names = getattr(solver, "STEP_RECORDS", ())  # set back by every replay: not configuration
        key = None
        if replayable and self._graph is not None:
            key = config + config_signature(solver, self.model, skip=names)
        if key is not None and same_config(self._key, key):
            if isinstance(self._graph, StepGraphs):
                self._graph.launch()
            else:
                wp.capture_launch(self._graph)
            for name, value in self._records.items():
                setattr(solver, name, value)
            self.replays += 1
        else:
            # Eager first: allocations and module loads happen here, outside any capture.
            run_substeps(solver, chain, ctrl, kap, dt)
            if replayable:
                self.invalidate()
                eager = {name: getattr(solver, name) for name in names}
                # A capture records the launches without running them (on CPU and CUDA alike).
                with paused_gc():
                    if _sharded(solver):  # the shards' graphs replayed at once on their threads
                        self._graph = StepGraphs(solver)
                        self._graph.capture(lambda: None, lambda: run_substeps(solver, chain, ctrl, kap, dt))
                    else:
                        with self._capture_scope() as cap:
                            run_substeps(solver, chain, ctrl, kap, dt)
                        self._graph = cap.graph
                self._key = config + config_signature(solver, self.model, skip=names)
                self._records = {name: getattr(solver, name) for name in names}  # what replays leave
                for name, value in eager.items():
                    setattr(solver, name, value)
                self.captures += 1
        return tuple(t.clone() for t in self._outputs[(substeps - 1) % 2])


@contextlib.contextmanager
def paused_gc():
    """No garbage collection (and so no collection-driven frees of device memory) while a graph is recorded."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
