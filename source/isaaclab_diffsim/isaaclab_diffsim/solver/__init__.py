"""Differentiable Moreau / Gauss-Seidel solver (Warp + Newton only; no torch, no isaaclab)."""

from .parameters import (
    ADJOINTS,
    DEFAULT_ADJOINT,
    DEFAULT_PENALTY_PRESET,
    DEFAULT_TOLERANCE,
    PARAMETER_RULES,
    PENALTY_MAX_DT,
    PENALTY_PRESETS,
    SOFT_CONTACT_KD,
    SOFT_CONTACT_KE,
    SOFT_CONTACT_KF,
    check_parameters,
)
from .solver_moreau_gs import SolverMoreauGS
from .type_ids import CONTACT_MODELS

__all__ = [
    "ADJOINTS",
    "CONTACT_MODELS",
    "DEFAULT_ADJOINT",
    "DEFAULT_PENALTY_PRESET",
    "DEFAULT_TOLERANCE",
    "PARAMETER_RULES",
    "PENALTY_MAX_DT",
    "PENALTY_PRESETS",
    "SOFT_CONTACT_KD",
    "SOFT_CONTACT_KE",
    "SOFT_CONTACT_KF",
    "SolverMoreauGS",
    "check_parameters",
]
