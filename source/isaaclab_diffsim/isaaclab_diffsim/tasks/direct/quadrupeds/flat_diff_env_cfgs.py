"""Flat velocity tracking of the other quadrupeds on the differentiable backend: the ANYmal C task's env with
another ``robot``, the forward-trot recipe with a trot sized to the robot, and Isaac Lab's flat-task randomisation
(base mass scaled to the robot). Built from the URDF (``asset_source="urdf"``); 64 envs on CPU by default.

The trot of the light robots was chosen by a zero-action sweep on ``-Play`` (hard contact, 8 envs, 5 s): ANYmal C's
0.6 s period and ``joint_swing_scale`` 1.0 lift their feet 17-23 cm and tip them over (23 and 39 failures); the
settings below lift them 5.5 and 9.5 cm with none."""

from isaaclab.utils import configclass

from ....assets.anymal_b import ANYMAL_B_ROBOT_CFG
from ....assets.go2 import GO2_ROBOT_CFG
from ....assets.warp_quadruped import WARP_QUADRUPED_ROBOT_CFG
from ..anymal_c.diff_velocity_env_cfg import DiffVelocityEnvCfg
from ..anymal_c.flat_diff_env_cfg import use_forward_trot_recipe, use_play_settings


@configclass
class WarpQuadrupedFlatDiffEnvCfg(DiffVelocityEnvCfg):
    """The Warp example quadruped (30.7 kg, 6.2 kg base): a 0.4 s trot, 5 cm swing; base mass -1 to +3 kg."""

    num_envs: int = 64

    def __post_init__(self):
        self.use_robot(WARP_QUADRUPED_ROBOT_CFG)
        use_forward_trot_recipe(self)
        self.gait.period_s, self.gait.joint_swing_scale, self.gait.swing_height = 0.4, 0.3, 0.05
        self.events.base_mass_add_range = (-1.0, 3.0)


@configclass
class Go2FlatDiffEnvCfg(DiffVelocityEnvCfg):
    """Unitree Go2 (16.1 kg, 6.9 kg base): a 0.4 s trot, 6 cm swing; base mass -1 to +3 kg (Isaac Lab's Go2 task)."""

    num_envs: int = 64

    def __post_init__(self):
        self.use_robot(GO2_ROBOT_CFG)
        use_forward_trot_recipe(self)
        self.gait.period_s, self.gait.joint_swing_scale, self.gait.swing_height = 0.4, 0.5, 0.06
        self.events.base_mass_add_range = (-1.0, 3.0)


@configclass
class AnymalBFlatDiffEnvCfg(DiffVelocityEnvCfg):
    """ANYmal B (30.5 kg): Isaac Lab's flat randomisation (base mass +-5 kg)."""

    num_envs: int = 64

    def __post_init__(self):
        self.use_robot(ANYMAL_B_ROBOT_CFG)
        use_forward_trot_recipe(self)


@configclass
class WarpQuadrupedFlatDiffEnvCfg_PLAY(WarpQuadrupedFlatDiffEnvCfg):
    """Evaluation: hard contact, forward commands, no pushes or noise, nominal randomisation."""

    def __post_init__(self):
        super().__post_init__()
        use_play_settings(self)
        self.events.base_mass_add_range = (-1.0, 3.0)


@configclass
class Go2FlatDiffEnvCfg_PLAY(Go2FlatDiffEnvCfg):
    """Evaluation: hard contact, forward commands, no pushes or noise, nominal randomisation."""

    def __post_init__(self):
        super().__post_init__()
        use_play_settings(self)
        self.events.base_mass_add_range = (-1.0, 3.0)


@configclass
class AnymalBFlatDiffEnvCfg_PLAY(AnymalBFlatDiffEnvCfg):
    """Evaluation: hard contact, forward commands, no pushes or noise, nominal randomisation."""

    def __post_init__(self):
        super().__post_init__()
        use_play_settings(self)
