"""Isaac Lab's manager-based flat ANYmal B velocity task on the DiffSim backend and the local ANYmal B asset."""

from __future__ import annotations

from isaaclab.utils import configclass
from isaaclab_tasks.contrib.velocity.config.anymal_b.flat_env_cfg import AnymalBFlatEnvCfg

from isaaclab_diffsim.assets.anymal_b import ANYMAL_B_ROBOT_CFG
from isaaclab_diffsim.assets.anymal_b_cfg import (
    ANYMAL_B_ACTUATOR_SATURATION,
    ANYMAL_B_DIFFSIM_CFG,
    ANYMAL_B_FOOT_COLLIDERS_EXPR,
)

from ...diffsim_flat import use_diffsim_flat, use_play_mode


@configclass
class AnymalBFlatDiffSimEnvCfg(AnymalBFlatEnvCfg):
    """Isaac Lab's flat ANYmal B MDP unchanged, except what :func:`use_diffsim_flat` changes: DiffSim physics
    presets colliding the four foot spheres, :data:`ANYMAL_B_DIFFSIM_CFG` (ANYdrive PD 40/5 as implicit drives,
    bounded by the solver's DC-motor envelope, instead of the actuator net), a local ground plane, no sky light, and
    a ``base_too_low`` termination at 0.3 m."""

    def __post_init__(self):
        super().__post_init__()
        use_diffsim_flat(
            self,
            ANYMAL_B_DIFFSIM_CFG,
            ANYMAL_B_FOOT_COLLIDERS_EXPR,
            ANYMAL_B_ROBOT_CFG.min_base_height,
            actuator_saturation=ANYMAL_B_ACTUATOR_SATURATION,
        )


@configclass
class AnymalBFlatDiffSimEnvCfg_PLAY(AnymalBFlatDiffSimEnvCfg):
    """Evaluation variant: 16 envs, no observation noise, no pushes."""

    def __post_init__(self):
        super().__post_init__()
        use_play_mode(self)
