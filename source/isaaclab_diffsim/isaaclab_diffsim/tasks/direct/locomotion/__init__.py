"""Differentiable locomotion tasks (direct workflow), laid out as Isaac Lab's ``locomotion`` tasks."""
