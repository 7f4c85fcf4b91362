"""Isaac Lab side of the backend: a NewtonManager subclass running SolverMoreauGS, its config, presets.

Select it with ``NewtonCfg(solver_cfg=DiffSimSolverCfg(...))``; isaaclab_newton's assets, sensors,
events and cloner are reused unchanged. Task presets (``physics=diffsim_smoothed|diffsim_hard|diffsim_soft``)
are in :mod:`isaaclab_diffsim.physics.presets` (it imports isaaclab_tasks); ``newton_mjwarp`` there runs
:class:`CheckedMJWarpSolverCfg`, which raises when MJWarp would drop contacts. The manager is imported on
first use, as Isaac Lab resolves it from ``DiffSimSolverCfg.class_type``.
"""

from .diffsim_manager_cfg import DiffSimSolverCfg
from .mjwarp_manager_cfg import CheckedMJWarpSolverCfg, checked_mjwarp

__all__ = ["CheckedMJWarpSolverCfg", "DiffSimSolverCfg", "NewtonDiffSimManager", "checked_mjwarp"]


def __getattr__(name: str):
    if name == "NewtonDiffSimManager":
        from .diffsim_manager import NewtonDiffSimManager

        return NewtonDiffSimManager
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
