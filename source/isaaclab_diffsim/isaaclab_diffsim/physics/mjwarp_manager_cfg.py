"""Isaac Lab's MuJoCo Warp solver config, run by :class:`NewtonCheckedMJWarpManager`."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from isaaclab.utils import configclass
from isaaclab_newton.physics import MJWarpSolverCfg, NewtonCfg

if TYPE_CHECKING:
    from isaaclab_newton.physics import NewtonManager


@configclass
class CheckedMJWarpSolverCfg(MJWarpSolverCfg):
    """:class:`MJWarpSolverCfg` whose manager raises when contacts overflow MJWarp's buffer.

    ``nconmax`` / ``njmax`` None (the defaults here) size MJWarp's buffers from Newton's contact budget for the
    scene (every contact its collision pipeline can produce, per world), so none is dropped.
    """

    class_type: type[NewtonManager] | str = "{DIR}.mjwarp_manager:NewtonCheckedMJWarpManager"
    """Manager class for this solver."""

    nconmax: int | None = None
    """Contact points per environment (world); None: Newton's contact budget for the scene."""

    njmax: int | None = None
    """Constraint rows per environment (world); None: sized by Newton for ``nconmax`` contacts."""


def checked_mjwarp(physics: NewtonCfg) -> NewtonCfg:
    """A copy of a task's ``newton_mjwarp`` physics cfg (Isaac Lab's settings for its robot or terrain) whose solver
    is a :class:`CheckedMJWarpSolverCfg` with the same settings, its buffers sized for the scene (``nconmax`` /
    ``njmax`` None) and its manager raising on an overflow."""
    if not isinstance(physics.solver_cfg, MJWarpSolverCfg):
        raise TypeError(f"expected a MuJoCo Warp solver cfg, got {type(physics.solver_cfg).__name__}")
    keep = {f.name for f in dataclasses.fields(physics.solver_cfg)} - {"class_type", "nconmax", "njmax"}
    fields = {name: getattr(physics.solver_cfg, name) for name in keep}
    outer = {f.name: getattr(physics, f.name) for f in dataclasses.fields(physics)}
    outer = {k: v for k, v in outer.items() if k not in ("class_type", "solver_cfg")}
    return type(physics)(solver_cfg=CheckedMJWarpSolverCfg(**fields), **outer)
