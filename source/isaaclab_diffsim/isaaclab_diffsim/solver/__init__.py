"""Differentiable Moreau / Gauss-Seidel solver (Warp + Newton only; no torch, no isaaclab)."""

from .solver_moreau_gs import (
    ADJOINTS,
    CONTACT_MODELS,
    DEFAULT_ADJOINT,
    DEFAULT_TOLERANCE,
    SOFT_CONTACT_KD,
    SOFT_CONTACT_KE,
    SOFT_CONTACT_KF,
    SolverMoreauGS,
)

__all__ = [
    "ADJOINTS",
    "CONTACT_MODELS",
    "DEFAULT_ADJOINT",
    "DEFAULT_TOLERANCE",
    "SOFT_CONTACT_KD",
    "SOFT_CONTACT_KE",
    "SOFT_CONTACT_KF",
    "SolverMoreauGS",
]
