"""Isaac Lab's MuJoCo Warp solver config, run by :class:`NewtonCheckedMJWarpManager`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from isaaclab.utils import configclass
from isaaclab_newton.physics import MJWarpSolverCfg

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
