"""Physics presets for tasks: ``physics=diffsim_smoothed`` (default), ``diffsim_hard``, ``diffsim_soft``,
and Isaac Lab's ``newton_mjwarp`` (flat ANYmal C settings, contact buffers sized for the scene) for
side-by-side comparisons.

A task sets ``sim: SimulationCfg = SimulationCfg(physics=DiffSimPhysicsCfg())``; solver fields are then
hydra overrides, e.g. ``env.sim.physics.solver_cfg.kappa=500``.
"""

from __future__ import annotations

from isaaclab.utils import configclass
from isaaclab_newton.physics import NewtonCfg, NewtonShapeCfg
from isaaclab_tasks.utils import PresetCfg

from .diffsim_manager_cfg import DiffSimSolverCfg
from .mjwarp_manager_cfg import CheckedMJWarpSolverCfg


def diffsim_physics(contact_model: str = "smoothed", **solver_kwargs) -> NewtonCfg:
    """``NewtonCfg`` running SolverMoreauGS with ``contact_model`` (one substep, no collision pipeline)."""
    return NewtonCfg(solver_cfg=DiffSimSolverCfg(contact_model=contact_model, **solver_kwargs), num_substeps=1)


@configclass
class DiffSimPhysicsCfg(PresetCfg):
    """Physics backend presets; ``default`` is the smoothed contact model."""

    diffsim_smoothed = diffsim_physics("smoothed")
    diffsim_hard = diffsim_physics("hard")
    diffsim_soft = diffsim_physics("soft")
    newton_mjwarp = NewtonCfg(
        solver_cfg=CheckedMJWarpSolverCfg(  # contact buffers sized for the scene; an overflow raises
            cone="elliptic",
            impratio=100.0,
            integrator="implicitfast",
            use_mujoco_contacts=False,
        ),
        num_substeps=2,
        default_shape_cfg=NewtonShapeCfg(margin=0.0, ke=160000.0, kd=1100.0),
    )
    default = diffsim_smoothed
