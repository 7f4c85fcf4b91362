"""Isaac Lab's manager-based flat Unitree Go2 velocity task on the DiffSim backend and the local Go2 asset."""

from __future__ import annotations

from isaaclab.utils import configclass
from isaaclab_tasks.core.velocity.config.go2.flat_env_cfg import UnitreeGo2FlatEnvCfg

from isaaclab_diffsim.assets.go2 import GO2_ROBOT_CFG
from isaaclab_diffsim.assets.go2_cfg import GO2_DIFFSIM_CFG, GO2_FOOT_COLLIDERS_EXPR

from ...diffsim_flat import use_diffsim_flat, use_play_mode


@configclass
class Go2FlatDiffSimEnvCfg(UnitreeGo2FlatEnvCfg):
    """Isaac Lab's flat Go2 MDP unchanged (including its base-height reward), except what :func:`use_diffsim_flat`
    changes: DiffSim physics presets colliding the four foot spheres, :data:`GO2_DIFFSIM_CFG` (Isaac Lab's DC
    motors, kp 25), a local ground plane, no sky light, and a ``base_too_low`` termination at 0.15 m."""

    def __post_init__(self):
        super().__post_init__()
        use_diffsim_flat(self, GO2_DIFFSIM_CFG, GO2_FOOT_COLLIDERS_EXPR, GO2_ROBOT_CFG.min_base_height)


@configclass
class Go2FlatDiffSimEnvCfg_PLAY(Go2FlatDiffSimEnvCfg):
    """Evaluation variant: 16 envs, no observation noise, no pushes."""

    def __post_init__(self):
        super().__post_init__()
        use_play_mode(self)
