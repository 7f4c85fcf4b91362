"""SolverMoreauGS: differentiable articulated rigid-body dynamics with Moreau midpoint stepping and a
projected Gauss-Seidel contact solver (hard, sigmoid-smoothed or implicit compliant contact against ground planes
and static terrain meshes), or explicit penalty contact with symplectic Euler."""

from __future__ import annotations

import contextlib
import math
from functools import partial
from types import SimpleNamespace

import newton
import warp as wp
import warp._src.context as _warp_context  # the active wp.Tape (runtime.tape) has no public accessor
from newton.solvers import SolverBase

from ..utils.validation import check_value
from . import kernels
from .contact_adjoint import contact_adjoint
from .dynamics_adjoint import DynamicsAdjoint
from .dynamics_adjoint import supported as dynamics_adjoint_supported
from .factor_adjoint import FactorAdjoint
from .jacobian_adjoint import JacobianAdjoint
from .jacobian_adjoint import supported as jacobian_adjoint_supported
from .joints import integrate_multi_dof_positions
from .kinematics_adjoint import KinematicsAdjoint
from .model_checks import check_model, unhonoured_doc
from .parameters import (
    DEFAULT_ADJOINT,
    DEFAULT_PENALTY_PRESET,
    DEFAULT_TOLERANCE,
    PARAMETER_RULES,
    PENALTY_MAX_DT,
    SOFT_CONTACT_KD,
    SOFT_CONTACT_KE,
    SOFT_CONTACT_KF,
    check_parameters,
    penalty_coefficients,
)
from .position_adjoint import PositionAdjoint
from .scratch import StepScratch
from .shards import Shard, ShardedBackward, ShardRunner, ShardTape, capturing
from .shards import split as split_shards
from .shards import whole as whole_shard
from .taped_launch import launch, record, struct_adjoint
from .terrain_frames import contact_frames
from .topology import build_layout
from .type_ids import CONTACT_MODELS
from .velocity_adjoint import VelocityAdjoint


class SolverMoreauGS(SolverBase):
    """Generalized-coordinate articulated dynamics, Moreau midpoint time stepping, smoothed contact.

        One step of size dt (docs/contact_solver.md for the contact solve):
          1. q_m = q + dt/2 v;  2. H, h = tau - C, contact candidates, J at q_m;
          3. G = J H^-1 J^T, c = J (v + dt H^-1 h) (branch-sparse H = L^T L, no fill-in);
          4. contact impulses p by projected Gauss-Seidel (at most ``iterations`` sweeps, stopping at ``tolerance``;
             optionally warm-started);
          5. v+ = v + H^-1 (dt h + J^T P);  q+ = q_m + dt/2 v+;  body_q/body_qd by forward kinematics.
        The ``"penalty"`` model instead takes q_m = q (step 1 with 0 in place of dt/2), skips the solve (step 4:
        P = dt f(d, J v), explicit penalty forces at the start of the step) and ends with q+ = q + dt v+: symplectic
        Euler (docs/contact_solver.md "Penalty contact").

        Supported: trees of FREE (root only), REVOLUTE, PRISMATIC, BALL, D6 and FIXED joints, many worlds; sphere
        (centre), capsule (two end points), box (eight corners), cylinder (sampled cap rims), ellipsoid (its exact
        lowest point) and mesh / convex hull (hull vertices) shapes colliding with infinite ground planes and static
        terrain (triangle MESH or HFIELD shapes on body -1, closest feature per step; no ellipsoids), honouring
        collision groups, filter pairs and surface margins (docs/contact_solver.md "Terrain contact"). Body-body
        contact is not modelled. Unsupported joint or collision-shape types raise.
        Joint drives (``joint_target_ke/kd`` with ``control.joint_target_q/qd``), joint-limit springs and passive
        joint damping (``joint_damping``) are integrated implicitly (stable at large dt); Coulomb joint friction
        (``joint_friction``) is a smooth regularisation, implicit too (joints.passive_joint_force,
        docs/contact_solver.md); ``control.joint_f`` and ``state.body_f`` are applied.

        Model fields not honoured, refused at construction (and on notify_model_changed) when set away from their
        default (model_checks.UNHONOURED):
    {unhonoured}
        Read differently, by design (not refused): body-body contact is not modelled (shapes collide with ground
        planes and static terrain only); the penalty and detection parameters of Newton's collision pipeline
        (shape_material_ke/kd/kf/ka, shape_gap) are replaced by this solver's contact arguments (contact_model,
        kappa, margin, ke, kd, kf, penalty_*);
        joint_velocity_limit bounds drive torques through the actuator envelope (actuator_saturation > 0) and is not
        a hard velocity limit; joint limits are springs (joint_limit_ke/kd), as in SolverFeatherstone.

        Args:
            model: a finalized ``newton.Model``.
            contact_model: ``"smoothed"`` (default, the paper's model), ``"hard"``, ``"soft"`` (implicit compliant
                contact) or ``"penalty"`` (the explicit penalty baseline: ``penalty_preset``).
            kappa: sigmoid stiffness [1/m] of the smoothed model, s(d) = 1 / (1 + exp(kappa d)).
                Default 1000 (s = 0.007 at 5 mm separation). Differentiable through ``solver.kappa_array``.
            margin: contacts with signed distance d <= margin take part [m]. Default 0.02 for "smoothed",
                0.0 for "hard" (ignored by "soft" and "penalty", which act in penetration only).
            iterations: the most Gauss-Seidel sweeps per step. Default 20.
            tolerance: a world's sweeps stop after the first sweep that changes none of its impulses by this much
                [N s] (``last_sweep_counts`` reports the sweeps taken). Default DEFAULT_TOLERANCE; 0 runs all
                ``iterations`` sweeps. With ``adjoint="unrolled"`` all sweeps run (what reverse mode replays).
            warm_start: start the sweeps of a step whose input state is the previous step's output state from that
                step's impulses instead of each contact's own local solve. Default False: it saves about one sweep in
                four on a standing ANYmal C, but converging from the previous solution also removes the Gauss-Seidel
                error that otherwise lifts a body resting on many redundant points (8 box corners, 16 cylinder rim
                points) back out of the ground after a hard landing; with it the velocity-level model's penetration is
                kept exactly (docs/contact_solver.md "Warm start and early exit"). Ignored with ``adjoint="unrolled"``.
            adjoint: how gradients pass the contact solve. ``"implicit"`` (default): at the converged impulses, by the
                implicit function theorem on the Gauss-Seidel fixed point with the active set and slip directions frozen
                (see contact_adjoint.py); independent of the sweep count, with less tape memory and a cheaper
                backward than unrolling (docs/benchmarks.md). ``"unrolled"``: Warp's reverse mode through every
                sweep, the exact derivative of what the sweeps compute (they contract, since each contact block is
                solved exactly). Both agree where the solve has converged (docs/contact_solver.md).
            stabilization: Baumgarte factor: the normal target velocity is -stabilization * min(d, 0) / dt.
                Default 0 (the plain velocity-level model of the paper: a landing's penetration is kept, not
                pushed out; a positive value removes it but, in smoothed mode, trades sinking for tangential creep
                since the scaled impulse then sits at s(d) < 1).
            ke, kd, kf: penalty stiffness [N/m], damping [N s/m] and friction viscosity [N s/m] of the soft model:
                f_n = ke max(-d, 0) - kd v_n (never pulling), |f_t| = min(kf |v_t|, mu f_n) against sliding (regularised
                Coulomb). Damping and friction are implicit in all contacts' end-of-step velocities (solved by the same
                Gauss-Seidel sweeps as a compliant Coulomb problem, kernels.soft_contact_terms); the spring is explicit.
                Defaults SOFT_CONTACT_KE/KD/KF, derived for ANYmal C in docs/contact_solver.md; kd and kf must be > 0.
            penalty_preset: the ``"penalty"`` model's (ke, kd, kf), a name in PENALTY_PRESETS: ``"dflex_default"``
                (default: 1e5, 1e3, 1e3) or ``"ahac_anymal"`` (2e3, 5e2, 1e2). Explicit and from the step's start
                state: f_n = ke max(-d, 0) - kd min(v_n, 0), f_t = -min(kf |v_t|, mu f_n) v_t / |v_t|
                (kernels.penalty_force).
            penalty_ke, penalty_kd, penalty_kf: overrides of the preset's ke [N/m], kd [N s/m], kf [N s/m] (None:
                the preset's). Ignored by the other models, as ke, kd, kf are by "penalty".
            penalty_substeps: symplectic Euler substeps of dt / penalty_substeps per ``step`` of the penalty model.
                Default None: ceil(dt / PENALTY_MAX_DT[penalty_preset]), the substeps ANYmal C stands on (1 ms for
                dflex_default, 2.5 ms for ahac_anymal); set it when penalty_ke/kd/kf or the robot change.
            actuator_saturation: DC-motor peak torque [N m] at zero speed; drive torques are bounded by
                saturation * (+-1 - v / joint_velocity_limit) and always by the model's joint_effort_limit.
                0 (default) disables the torque-speed envelope (ANYdrive: 120 with velocity limit 7.5 rad/s).
            friction_velocity: regularisation velocity v_s [rad/s or m/s] of joint friction: the friction torque is
                joint_friction * tanh(v / v_s), so a joint loaded below its friction creeps at v_s atanh(load /
                friction).
                Default 1e-3.
            threads: on the CPU, step (and, under a tape, differentiate) this many contiguous ranges of the
                articulations at once, one per thread (shards.py); bitwise the results of 1 (the default), except
                the gradient of a kappa that requires grad, summed per range first. Steps captured into one graph
                run the ranges one after the other; ``step_parts`` / ``step_part`` capture one graph per range
                (solver.step_graphs replays them at once).
            parallel_backward: with threads > 1, run the ranges' backward at once too (default True); False runs
                them one after the other on the calling thread, bitwise the same, leaving the other cores to work
                that overlaps the backward (SHAC's critic fit in its own process).
    """

    STEP_RECORDS = ("_last", "_last_dt", "_warm_state")
    """Attributes a step sets to describe itself (what ``last_*`` and the warm start read), not configuration: a
    replayed graph of steps sets them back to the values its eager run left (``bridge.taped_step``)."""

    def __init__(
        self,
        model: newton.Model,
        contact_model: str = "smoothed",
        kappa: float = 1000.0,
        margin: float | None = None,
        iterations: int = 20,
        adjoint: str = DEFAULT_ADJOINT,
        tolerance: float = DEFAULT_TOLERANCE,
        warm_start: bool = False,
        stabilization: float = 0.0,
        ke: float = SOFT_CONTACT_KE,
        kd: float = SOFT_CONTACT_KD,
        kf: float = SOFT_CONTACT_KF,
        actuator_saturation: float = 0.0,
        friction_velocity: float = 1.0e-3,
        penalty_preset: str = DEFAULT_PENALTY_PRESET,
        penalty_ke: float | None = None,
        penalty_kd: float | None = None,
        penalty_kf: float | None = None,
        penalty_substeps: int | None = None,
        threads: int = 1,
        parallel_backward: bool = True,
    ):
        check_parameters(locals())  # the arguments
        if margin is None:
            margin = 0.02 if contact_model == "smoothed" else 0.0
        check_model(model)
        super().__init__(model)
        self.contact_model = contact_model
        self.margin = float(margin)
        self.iterations = int(iterations)
        self.adjoint = adjoint
        self.tolerance = float(tolerance)
        self.warm_start = bool(warm_start)
        self.stabilization = float(stabilization)
        self.ke, self.kd, self.kf = float(ke), float(kd), float(kf)
        self.penalty_preset = penalty_preset
        self.penalty_ke, self.penalty_kd, self.penalty_kf = penalty_coefficients(
            penalty_preset, penalty_ke, penalty_kd, penalty_kf
        )
        self.penalty_substeps = penalty_substeps
        self._substates: list = []
        self.actuator_saturation = float(actuator_saturation)
        self.kappa_array = wp.array([kappa], dtype=float, device=model.device, requires_grad=True)
        self.friction_velocity = float(friction_velocity)
        if threads > 1 and not wp.get_device(model.device).is_cpu:
            raise ValueError(
                f"SolverMoreauGS: threads={threads} shards the step over CPU threads; on {model.device} use threads=1"
            )
        self.threads = int(threads)
        self.parallel_backward = bool(parallel_backward)
        self._runner = ShardRunner(self.threads) if self.threads > 1 else None
        self._set_layout(build_layout(model, self.friction_velocity))
        self._reuse: StepScratch | None = None
        self._free_taped: list[StepScratch] = []  # taped sets handed back by recycle_scratch
        self._sink: list | None = None  # taped_scratch()'s list
        self._given: list[StepScratch] = []  # taped_scratch()'s sets to use first
        self._part = None  # step_part()'s part
        self._part_steps = 0  # gradient-free steps taken inside step_part() so far
        self._part_sets: list[StepScratch] = []  # their scratch sets, one per step
        self._last: StepScratch | None = None
        self._last_dt = 1.0
        self._default_control = None
        self._zero_dofs = wp.zeros(max(model.joint_dof_count, 1), dtype=float, device=model.device)
        # hand adjoints write a missing dof (coordinate) gradient here
        self._dof_sink = wp.zeros_like(self._zero_dofs)
        self._coord_sink = wp.zeros(max(model.joint_coord_count, 1), dtype=float, device=model.device)
        self._adjoint_scratch = None
        self._new_warm_start()

    def _new_warm_start(self) -> None:
        """Impulses of the last step (the next step's start when it continues from that step's output state)."""
        device = self.model.device
        C = max(self.layout.candidate_count, 1)
        self._warm = wp.zeros(3 * C, dtype=float, device=device)
        self._sweeps = wp.zeros(max(self.layout.articulation_count, 1), dtype=int, device=device)
        self._warm_state = None  # the output state of the step that wrote _warm

    def _soft_terms(self, dt: float) -> wp.vec3:
        """(1 / (kd dt), 1 / (kf dt), ke / kd): the soft model's compliance and spring bias
        (kernels.soft_contact_terms)."""
        return wp.vec3(1.0 / (self.kd * dt), 1.0 / (self.kf * dt), self.ke / self.kd)

    @property
    def kappa(self) -> float:
        return float(self.kappa_array.numpy()[0])

    @kappa.setter
    def kappa(self, value: float):
        check_value("kappa", value, PARAMETER_RULES["kappa"], owner="SolverMoreauGS")
        self.kappa_array.fill_(float(value))

    def notify_model_changed(self, flags: int) -> None:
        """Re-check the model and rebuild the layout (model arrays may have been replaced or shapes/joints changed)."""
        check_model(self.model)
        self._set_layout(build_layout(self.model, self.friction_velocity))
        self._reuse = None
        self._part_sets = []
        self._free_taped = []
        self._adjoint_scratch = None
        self._new_warm_start()

    def _set_layout(self, layout) -> None:
        self.layout = layout
        self.hand_dynamics_adjoint = dynamics_adjoint_supported(
            layout, self.model.joint_type.numpy(), self.model.joint_parent.numpy()
        )
        """Whether articulation_dynamics' backward is the hand-written one (dynamics_adjoint.py), else Warp's
        generated one (BALL/D6 joints, or a model whose parameters require gradients)."""
        self.hand_kinematics_adjoint = self.hand_dynamics_adjoint
        """Whether forward kinematics' backward is the hand-written one (kinematics_adjoint.py), else Warp's adjoint of
        ``newton.eval_fk``; the same models as the dynamics'."""
        self.hand_position_adjoint = self.hand_dynamics_adjoint
        """Whether integrate_positions' backward is the hand-written one (position_adjoint.py), else Warp's generated
        one (which also maps the model's body_com and joint_X_c); the same models as the dynamics'."""
        spatial = partial(wp.zeros, max(self.model.body_count, 1), dtype=wp.spatial_vector, device=self.model.device)
        self._fk_scratch = (spatial(), spatial())
        self.hand_jacobian_adjoint = jacobian_adjoint_supported(layout.topo)
        """Whether contact_jacobians' backward is the hand-written one (jacobian_adjoint.py), else Warp's generated
        one (ellipsoid candidates)."""
        terrain = {}
        if layout.terrain is not None:
            terrain = {id(layout.terrain.data): (layout.terrain.data, struct_adjoint(layout.terrain.data))}
        self._struct_adjoints = {id(layout.topo): (layout.topo, struct_adjoint(layout.topo)), **terrain}
        count = min(self.threads, layout.articulation_count)
        if count > 1:
            self._shards = split_shards(layout, count, terrain)
        else:
            self._shards = [whole_shard(layout, self._struct_adjoints)]

    def _new_scratch_slots(self, requires_grad: bool) -> int:
        unrolled = requires_grad and self.adjoint == "unrolled" and self.contact_model != "penalty"
        return self.iterations + 1 if unrolled else 2

    def _new_scratch(self, requires_grad: bool) -> StepScratch:
        model = self.model
        slots = self._new_scratch_slots(requires_grad)
        return StepScratch(self.layout, model.joint_coord_count, model.body_count, slots, model.device, requires_grad)

    @contextlib.contextmanager
    def taped_scratch(self, sets=()):
        """Collect the scratch sets of the taped steps taken inside into the yielded list, for
        :meth:`recycle_scratch` once the tape that recorded them is done with. ``sets``: scratch sets (collected
        here before, their tape done with) the steps inside use first, in order, before any from the pool."""
        previous, self._sink = self._sink, []
        given, self._given = self._given, list(sets)
        try:
            yield self._sink
        finally:
            self._sink, self._given = previous, given

    def step_parts(self) -> tuple:
        """The parts a captured sequence of steps splits into (:meth:`step_part`), in launch order: ``"prepare"``,
        one shard index per thread, ``"kinematics"``; ``(None,)`` (the whole step) with one shard."""
        if len(self._shards) == 1:
            return (None,)
        return ("prepare", *range(len(self._shards)), "kinematics")

    @contextlib.contextmanager
    def step_part(self, part):
        """Steps taken inside do only ``part`` of their work (one of :meth:`step_parts`): ``"prepare"`` the memsets
        of their scratch sets, shard k steps 1-5 of its articulations, ``"kinematics"`` the forward kinematics.
        A sequence of steps captured once per part gives graphs that replay it: the prepare graph, then the shards'
        graphs at once (:meth:`run_shards`; shards share no data), then the kinematics graph. The scratch sets are
        taken as in a whole step, so each part's capture must see the same sets (``taped_scratch(sets)``); the k-th
        gradient-free step inside takes the k-th of sets kept for this (a whole step reuses one set, which the
        prepare graph, zeroing every step's accumulators first, cannot)."""
        if part not in self.step_parts():
            raise ValueError(f"SolverMoreauGS.step_part: {part!r} is not one of {self.step_parts()}")
        previous, self._part = self._part, part
        steps, self._part_steps = self._part_steps, 0
        try:
            yield
        finally:
            self._part, self._part_steps = previous, steps

    def run_shards(self, calls, backward: bool = False) -> None:
        """Run one callable per shard at once, one per thread (the first on the calling thread); a ``backward``'s
        one after the other unless ``parallel_backward``."""
        if len(calls) != len(self._shards):
            raise ValueError(f"SolverMoreauGS.run_shards: {len(calls)} calls for {len(self._shards)} shards")
        if self._runner is None or (backward and not self.parallel_backward):
            for call in calls:
                call()
        else:
            self._runner.run(calls)

    def recycle_scratch(self, scratch_sets) -> None:
        """Hand back scratch sets collected by :meth:`taped_scratch` whose tape has run its backward (or will never
        run it); later taped steps reuse them instead of allocating. A set still referenced by a live tape must not
        be handed back: its arrays would be overwritten before that tape's backward reads them."""
        self._free_taped.extend(sc for sc in scratch_sets if sc.layout is self.layout)

    def _scratch(self, requires_grad: bool) -> StepScratch:
        prepare = self._part in (None, "prepare")
        if requires_grad:
            if self._given:
                sc = self._given.pop(0)
            else:
                sc = self._free_taped.pop() if self._free_taped else None
            if sc is None or sc.layout is not self.layout or sc.sweep_slots != self._new_scratch_slots(True):
                sc = self._new_scratch(True)
            elif prepare:
                sc.prepare_reuse()
            if self._sink is not None:
                self._sink.append(sc)
            return sc
        if self._part is not None:
            k, self._part_steps = self._part_steps, self._part_steps + 1
            if k == len(self._part_sets):
                self._part_sets.append(self._new_scratch(False))
            if prepare:  # also a new set's: the memset must be in the prepare graph
                self._part_sets[k].zero_accumulators()
            return self._part_sets[k]
        if self._reuse is None:
            self._reuse = self._new_scratch(False)
        elif prepare:
            self._reuse.zero_accumulators()
        return self._reuse

    def step_memory_bytes(self, requires_grad: bool = True, dt: float | None = None) -> int:
        """Bytes of intermediate arrays one step of ``dt`` allocates (kept alive by a tape when requires_grad);
        dt None: one substep."""
        n = 1 if dt is None else self.substeps(dt)
        m = self.model
        state = 4 * (m.joint_coord_count + m.joint_dof_count) * (2 if requires_grad else 1)
        return n * self._new_scratch(requires_grad).nbytes() + (n - 1) * state

    def substeps(self, dt: float) -> int:
        """Substeps one ``step`` of ``dt`` takes: 1, or for the penalty model ``penalty_substeps`` (None: as many as
        keep each at most PENALTY_MAX_DT[penalty_preset], up to a 1e-9 relative rounding)."""
        if self.contact_model != "penalty":
            return 1
        if self.penalty_substeps is not None:
            return self.penalty_substeps
        return max(1, math.ceil(float(dt) / PENALTY_MAX_DT[self.penalty_preset] * (1.0 - 1.0e-9)))

    def step(self, state_in, state_out, control, contacts, dt: float, forward_kinematics: bool = True) -> None:
        """Advance state_in by dt into state_out (in ``substeps(dt)`` equal substeps). ``contacts`` is not needed
        (ground contact is found inside). ``forward_kinematics`` False leaves state_out's body_q / body_qd as they
        were: for an intermediate state whose bodies nobody reads (the next step starts from joint_q / joint_qd), it
        saves the forward kinematics and, under a tape, their adjoint."""
        n = self.substeps(dt)
        if n == 1:
            self._step(state_in, state_out, control, float(dt), forward_kinematics)
            return
        requires_grad = bool(
            state_in.joint_q.requires_grad or state_in.joint_qd.requires_grad or state_out.joint_q.requires_grad
        )
        h = float(dt) / n
        src = state_in
        for k in range(n - 1):
            mid = self._substate(k, requires_grad, state_in.body_f)
            self._step(src, mid, control, h, forward_kinematics=False)
            src = mid
        self._step(src, state_out, control, h, forward_kinematics)

    def _substate(self, k: int, requires_grad: bool, body_f) -> SimpleNamespace:
        """Joint state between substeps k and k + 1: fresh arrays under a tape, else reused ones."""
        m = self.model

        def state(grad):
            def zeros(n):
                return wp.zeros(max(n, 1), dtype=float, device=m.device, requires_grad=grad)

            return SimpleNamespace(joint_q=zeros(m.joint_coord_count), joint_qd=zeros(m.joint_dof_count))

        if requires_grad:
            out = state(True)
        else:
            while len(self._substates) <= k:
                self._substates.append(state(False))
            out = self._substates[k]
        out.body_f = body_f
        return out

    def _step(self, state_in, state_out, control, dt: float, forward_kinematics: bool = True) -> None:
        """One (sub)step of dt; ``forward_kinematics`` False leaves state_out's body_q/body_qd (a joint-only
        intermediate state)."""
        model = self.model
        dt = float(dt)
        if control is None:
            if self._default_control is None:
                self._default_control = model.control(clone_variables=False)
            control = self._default_control
        requires_grad = bool(
            state_in.joint_q.requires_grad or state_in.joint_qd.requires_grad or state_out.joint_q.requires_grad
        )
        sc = self._scratch(requires_grad)
        joint_f = control.joint_f if control.joint_f is not None else self._zero_dofs
        target_q = control.joint_target_q if control.joint_target_q is not None else model.joint_target_q
        target_qd = control.joint_target_qd if control.joint_target_qd is not None else model.joint_target_qd
        if target_q is None:
            target_q = self._zero_dofs
        if target_qd is None:
            target_qd = self._zero_dofs
        by_coord = int(
            target_q.shape[0] == model.joint_coord_count and model.joint_coord_count != model.joint_dof_count
        )
        body_f = state_in.body_f
        use_body_f = int(body_f is not None and body_f.shape[0] == model.body_count)
        if not use_body_f:
            body_f = sc.body_V  # placeholder, not read
        penalty = self.contact_model == "penalty"
        # (first, second) position update: Moreau's midpoint (dt/2, dt/2), or symplectic Euler (0, dt) for penalty
        first, second = (0.0, dt) if penalty else (0.5 * dt, 0.5 * dt)
        step = SimpleNamespace(
            state_in=state_in,
            state_out=state_out,
            joint_f=joint_f,
            target_q=target_q,
            target_qd=target_qd,
            by_coord=by_coord,
            body_f=body_f,
            use_body_f=use_body_f,
            dt=dt,
            first=first,
            second=second,
            requires_grad=requires_grad,
        )
        tape = _warp_context.runtime.tape
        shards, part = self._shards, self._part
        if isinstance(part, int):
            self._advance(shards[part], sc, step, tape, self.kappa_array)
        elif part is not None:
            pass  # "prepare" (the scratch set's memsets, above) or "kinematics" (below)
        elif len(shards) == 1 or capturing(model.device):
            for shard in shards:
                self._advance(shard, sc, step, tape, self.kappa_array)
        else:
            self._advance_sharded(sc, step, tape)
        if forward_kinematics and part in (None, "kinematics"):
            self._forward_kinematics(state_out, tape)
        self._last = sc
        self._last_dt = dt
        self._warm_state = state_out

    def _forward_kinematics(self, state, tape) -> None:
        """``newton.eval_fk`` on ``state``; under ``tape`` with the hand-written adjoint in place of Warp's when the
        model allows it and every array of the backward carries a gradient."""
        arrays = (state.joint_q, state.joint_qd, state.body_q, state.body_qd)
        if tape is None or not self.hand_kinematics_adjoint or not all(a.grad for a in arrays):
            newton.eval_fk(self.model, state.joint_q, state.joint_qd, state)
            return
        runtime = _warp_context.runtime
        runtime.tape = None  # the launch inside eval_fk is not recorded: its backward is KinematicsAdjoint
        try:
            newton.eval_fk(self.model, state.joint_q, state.joint_qd, state)
        finally:
            runtime.tape = tape
        lay = self.layout
        record(tape, KinematicsAdjoint(lay.topo, lay.articulation_count, state, self._fk_scratch, self.model.device))

    def _advance(self, shard: Shard, sc: StepScratch, step: SimpleNamespace, tape, kappa) -> None:
        """Steps 1-5 of a step (forward kinematics aside) for ``shard``'s articulations, its launches recorded on
        ``tape`` (the active wp.Tape, a ShardTape, or None) and the contact solve reading ``kappa``."""
        model, lay = self.model, self.layout
        topo, n_art = shard.topo, shard.articulations
        state_in, state_out, dt = step.state_in, step.state_out, step.dt
        penalty = self.contact_model == "penalty"
        residual, sweeps = sc.solve_residual, self._sweeps  # written per thread index: the range's views
        if n_art != lay.articulation_count:
            residual = residual[shard.art_offset : shard.art_offset + n_art]
            sweeps = sweeps[shard.art_offset : shard.art_offset + n_art]

        def run(kernel, dim, inputs, outputs, record_tape=True):
            launch(kernel, dim, inputs, outputs, model.device, shard.struct_adjoints, record_tape, tape)

        self._integrate_positions(run, shard, step, tape, state_in.joint_q, state_in.joint_qd, step.first, sc.q_mid)
        run(
            kernels.articulation_dynamics,
            dim=n_art,
            inputs=[
                topo,
                sc.q_mid,
                state_in.joint_qd,
                step.joint_f,
                step.target_q,
                step.target_qd,
                step.by_coord,
                step.body_f,
                step.use_body_f,
                self.actuator_saturation,
                dt,
            ],
            outputs=[sc.body_X, sc.body_V, sc.body_A, sc.body_F, sc.body_m, sc.body_h, sc.body_I, sc.S, sc.H, sc.hvec],
            record_tape=not self.hand_dynamics_adjoint,
        )
        if self.hand_dynamics_adjoint and step.requires_grad and tape is not None:  # in place of Warp's adjoint
            record(tape, DynamicsAdjoint(topo, n_art, sc, step, self.actuator_saturation, self._dof_sink, model.device))
        run(
            kernels.factor_and_solve,
            dim=n_art,
            inputs=[topo, sc.H, sc.hvec],
            outputs=[sc.L, sc.L_acc, sc.y, sc.y_acc, sc.acc, sc.x_acc],
            record_tape=False,
        )
        if step.requires_grad and tape is not None:  # its hand-written adjoint, in place of Warp's
            record(tape, FactorAdjoint(topo, n_art, sc, model.device))
        if shard.candidates > 0 and lay.terrain is not None:
            run(
                contact_frames,
                dim=shard.candidates,
                inputs=[topo, lay.terrain.data, sc.body_X, shard.cand_offset],
                outputs=list(sc.frames),
            )
        if shard.candidates > 0:
            run(
                kernels.contact_jacobians,
                dim=n_art,
                inputs=[topo, sc.body_X, sc.S, sc.L, state_in.joint_qd, sc.acc, dt, *sc.frames],
                outputs=[sc.dist, sc.cpoint, sc.J, sc.Z, sc.Z_acc, sc.G, sc.c_free],
                record_tape=not self.hand_jacobian_adjoint,
            )
            if self.hand_jacobian_adjoint and step.requires_grad and tape is not None:  # in place of Warp's adjoint
                record(tape, JacobianAdjoint(topo, n_art, sc, state_in.joint_qd, dt, self._dof_sink, model.device))
        if shard.candidates > 0 and penalty:
            self._penalty_impulses(run, shard, sc, state_in.joint_qd, dt, residual, sweeps)
        elif shard.candidates > 0:
            implicit = self.adjoint == "implicit"
            unrolled_tape = step.requires_grad and not implicit
            use_warm = implicit and self.warm_start and state_in is self._warm_state
            tolerance = self.tolerance if implicit else -1.0
            run(
                kernels.gauss_seidel_impulses,
                dim=n_art,
                inputs=[
                    topo,
                    CONTACT_MODELS[self.contact_model],
                    kappa,
                    self.margin,
                    self.stabilization,
                    self._soft_terms(dt),
                    self.iterations,
                    int(unrolled_tape),
                    tolerance,
                    int(use_warm),
                    dt,
                    sc.dist,
                    sc.G,
                    sc.c_free,
                ],
                outputs=[
                    sc.weight,
                    sc.p_hist,
                    sc.res,
                    sc.impulse,
                    sc.p_final,
                    residual,
                    self._warm,
                    sweeps,
                ],
                record_tape=not implicit,
            )
            if implicit and step.requires_grad and tape is not None:
                self._record_contact_adjoint(tape, shard, sc, dt, kappa)
        run(
            kernels.update_velocities,
            dim=n_art,
            inputs=[topo, state_in.joint_qd, sc.acc, sc.L, sc.Z, sc.impulse, dt],
            outputs=[sc.w, sc.dv, sc.dv_acc, state_out.joint_qd],
            record_tape=False,
        )
        if step.requires_grad and tape is not None:  # its hand-written adjoint, in place of Warp's
            qd_in, qd_out = state_in.joint_qd, state_out.joint_qd
            record(
                tape, VelocityAdjoint(topo, n_art, sc, qd_in, qd_out, dt, self._zero_dofs, self._dof_sink, model.device)
            )
        self._integrate_positions(run, shard, step, tape, sc.q_mid, state_out.joint_qd, step.second, state_out.joint_q)

    def _advance_sharded(self, sc: StepScratch, step: SimpleNamespace, tape) -> None:
        """:meth:`_advance` for every shard at once, one per thread (shards.py); under a tape one ShardedBackward
        is recorded for them all. A kappa that requires grad is read by each shard from a copy of its own, whose
        gradients that backward adds into kappa's."""
        shards, kappa = self._shards, self.kappa_array
        tapes = [ShardTape() for _ in shards] if tape is not None else [None] * len(shards)
        kappas, sums = [kappa] * len(shards), []
        if tape is not None and kappa.grad is not None:
            kappas = [wp.array(kappa.numpy(), dtype=float, device=kappa.device, requires_grad=True) for _ in shards]
            sums = [([k.grad for k in kappas], kappa.grad)]
        self._runner.run([partial(self._advance, sh, sc, step, t, k) for sh, t, k in zip(shards, tapes, kappas)])
        if tape is not None:
            backward = ShardedBackward(partial(self.run_shards, backward=True), tapes, self.model.device, sums)
            record(tape, backward)

    def _penalty_impulses(self, run, shard: Shard, sc: StepScratch, qd, dt: float, residual, sweeps) -> None:
        """The penalty model's contact impulses from the start-of-step velocity ``qd`` (kernels.penalty_impulses);
        recorded on an active tape like the other launches (its adjoint is Warp's)."""
        run(
            kernels.penalty_impulses,
            dim=shard.articulations,
            inputs=[
                shard.topo,
                sc.J,
                qd,
                sc.dist,
                wp.vec3(self.penalty_ke, self.penalty_kd, self.penalty_kf),
                dt,
            ],
            outputs=[sc.v_contact, sc.weight, sc.impulse, residual, sweeps],
        )

    def _integrate_positions(self, run, shard: Shard, step: SimpleNamespace, tape, q_in, qd, h, q_out) -> None:
        """q_out = q_in + h qdot(q_in, qd) for ``shard``'s joints; under ``tape`` with the hand-written adjoint of
        the 1-dof and free joints' launch (position_adjoint.py) in place of Warp's where the model allows it."""
        model = self.model
        hand = self.hand_position_adjoint
        run(
            kernels.integrate_positions,
            dim=shard.joints,
            inputs=[shard.topo, model.body_com, q_in, qd, h, shard.joint_offset],
            outputs=[q_out],
            record_tape=not hand,
        )
        if hand and step.requires_grad and tape is not None and q_out.grad is not None:
            sinks = (self._coord_sink, self._dof_sink)
            joints = (shard.topo, shard.joints, shard.joint_offset)
            record(tape, PositionAdjoint(*joints, model.body_com, q_in, qd, h, q_out, sinks, model.device))
        self._integrate_multi_dof(run, shard, q_in, qd, h, q_out)

    def _integrate_multi_dof(self, run, shard: Shard, q_in, qd, h, q_out) -> None:
        """The BALL / D6 part of a position update (a separate launch, so models without them pay nothing)."""
        if self.layout.has_multi_dof:
            run(
                integrate_multi_dof_positions,
                dim=shard.joints,
                inputs=[shard.topo, q_in, qd, h, shard.joint_offset],
                outputs=[q_out],
            )

    def _record_contact_adjoint(self, tape, shard: Shard, sc: StepScratch, dt: float, kappa) -> None:
        """Put the implicit adjoint of ``shard``'s contact solve (at ``kappa``) on ``tape`` in place of the sweeps."""
        lay = self.layout
        if self._adjoint_scratch is None:
            dev = self.model.device
            C = max(lay.candidate_count, 1)
            self._adjoint_scratch = (
                wp.zeros(max(lay.g_size, 1), dtype=float, device=dev),
                wp.zeros(3 * C, dtype=float, device=dev),
                wp.zeros(C, dtype=int, device=dev),
                wp.zeros(C, dtype=wp.vec3, device=dev),
            )
        M, y, kind, slip = self._adjoint_scratch
        kappa_grad = kappa.grad if kappa.grad is not None else y
        model_id = CONTACT_MODELS[self.contact_model]
        stabilization = self.stabilization
        device = self.model.device

        def backward():
            wp.launch(
                contact_adjoint,
                dim=shard.articulations,
                inputs=[
                    shard.topo,
                    model_id,
                    kappa,
                    stabilization,
                    self._soft_terms(dt),
                    dt,
                    sc.dist,
                    sc.G,
                    sc.c_free,
                    sc.weight,
                    sc.p_final,
                    sc.impulse.grad,
                    M,
                    y,
                    kind,
                    slip,
                    sc.dist.grad,
                    sc.G.grad,
                    sc.c_free.grad,
                    kappa_grad,
                    int(kappa.grad is not None),
                ],
                device=device,
                record_tape=False,
            )

        tape.record_func(backward, [sc.dist, sc.G, sc.c_free, sc.impulse])

    def last_solve_residual(self) -> wp.array:
        """Per articulation, the largest impulse change [N s] in the last Gauss-Seidel sweep of the last step
        (0 without contact candidates, in soft mode or with "penalty", which has no solve): how far the forward solve
        is from its fixed point."""
        if self._last is None:
            raise RuntimeError("SolverMoreauGS: no step has been taken yet")
        return self._last.solve_residual

    def last_sweep_counts(self) -> wp.array:
        """Per articulation, the Gauss-Seidel sweeps the last step took (at most ``iterations``; 0 without contact
        candidates)."""
        if self._last is None:
            raise RuntimeError("SolverMoreauGS: no step has been taken yet")
        return self._sweeps

    def update_contacts(self, contacts: newton.Contacts, state=None) -> None:
        """Write the last step's contact candidates and forces (impulse / dt) into ``contacts``.

        Every candidate point is reported (inactive ones with zero force): shape0 is the colliding
        shape, shape1 the ground plane or terrain shape, ``rigid_contact_force`` and ``contacts.force`` (if
        allocated) hold the force on shape0's body in world frame.
        """
        lay = self.layout
        if self._last is None or lay.candidate_count == 0:
            contacts.rigid_contact_count.zero_()
            return
        if contacts.rigid_contact_max < lay.candidate_count:
            raise ValueError(
                f"SolverMoreauGS.update_contacts: contacts hold {contacts.rigid_contact_max} rigid contacts, "
                f"the model has {lay.candidate_count} candidates"
            )
        body_q = state.body_q if state is not None else self._last.body_X
        spatial = contacts.force
        frame_n, _, frame_t1, frame_t2 = self._last.frames
        wp.launch(
            kernels.contact_report,
            dim=lay.candidate_count,
            inputs=[
                lay.topo,
                body_q,
                self.model.body_com,
                self._last.impulse,
                self._last.cpoint,
                frame_n,
                frame_t1,
                frame_t2,
                1.0 / self._last_dt,
            ],
            outputs=[
                contacts.rigid_contact_count,
                contacts.rigid_contact_shape0,
                contacts.rigid_contact_shape1,
                contacts.rigid_contact_point0,
                contacts.rigid_contact_point1,
                contacts.rigid_contact_normal,
                contacts.rigid_contact_force,
                spatial if spatial is not None else self._last.body_V,
                int(spatial is not None),
            ],
            device=self.model.device,
        )

    def last_contact_impulses(self) -> wp.array:
        """Impulses of the last step, 3 per candidate (normal, t1, t2) in N s."""
        if self._last is None:
            raise RuntimeError("SolverMoreauGS: no step has been taken yet")
        return self._last.impulse

    def last_contact_distances(self) -> wp.array:
        """Signed distances d of the candidates at the last step's midpoint configuration [m]."""
        if self._last is None:
            raise RuntimeError("SolverMoreauGS: no step has been taken yet")
        return self._last.dist


SolverMoreauGS.__doc__ = SolverMoreauGS.__doc__.replace("{unhonoured}", unhonoured_doc())
