"""rsl_rl PPO configuration of the manager-based DiffSim-Velocity-Flat-Go2 task."""

from isaaclab.utils import configclass
from isaaclab_tasks.core.velocity.config.go2.agents.rsl_rl_ppo_cfg import UnitreeGo2FlatPPORunnerCfg


@configclass
class Go2FlatDiffSimPPORunnerCfg(UnitreeGo2FlatPPORunnerCfg):
    """Isaac Lab's flat Go2 PPO configuration, unchanged but for the experiment name and ``device="cpu"``
    (rsl_rl's default is cuda:0; Isaac Lab's train script replaces it with ``--device`` when given)."""

    def __post_init__(self):
        super().__post_init__()
        self.device = "cpu"
        self.experiment_name = "go2_flat_diffsim_manager"
