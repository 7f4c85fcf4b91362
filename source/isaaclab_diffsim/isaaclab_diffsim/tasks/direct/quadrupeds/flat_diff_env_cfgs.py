"""Flat velocity tracking of the other quadrupeds on the differentiable backend: the ANYmal C task's env with
another ``robot``, the same forward-trot recipe and Isaac Lab's flat-task randomisation (base mass scaled to the
robot). Built from the URDF (``asset_source="urdf"``); 64 envs on CPU by default."""

from isaaclab.utils import configclass

from ....assets.anymal_b import ANYMAL_B_ROBOT_CFG
from ....assets.go2 import GO2_ROBOT_CFG
from ....assets.warp_quadruped import WARP_QUADRUPED_ROBOT_CFG
from ..anymal_c.diff_velocity_env_cfg import DiffVelocityEnvCfg
from ..anymal_c.flat_diff_env_cfg import use_forward_trot_recipe, use_play_settings


@configclass
class WarpQuadrupedFlatDiffEnvCfg(DiffVelocityEnvCfg):
    """The Warp example quadruped (30.7 kg, 6.2 kg base): base mass -1 to +3 kg."""

    num_envs: int = 64

    def __post_init__(self):
        self.use_robot(WARP_QUADRUPED_ROBOT_CFG)
        use_forward_trot_recipe(self)
        self.events.base_mass_add_range = (-1.0, 3.0)


@configclass
class Go2FlatDiffEnvCfg(DiffVelocityEnvCfg):
    """Unitree Go2 (16.1 kg, 6.9 kg base): base mass -1 to +3 kg (Isaac Lab's Go2 task)."""

    num_envs: int = 64

    def __post_init__(self):
        self.use_robot(GO2_ROBOT_CFG)
        use_forward_trot_recipe(self)
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
