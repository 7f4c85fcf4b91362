"""Configuration of the differentiable Moreau / Gauss-Seidel solver for Isaac Lab's Newton backend."""

from __future__ import annotations

import inspect
import math
from typing import TYPE_CHECKING

from isaaclab.utils import configclass
from isaaclab_newton.physics.newton_manager_cfg import NewtonSolverCfg

from ..solver import (
    ADJOINTS,
    CONTACT_MODELS,
    DEFAULT_ADJOINT,
    DEFAULT_TOLERANCE,
    SOFT_CONTACT_KD,
    SOFT_CONTACT_KE,
    SOFT_CONTACT_KF,
    SolverMoreauGS,
)

if TYPE_CHECKING:
    from isaaclab_newton.physics import NewtonManager


@configclass
class DiffSimSolverCfg(NewtonSolverCfg):
    """:class:`~isaaclab_diffsim.solver.SolverMoreauGS`: Moreau midpoint stepping, projected Gauss-Seidel contact.

    The one declaration of the solver's parameters: Isaac Lab tasks use it as
    ``NewtonCfg(solver_cfg=DiffSimSolverCfg(...))``, the differentiable env embeds it as ``solver_cfg``, and both
    build the solver with :meth:`solver_kwargs`. The solver finds ground-plane contacts itself
    (spheres, capsules and boxes on bodies against infinite planes); Newton's collision pipeline is not used.
    """

    class_type: type[NewtonManager] | str = "{DIR}.diffsim_manager:NewtonDiffSimManager"
    """Manager class for this solver."""

    solver_type: str = "diffsim"
    """Solver type metadata (logging only)."""

    contact_model: str = "smoothed"
    """One of ``solver.CONTACT_MODELS``: ``"smoothed"`` (sigmoid-scaled impulses, the default), ``"hard"`` (plain PGS) or ``"soft"`` (penalty)."""

    kappa: float = 1000.0
    """Sigmoid stiffness of the smoothed model [1/m]: s(d) = 1 / (1 + exp(kappa d))."""

    margin: float | None = None
    """Contacts with signed distance d <= margin take part [m]. None: 0.02 for smoothed, 0 otherwise."""

    iterations: int = 20
    """Most Gauss-Seidel sweeps per step (a world stops earlier once a sweep changes no impulse by ``tolerance``)."""

    tolerance: float = DEFAULT_TOLERANCE
    """Early exit of the sweeps [N s]: the largest impulse change of a sweep below it ends the world's solve
    (0: always ``iterations`` sweeps). Ignored by the unrolled adjoint, which replays every sweep."""

    warm_start: bool = False
    """Start each step's sweeps from the previous step's impulses (when the input state is its output).
    Ignored by the unrolled adjoint."""

    adjoint: str = DEFAULT_ADJOINT
    """Gradient of the contact solve, one of ``solver.ADJOINTS``: ``"unrolled"`` (reverse mode through every sweep) or ``"implicit"`` (at the
    converged impulses, independent of the sweep count); see ``SolverMoreauGS``."""

    stabilization: float = 0.0
    """Baumgarte factor in [0, 1] pushing penetration out (0: plain velocity-level model)."""

    ke: float = SOFT_CONTACT_KE
    """Soft model: penalty stiffness [N/m]."""

    kd: float = SOFT_CONTACT_KD
    """Soft model: penalty damping [N s/m] (> 0)."""

    kf: float = SOFT_CONTACT_KF
    """Soft model: friction viscosity [N s/m] (> 0; regularised Coulomb, capped by mu f_n)."""

    actuator_saturation: float = 0.0
    """DC-motor peak torque [N m] at zero speed (torque-speed envelope with the joints' velocity limits);
    0 disables it. Drive torques are always bounded by the model's joint effort limits."""

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
        """Raise ValueError on an invalid field (also run by the manager, after CLI overrides)."""

        def finite(x) -> bool:
            return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)

        checks = {
            "contact_model": self.contact_model in CONTACT_MODELS,
            "kappa": finite(self.kappa) and self.kappa > 0.0,
            "margin": self.margin is None or (finite(self.margin) and self.margin >= 0.0),
            "iterations": isinstance(self.iterations, int) and not isinstance(self.iterations, bool)
            and self.iterations >= 1,
            "tolerance": finite(self.tolerance) and self.tolerance >= 0.0,
            "warm_start": isinstance(self.warm_start, bool),
            "adjoint": self.adjoint in ADJOINTS,
            "stabilization": finite(self.stabilization) and 0.0 <= self.stabilization <= 1.0,
            "ke": finite(self.ke) and self.ke >= 0.0,
            "kd": finite(self.kd) and self.kd > 0.0,
            "kf": finite(self.kf) and self.kf > 0.0,
            "actuator_saturation": finite(self.actuator_saturation) and self.actuator_saturation >= 0.0,
            "collider_shapes_expr": self.collider_shapes_expr is None or isinstance(self.collider_shapes_expr, str),
            "use_cpu_graph": isinstance(self.use_cpu_graph, bool),
        }
        bad = [f"{name}={getattr(self, name)!r}" for name, ok in checks.items() if not ok]
        if bad:
            raise ValueError(f"DiffSimSolverCfg: invalid {', '.join(bad)}")

    def solver_kwargs(self) -> dict:
        """The fields that are :class:`SolverMoreauGS` arguments (validated first)."""
        self.validate_values()
        accepted = set(inspect.signature(SolverMoreauGS.__init__).parameters) - {"self", "model"}
        return {name: getattr(self, name) for name in accepted if hasattr(self, name)}
