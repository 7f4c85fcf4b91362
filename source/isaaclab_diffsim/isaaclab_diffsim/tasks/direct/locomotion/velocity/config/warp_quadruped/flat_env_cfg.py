"""Flat velocity tracking of the Warp example quadruped on the differentiable backend (direct env): the generic
task with this robot, the forward-trot recipe with a trot sized to the robot, and Isaac Lab's flat-task
randomisation (base mass scaled to the robot). Built from the URDF (``asset_source="urdf"``); 64 envs on CPU by default.

The trot of the light robots was chosen by a zero-action sweep on ``-Play`` (hard contact, 8 envs, 5 s): ANYmal C's
0.6 s period and ``joint_swing_scale`` 1.0 lift their feet 17-23 cm and tip them over (23 and 39 failures); the
settings of the Warp quadruped and Go2 lift them 5.5 and 9.5 cm with none."""

from isaaclab.utils import configclass

from .......assets.warp_quadruped import WARP_QUADRUPED_ROBOT_CFG
from ...recipes import use_forward_trot_recipe, use_play_settings
from ...velocity_env_cfg import DiffVelocityEnvCfg

BASE_MASS_ADD_RANGE = (-1.0, 3.0)
"""Added to the 6.2 kg base [kg] at startup, training and ``-Play`` alike."""


@configclass
class WarpQuadrupedFlatDiffEnvCfg(DiffVelocityEnvCfg):
    """The Warp example quadruped (30.7 kg, 6.2 kg base): a 0.4 s trot, 5 cm swing; base mass -1 to +3 kg."""

    num_envs: int = 64

    def __post_init__(self):
        self.use_robot(WARP_QUADRUPED_ROBOT_CFG)
        use_forward_trot_recipe(self, period_s=0.4, joint_swing_scale=0.3, swing_height=0.05)
        self.events.base_mass_add_range = BASE_MASS_ADD_RANGE


@configclass
class WarpQuadrupedFlatDiffEnvCfg_PLAY(WarpQuadrupedFlatDiffEnvCfg):
    """Evaluation: hard contact, forward commands, no pushes or noise, nominal randomisation."""

    def __post_init__(self):
        super().__post_init__()
        use_play_settings(self)
        self.events.base_mass_add_range = BASE_MASS_ADD_RANGE
