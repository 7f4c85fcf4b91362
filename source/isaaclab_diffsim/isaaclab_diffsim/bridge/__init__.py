"""Torch bridge to the differentiable solver (warp, newton, torch; no isaaclab)."""

from .physics_step import PhysicsStepFunction, live_records, tape_nbytes
from .simulator import DiffSimulator, StepOutput

__all__ = ["DiffSimulator", "PhysicsStepFunction", "StepOutput", "live_records", "tape_nbytes"]
