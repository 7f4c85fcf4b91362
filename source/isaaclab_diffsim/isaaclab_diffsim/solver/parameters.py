"""What each :class:`SolverMoreauGS` argument accepts (checked by the solver and by configs holding them), and
the named constants among its defaults."""

from ..utils.validation import (
    boolean,
    check,
    in_range,
    integer,
    non_negative,
    one_of,
    optional,
    positive,
)
from .type_ids import CONTACT_MODELS

ADJOINTS = ("implicit", "unrolled")
DEFAULT_ADJOINT = "implicit"
# Gauss-Seidel stops after a sweep that changes no impulse by this much [N s] (docs/contact_solver.md "Warm start
# and early exit"): 1e-6 N s is about ten float32 ulps of a standing ANYmal C foot's impulse per 5 ms step
DEFAULT_TOLERANCE = 1.0e-6
# Soft (penalty) contact for a 52 kg quadruped (ANYmal C), docs/contact_solver.md "Soft contact":
# ke: half the weight on one foot (trot) sinks it 1 cm; kd: critical damping of a quarter of the mass on ke;
# kf: creep below 2 mm/s under the 55 N tangential load of a standing foot.
SOFT_CONTACT_KE = 2.5e4
SOFT_CONTACT_KD = 1.1e3
SOFT_CONTACT_KF = 3.0e4
# Explicit penalty contact, the authors' soft baseline (docs/contact_solver.md "Penalty contact"): named settings of
# (ke [N/m], kd [N s/m], kf [N s/m]); mu is the shapes' material, not a solver parameter.
PENALTY_PRESETS = {
    "dflex_default": (1.0e5, 1.0e3, 1.0e3),  # the authors' fork's code defaults (with mu 0.5)
    "ahac_anymal": (2.0e3, 5.0e2, 1.0e2),  # AHAC's dFlex ANYmal (with mu 0.75)
}
DEFAULT_PENALTY_PRESET = "dflex_default"
PENALTY_MAX_DT = {"dflex_default": 1.0e-3, "ahac_anymal": 2.5e-3}
"""The longest explicit step [s] on which ANYmal C stands with each preset (docs/contact_solver.md "Penalty
contact": its feet chatter off the ground beyond): ``penalty_substeps=None`` splits a solver step into
ceil(dt / PENALTY_MAX_DT[preset]) symplectic Euler substeps."""

PARAMETER_RULES = {
    "contact_model": one_of(*CONTACT_MODELS),
    "kappa": positive,
    "margin": optional(non_negative),
    "iterations": integer(1),
    "adjoint": one_of(*ADJOINTS),
    "tolerance": non_negative,
    "warm_start": boolean,
    "stabilization": in_range(0.0, 1.0),
    "ke": non_negative,
    "kd": positive,
    "kf": positive,
    "penalty_preset": one_of(*PENALTY_PRESETS),
    "penalty_ke": optional(non_negative),
    "penalty_kd": optional(non_negative),
    "penalty_kf": optional(non_negative),
    "penalty_substeps": optional(integer(1)),
    "actuator_saturation": non_negative,
    "friction_velocity": positive,
    "threads": integer(1),
    "parallel_backward": boolean,
}
"""One rule per ``SolverMoreauGS.__init__`` argument (besides the model)."""


def check_parameters(values, owner: str = "SolverMoreauGS") -> None:
    """Raise ValueError naming ``owner``, the first invalid argument, its value and what it must be; ``values`` is a
    mapping or an object with the arguments as attributes (a config)."""
    check(values, PARAMETER_RULES, owner=owner)


def penalty_coefficients(preset: str, ke: float | None, kd: float | None, kf: float | None) -> tuple[float, ...]:
    """(ke, kd, kf) of the penalty model: ``PENALTY_PRESETS[preset]``, each replaced by its override unless None."""
    base = PENALTY_PRESETS[preset]
    return tuple(float(b if v is None else v) for b, v in zip(base, (ke, kd, kf)))
