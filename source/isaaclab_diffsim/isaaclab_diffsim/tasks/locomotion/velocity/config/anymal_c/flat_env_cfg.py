"""Isaac Lab's manager-based flat ANYmal C velocity task on the DiffSim backend and the local ANYmal C asset."""

from __future__ import annotations

from isaaclab.utils import configclass
from isaaclab_tasks.contrib.velocity.config.anymal_c.flat_env_cfg import AnymalCFlatEnvCfg

from isaaclab_diffsim.assets.anymal_c_cfg import ANYMAL_C_DIFFSIM_CFG, ANYMAL_C_FOOT_COLLIDERS_EXPR

from ...diffsim_flat import use_diffsim_flat, use_play_mode


@configclass
class AnymalCFlatDiffSimEnvCfg(AnymalCFlatEnvCfg):
    """Isaac Lab's flat ANYmal C MDP (observations, rewards, terminations, commands, events) unchanged, except:

    - physics: :class:`DiffSimPhysicsCfg` presets (``physics=diffsim_smoothed`` default, ``diffsim_hard``,
      ``diffsim_soft``, ``newton_mjwarp``);
    - robot: :data:`ANYMAL_C_DIFFSIM_CFG` (example-robot-data URDF converted locally; DC-motor ANYdrives
      instead of the actuator net, whose weights live on the asset server);
    - a local ground-plane USD (friction 1.0 like the task's terrain material) instead of the grid plane, and no
      sky light or MDL ground material (all three live on the asset server; nothing renders here);
    - DiffSim presets collide only the foot spheres with the ground (the paper's one contact point per foot),
      so Isaac Lab's base-contact termination
      cannot fire there: a ``base_too_low`` termination (0.3 m, as in the differentiable env) catches falls.
      ``env.sim.physics.solver_cfg.collider_shapes_expr='.*_FOOT/sphere|.*/base/box'`` adds the torso box (8
      more contact points per robot), and base contact terminates as in Isaac Lab.
      The ``newton_mjwarp`` preset keeps every collider of the asset.
    """

    def __post_init__(self):
        super().__post_init__()
        use_diffsim_flat(self, ANYMAL_C_DIFFSIM_CFG, ANYMAL_C_FOOT_COLLIDERS_EXPR, 0.3, keep_peer=False)


@configclass
class AnymalCFlatDiffSimEnvCfg_PLAY(AnymalCFlatDiffSimEnvCfg):
    """Evaluation variant: 16 envs, no observation noise, no pushes."""

    def __post_init__(self):
        super().__post_init__()
        use_play_mode(self)
