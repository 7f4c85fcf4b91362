"""``DiffSimulator``: torch-facing stepping of a Newton model with SolverMoreauGS (differentiable or fast)."""

from __future__ import annotations

import math
from typing import NamedTuple

import newton
import torch
import warp as wp

from isaaclab_diffsim.solver import SolverMoreauGS

from .forward_step import ForwardStepper
from .physics_step import PhysicsStepFunction, check_inputs, new_state, stream_scope
from .taped_step import TapedStepper


class StepOutput(NamedTuple):
    """State after a policy step: joint_q/joint_qd shaped like the inputs, body_q (nb, 7), body_qd (nb, 6)."""

    joint_q: torch.Tensor
    joint_qd: torch.Tensor
    body_q: torch.Tensor
    body_qd: torch.Tensor


class DiffSimulator:
    """Owns a model and its solver and advances torch joint states by one policy step.

    ``step`` records a tape (via :class:`PhysicsStepFunction`) when grad mode is on and an input requires
    grad; otherwise it steps persistent buffers without a tape (:class:`ForwardStepper`) and returns fresh
    tensors. With ``capture_forward`` (the default) those gradient-free steps are captured once into a Warp graph
    (CPU or CUDA) and replayed, bitwise equal to eager stepping; after changing the model in place call
    ``notify_model_changed`` (Newton's convention), which also drops the graph. With ``capture_taped`` (the default)
    differentiable steps on the CPU go through :class:`TapedStepper` slots whose forward and backward are replayed
    from graphs after their first step, bitwise equal to the eager tape.
    ``targets`` are joint position targets, coordinate-shaped like joint_q (the free base's entries are
    ignored); ``joint_f`` generalized forces, dof-shaped. Either may be flat or (num_worlds, per-world).
    """

    def __init__(
        self,
        model: newton.Model,
        solver: SolverMoreauGS | None = None,
        substeps: int = 4,
        dt: float = 0.005,
        capture_forward: bool = True,
        capture_taped: bool = True,
        **solver_kwargs,
    ):
        self.model = model
        self.forward = ForwardStepper(model, capture=capture_forward)
        self.taped = TapedStepper(model) if capture_taped else None
        self.solver = solver if solver is not None else SolverMoreauGS(model, **solver_kwargs)
        self.substeps, self.dt = int(substeps), float(dt)
        self.device = torch.device(wp.device_to_torch(model.device))
        self._fk_state = None

    @property
    def solver(self) -> SolverMoreauGS:
        """The solver stepped; assigning another one drops the graph captured for the old one (and its reference)."""
        return self._solver

    @solver.setter
    def solver(self, solver: SolverMoreauGS) -> None:
        self._solver = solver
        self.forward.invalidate()
        if self.taped is not None:
            self.taped.invalidate()

    def notify_model_changed(self, flags: int = 0) -> None:
        """Forward a model change to the solver (layout rebuilt) and drop the captured forward graph."""
        self.solver.notify_model_changed(flags)
        self.forward.invalidate()
        if self.taped is not None:
            self.taped.invalidate()

    def default_state(self) -> tuple[torch.Tensor, torch.Tensor]:
        """The model's initial joint_q, joint_qd as new (num_worlds, per-world) tensors when worlds are uniform."""
        q, qd = wp.to_torch(self.model.joint_q, False).clone(), wp.to_torch(self.model.joint_qd, False).clone()
        n = max(self.model.world_count, 1)
        if q.numel() % n == 0 and qd.numel() % n == 0:
            q, qd = q.view(n, -1), qd.view(n, -1)
        return q, qd

    def step(self, joint_q, joint_qd, targets=None, joint_f=None, kappa=None, substeps=None, dt=None) -> StepOutput:
        """Advance (joint_q, joint_qd) by ``substeps`` x ``dt`` (defaults from the constructor)."""
        substeps = self.substeps if substeps is None else int(substeps)
        dt = self.dt if dt is None else float(dt)
        flat = [None if t is None else t.reshape(-1) for t in (joint_q, joint_qd, targets, joint_f)]
        kappa = self._checked_kappa(kappa)
        inputs = (*flat, kappa)
        if torch.is_grad_enabled() and any(torch.is_tensor(t) and t.requires_grad for t in inputs):
            if not torch.is_tensor(kappa) and kappa is not None:
                kappa = torch.tensor([kappa], device=self.device)
            q, qd, bq, bqd = PhysicsStepFunction.apply(self.solver, substeps, dt, *flat, kappa, self.taped)
        else:
            check_inputs(self.model, *flat)
            with torch.no_grad(), stream_scope(joint_q.device):
                q, qd, bq, bqd = self.forward.step(self.solver, substeps, dt, *inputs)
        return StepOutput(q.view(joint_q.shape), qd.view(joint_qd.shape), bq, bqd)

    def forward_kinematics(self, joint_q: torch.Tensor) -> torch.Tensor:
        """Body poses (num_bodies, 7: position, quaternion xyzw) of the joint coordinates ``joint_q`` (flat or
        (num_worlds, per-world)) by ``newton.eval_fk``, as :meth:`step` returns them; without gradient."""
        q = joint_q.detach().reshape(-1).to(self.device, torch.float32).contiguous()
        if q.numel() != self.model.joint_coord_count:
            raise ValueError(
                f"DiffSimulator.forward_kinematics: joint_q has {q.numel()} entries, the model "
                f"{self.model.joint_coord_count}"
            )
        if self._fk_state is None:
            self._fk_state = new_state(self.model, requires_grad=False)
        state = self._fk_state
        with torch.no_grad(), stream_scope(joint_q.device):
            wp.copy(state.joint_q, wp.from_torch(q))
            newton.eval_fk(self.model, state.joint_q, state.joint_qd, state)
            return wp.to_torch(state.body_q, False).view(-1, 7).clone()

    @staticmethod
    def _checked_kappa(kappa):
        """A number stays a float (checked on the host, no device read); a tensor is checked with one host read."""
        if kappa is None:
            return None
        if not torch.is_tensor(kappa):
            value = float(kappa)
            if not (math.isfinite(value) and value > 0.0):
                raise ValueError(f"DiffSimulator.step: kappa must be one positive finite value, got {[value]}")
            return value
        if kappa.numel() != 1 or not bool(torch.isfinite(kappa).all() & (kappa > 0).all()):
            raise ValueError(f"DiffSimulator.step: kappa must be one positive finite value, got {kappa.tolist()}")
        return kappa

    def step_memory_bytes(self, substeps=None) -> int:
        """Estimated bytes one differentiable policy step keeps alive until its backward."""
        m = self.model
        substeps = self.substeps if substeps is None else int(substeps)
        state = 4 * (m.joint_coord_count + m.joint_dof_count + 13 * m.body_count) * 2
        inputs = 4 * (2 * m.joint_coord_count + 2 * m.joint_dof_count)  # input gradient buffers
        return substeps * (self.solver.step_memory_bytes(True, self.dt) + state) + inputs

    def persistent_arrays(self) -> list:
        """Model and solver arrays (shared by all steps), excluded when measuring a tape."""
        arrays = [v for v in vars(self.model).values() if isinstance(v, wp.array)]
        return arrays + [v for v in vars(self.solver).values() if isinstance(v, wp.array)]

    def last_contact_impulses(self) -> torch.Tensor:
        """Impulses (normal, t1, t2) [N s] of the last substep per contact candidate (per world, colliding
        shapes in shape order), shape (num_candidates, 3); a copy, without gradient."""
        return wp.to_torch(self.solver.last_contact_impulses(), False).view(-1, 3).clone()
