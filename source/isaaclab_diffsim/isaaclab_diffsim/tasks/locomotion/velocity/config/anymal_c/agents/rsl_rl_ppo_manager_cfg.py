"""rsl_rl PPO configurations of the manager-based DiffSim-Velocity-Flat-AnymalC and -Rough-AnymalC tasks."""

from isaaclab.utils import configclass
from isaaclab_tasks.contrib.velocity.config.anymal_c.agents.rsl_rl_ppo_cfg import (
    AnymalCFlatPPORunnerCfg,
    AnymalCRoughPPORunnerCfg,
)


@configclass
class AnymalCFlatDiffSimPPORunnerCfg(AnymalCFlatPPORunnerCfg):
    """Isaac Lab's flat ANYmal C PPO configuration, unchanged but for the experiment name and ``device="cpu"``
    (rsl_rl's default is cuda:0; Isaac Lab's train script replaces it with ``--device`` when given)."""

    def __post_init__(self):
        super().__post_init__()
        self.device = "cpu"
        self.experiment_name = "anymal_c_flat_diffsim_manager"


@configclass
class AnymalCRoughDiffSimPPORunnerCfg(AnymalCRoughPPORunnerCfg):
    """Isaac Lab's rough ANYmal C PPO configuration, unchanged but for the experiment name and ``device="cpu"``."""

    def __post_init__(self):
        super().__post_init__()
        self.device = "cpu"
        self.experiment_name = "anymal_c_rough_diffsim_manager"
