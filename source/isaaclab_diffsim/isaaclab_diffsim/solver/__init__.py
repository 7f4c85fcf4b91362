"""Differentiable Moreau / Gauss-Seidel solver (Warp + Newton only; no torch, no isaaclab)."""

from .solver_moreau_gs import CONTACT_MODELS, SolverMoreauGS

__all__ = ["CONTACT_MODELS", "SolverMoreauGS"]
