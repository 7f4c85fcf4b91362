"""What the manager-based flat velocity tasks (ANYmal C, ANYmal B, Go2) change in Isaac Lab's flat env cfgs to run on
the DiffSim backend with a locally converted robot."""

from __future__ import annotations

from isaaclab.assets.articulation import ArticulationCfg
from isaaclab.utils import replace
from isaaclab_tasks.core.velocity import mdp
from isaaclab_tasks.core.velocity.velocity_env_cfg import DoneTerm

from isaaclab_diffsim.assets.ground_plane import ground_plane_usd_path
from isaaclab_diffsim.physics import DiffSimSolverCfg, checked_mjwarp
from isaaclab_diffsim.physics.presets import DiffSimPhysicsCfg


def use_diffsim_flat(
    env_cfg,
    robot: ArticulationCfg,
    colliders_expr: str,
    min_base_height: float,
    actuator_saturation: float = 0.0,
    keep_peer: bool = True,
) -> None:
    """On a flat Isaac Lab velocity env cfg (after its ``__post_init__``):

    - physics: :class:`DiffSimPhysicsCfg` presets (``physics=diffsim_smoothed`` default, ``diffsim_hard``,
      ``diffsim_soft``), colliding only the shapes ``colliders_expr`` names (the foot spheres); ``newton_mjwarp``
      keeps every collider of the asset, with the env cfg's own settings (``keep_peer``, Isaac Lab's for this robot)
      or :class:`DiffSimPhysicsCfg`'s, its contact buffers sized for the scene and an overflow raising
      (:func:`~isaaclab_diffsim.physics.checked_mjwarp`);
      ``actuator_saturation`` [N m] (if given) is the DiffSim solvers' DC-motor envelope of implicit drives;
    - the robot ``robot`` at ``{ENV_REGEX_NS}/Robot``; 64 envs;
    - a local ground-plane USD (friction 1.0 like the terrain material) instead of the grid plane, and no sky light
      or MDL ground material (all three live on the asset server);
    - a ``base_too_low`` termination at ``min_base_height`` [m]: with foot colliders only, base contact cannot fire.
    """
    peer = env_cfg.sim.physics.newton_mjwarp if keep_peer else None
    env_cfg.sim.physics = DiffSimPhysicsCfg()
    if keep_peer:
        env_cfg.sim.physics.newton_mjwarp = checked_mjwarp(peer)
    for preset in vars(env_cfg.sim.physics).values():  # includes ``default``, a copy of diffsim_smoothed
        if isinstance(getattr(preset, "solver_cfg", None), DiffSimSolverCfg):
            preset.solver_cfg.collider_shapes_expr = colliders_expr
            if actuator_saturation:
                preset.solver_cfg.actuator_saturation = actuator_saturation
    env_cfg.scene.num_envs = 64
    env_cfg.scene.robot = replace(robot, prim_path="{ENV_REGEX_NS}/Robot")
    env_cfg.scene.sky_light = None
    env_cfg.scene.terrain.terrain_type = "usd"
    env_cfg.scene.terrain.usd_path = str(ground_plane_usd_path(static_friction=1.0, dynamic_friction=1.0))
    env_cfg.scene.terrain.visual_material = None
    env_cfg.terminations.base_too_low = DoneTerm(
        func=mdp.root_height_below_minimum, params={"minimum_height": min_base_height}
    )


def use_play_mode(env_cfg) -> None:
    """Evaluation variant: 16 envs, no observation noise, no pushes."""
    env_cfg.scene.num_envs = 16
    env_cfg.observations.policy.enable_corruption = False
    env_cfg.events.push_robot = None
