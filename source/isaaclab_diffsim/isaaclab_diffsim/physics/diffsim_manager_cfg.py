"""Configuration of the differentiable Moreau / Gauss-Seidel solver for Isaac Lab's Newton backend."""

from __future__ import annotations

import inspect
from typing import TYPE_CHECKING

from isaaclab.utils import configclass
from isaaclab_newton.physics.newton_manager_cfg import NewtonSolverCfg

from ..solver import SolverMoreauGS, check_parameters
from ..utils.validation import boolean, check, optional, string

if TYPE_CHECKING:
    from isaaclab_newton.physics import NewtonManager

_SOLVER_ARGS = inspect.signature(SolverMoreauGS.__init__).parameters
_DEFAULT = {name: p.default for name, p in _SOLVER_ARGS.items() if p.default is not inspect.Parameter.empty}
"""SolverMoreauGS's keyword defaults: the solver fields below default to them."""

_MANAGER_RULES = {
    "collider_shapes_expr": optional(string),
    "disable_unsupported_colliders": boolean,
    "use_cpu_graph": boolean,
}


@configclass
class DiffSimSolverCfg(NewtonSolverCfg):
    """:class:`~isaaclab_diffsim.solver.SolverMoreauGS`: Moreau midpoint stepping, projected Gauss-Seidel contact.

    Isaac Lab tasks use it as ``NewtonCfg(solver_cfg=DiffSimSolverCfg(...))``, the differentiable env embeds it as
    ``solver_cfg``; both build the solver from the fields named like its arguments (:meth:`solver_kwargs`; see the
    solver for their meaning, defaults and ranges). The other fields are the manager's. The solver finds
    ground-plane contacts itself (spheres, capsules and boxes on bodies against infinite planes); Newton's collision
    pipeline is not used.
    """

    class_type: type[NewtonManager] | str = "{DIR}.diffsim_manager:NewtonDiffSimManager"
    """Manager class for this solver."""

    solver_type: str = "diffsim"
    """Solver type metadata (logging only)."""

    contact_model: str = _DEFAULT["contact_model"]
    """``"smoothed"`` (sigmoid-scaled impulses), ``"hard"`` (plain PGS), ``"soft"`` (implicit compliant contact) or
    ``"penalty"`` (explicit penalty forces, symplectic Euler: the authors' soft baseline)."""

    kappa: float = _DEFAULT["kappa"]
    """Sigmoid stiffness of the smoothed model [1/m]: s(d) = 1 / (1 + exp(kappa d))."""

    margin: float | None = _DEFAULT["margin"]
    """Contacts with signed distance d <= margin take part [m]. None: 0.02 for smoothed, 0 otherwise."""

    iterations: int = _DEFAULT["iterations"]
    """Most Gauss-Seidel sweeps per step (a world stops earlier once a sweep changes no impulse by ``tolerance``)."""

    tolerance: float = _DEFAULT["tolerance"]
    """Early exit of the sweeps [N s] (0: always ``iterations`` sweeps). Ignored by the unrolled adjoint."""

    warm_start: bool = _DEFAULT["warm_start"]
    """Start each step's sweeps from the previous step's impulses (when the input state is its output).
    Ignored by the unrolled adjoint."""

    adjoint: str = _DEFAULT["adjoint"]
    """Gradient of the contact solve: ``"implicit"`` (at the converged impulses) or ``"unrolled"`` (reverse mode
    through every sweep)."""

    stabilization: float = _DEFAULT["stabilization"]
    """Baumgarte factor in [0, 1] pushing penetration out (0: plain velocity-level model)."""

    ke: float = _DEFAULT["ke"]
    """Soft model: penalty stiffness [N/m]."""

    kd: float = _DEFAULT["kd"]
    """Soft model: penalty damping [N s/m] (> 0)."""

    kf: float = _DEFAULT["kf"]
    """Soft model: friction viscosity [N s/m] (> 0; regularised Coulomb, capped by mu f_n)."""

    penalty_preset: str = _DEFAULT["penalty_preset"]
    """Penalty model: the named (ke, kd, kf) of ``PENALTY_PRESETS``, ``"dflex_default"`` or ``"ahac_anymal"``."""

    penalty_ke: float | None = _DEFAULT["penalty_ke"]
    """Penalty model: stiffness [N/m] in place of the preset's (None: the preset's)."""

    penalty_kd: float | None = _DEFAULT["penalty_kd"]
    """Penalty model: damping while approaching [N s/m] in place of the preset's (None: the preset's)."""

    penalty_kf: float | None = _DEFAULT["penalty_kf"]
    """Penalty model: friction viscosity [N s/m] in place of the preset's (None: the preset's)."""

    penalty_substeps: int | None = _DEFAULT["penalty_substeps"]
    """Penalty model: explicit substeps per solver step (None: each at most ``PENALTY_MAX_DT[penalty_preset]``)."""

    actuator_saturation: float = _DEFAULT["actuator_saturation"]
    """DC-motor peak torque [N m] at zero speed (torque-speed envelope with the joints' velocity limits);
    0 disables it. Drive torques are always bounded by the model's joint effort limits."""

    friction_velocity: float = _DEFAULT["friction_velocity"]
    """Regularisation velocity of joint friction [rad/s or m/s]: friction torque joint_friction * tanh(v / v_s)."""

    threads: int = _DEFAULT["threads"]
    """CPU threads a step's articulations are split over (each range stepped and differentiated on its own thread;
    bitwise the results of 1). Only for the CPU."""

    parallel_backward: bool = _DEFAULT["parallel_backward"]
    """With threads > 1, differentiate the ranges at once too; False: one after the other (bitwise the same), leaving
    the other cores to work that overlaps the backward, as SHAC's critic fit in its own process."""

    collider_shapes_expr: str | None = None
    """Regex (full match) on shape labels (USD prim paths); colliding shapes that do not match stop colliding
    before the model is finalized, e.g. ``".*_FOOT/sphere"`` for the paper's one point per foot. None: all."""

    disable_unsupported_colliders: bool = False
    """Clear the collide flag of shapes the solver cannot collide (meshes, cylinders, static non-planes,
    finite planes) before the model is finalized (logged). False: the solver raises on them."""

    use_cpu_graph: bool = True
    """On the CPU, replay the physics step from a captured Warp graph (one launch instead of one per kernel; bitwise
    the same results). Declined for models that require gradients. CUDA graphs are ``NewtonCfg.use_cuda_graph``."""

    def __post_init__(self):
        self.validate_values()

    def validate_values(self) -> None:
        """Raise ValueError naming the first invalid field (also run by the manager, after CLI overrides)."""
        check_parameters(self, owner="DiffSimSolverCfg")
        check(self, _MANAGER_RULES, owner="DiffSimSolverCfg")

    def solver_kwargs(self) -> dict:
        """The fields that are :class:`SolverMoreauGS` arguments (validated first)."""
        self.validate_values()
        return {name: getattr(self, name) for name in _SOLVER_ARGS if name not in ("self", "model")}
