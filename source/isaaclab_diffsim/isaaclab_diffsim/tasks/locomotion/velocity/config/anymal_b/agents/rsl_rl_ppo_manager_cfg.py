"""rsl_rl PPO configuration of the manager-based DiffSim-Velocity-Flat-AnymalB task."""

from isaaclab.utils import configclass
from isaaclab_tasks.contrib.velocity.config.anymal_b.agents.rsl_rl_ppo_cfg import AnymalBFlatPPORunnerCfg


@configclass
class AnymalBFlatDiffSimPPORunnerCfg(AnymalBFlatPPORunnerCfg):
    """Isaac Lab's flat ANYmal B PPO configuration, unchanged but for the experiment name and ``device="cpu"``
    (rsl_rl's default is cuda:0; Isaac Lab's train script replaces it with ``--device`` when given)."""

    def __post_init__(self):
        super().__post_init__()
        self.device = "cpu"
        self.experiment_name = "anymal_b_flat_diffsim_manager"
