"""Isaac Lab's manager-based rough ANYmal C velocity task on the DiffSim backend and the local ANYmal C asset."""

from __future__ import annotations

from isaaclab.managers import SceneEntityCfg
from isaaclab.utils import configclass, replace
from isaaclab_tasks.contrib.velocity.config.anymal_c.rough_env_cfg import AnymalCRoughEnvCfg
from isaaclab_tasks.core.velocity.velocity_env_cfg import DoneTerm, RoughPhysicsCfg

from isaaclab_diffsim.assets.anymal_c_cfg import ANYMAL_C_DIFFSIM_CFG, ANYMAL_C_FOOT_COLLIDERS_EXPR
from isaaclab_diffsim.physics import DiffSimSolverCfg, checked_mjwarp
from isaaclab_diffsim.physics.presets import DiffSimPhysicsCfg

from ...terminations import base_height_over_terrain_below


@configclass
class AnymalCRoughDiffSimEnvCfg(AnymalCRoughEnvCfg):
    """Isaac Lab's rough ANYmal C MDP (its terrain generator and curriculum, the height-scanner observation,
    rewards, terminations, commands, events) unchanged, except as in the flat task
    (:class:`~isaaclab_diffsim.tasks.locomotion.velocity.config.anymal_c.flat_env_cfg.AnymalCFlatDiffSimEnvCfg`):
    the DiffSim physics presets, the local ANYmal C asset, foot-sphere colliders, no sky light and no MDL terrain
    material (both live on the asset server). Falls end an episode by a ``base_too_low`` termination measured from
    the terrain under the base (the height scanner's hits: :func:`base_height_over_terrain_below`, 0.3 m), since
    with foot colliders only Isaac Lab's base-contact termination cannot fire. The generated terrain mesh is a
    static triangle-mesh collider of the solver (docs/contact_solver.md "Terrain contact")."""

    def __post_init__(self):
        super().__post_init__()
        self.sim.physics = DiffSimPhysicsCfg()
        # the peer: Isaac Lab's rough settings, buffers sized for the scene, an overflow raising
        self.sim.physics.newton_mjwarp = checked_mjwarp(RoughPhysicsCfg().newton_mjwarp)
        for preset in vars(self.sim.physics).values():
            if isinstance(getattr(preset, "solver_cfg", None), DiffSimSolverCfg):
                preset.solver_cfg.collider_shapes_expr = ANYMAL_C_FOOT_COLLIDERS_EXPR
        self.scene.num_envs = 64
        self.scene.robot = replace(ANYMAL_C_DIFFSIM_CFG, prim_path="{ENV_REGEX_NS}/Robot")
        self.scene.sky_light = None
        self.scene.terrain.visual_material = None
        self.terminations.base_too_low = DoneTerm(
            func=base_height_over_terrain_below,
            params={"minimum_height": 0.3, "sensor_cfg": SceneEntityCfg("height_scanner")},
        )


@configclass
class AnymalCRoughDiffSimEnvCfg_PLAY(AnymalCRoughDiffSimEnvCfg):
    """Evaluation variant: 16 envs on a 5 x 5 terrain grid, robots spread over all levels, no observation noise, no
    pushes (Isaac Lab's ``play_mode``)."""

    def __post_init__(self):
        super().__post_init__()
        self.play_mode()
        self.scene.num_envs = 16
        self.observations.policy.enable_corruption = False
