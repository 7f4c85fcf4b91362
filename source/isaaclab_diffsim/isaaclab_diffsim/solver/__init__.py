"""Differentiable Moreau / Gauss-Seidel solver (Warp + Newton only; no torch, no isaaclab)."""

from .solver_moreau_gs import ADJOINTS, CONTACT_MODELS, DEFAULT_ADJOINT, SolverMoreauGS

__all__ = ["ADJOINTS", "CONTACT_MODELS", "DEFAULT_ADJOINT", "SolverMoreauGS"]
