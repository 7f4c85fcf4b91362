"""Flat velocity tracking of ANYmal B on the differentiable backend (direct env): the generic task with this robot,
ANYmal C's forward-trot recipe and Isaac Lab's flat randomisation. Built from the URDF; 64 envs on CPU by
default."""

from isaaclab.utils import configclass

from .......assets.anymal_b import ANYMAL_B_ROBOT_CFG
from ...recipes import use_forward_trot_recipe, use_play_settings
from ...velocity_env_cfg import DiffVelocityEnvCfg
from ..anymal_c.flat_env_cfg import TROT_PERIOD_S, TROT_SWING_SCALE


@configclass
class AnymalBFlatDiffEnvCfg(DiffVelocityEnvCfg):
    """ANYmal B (30.5 kg): ANYmal C's trot, Isaac Lab's flat randomisation (base mass +-5 kg)."""

    num_envs: int = 64

    def __post_init__(self):
        self.use_robot(ANYMAL_B_ROBOT_CFG)
        use_forward_trot_recipe(self, TROT_PERIOD_S, TROT_SWING_SCALE)


@configclass
class AnymalBFlatDiffEnvCfg_PLAY(AnymalBFlatDiffEnvCfg):
    """Evaluation: hard contact, forward commands, no pushes or noise, nominal randomisation."""

    def __post_init__(self):
        super().__post_init__()
        use_play_settings(self)
