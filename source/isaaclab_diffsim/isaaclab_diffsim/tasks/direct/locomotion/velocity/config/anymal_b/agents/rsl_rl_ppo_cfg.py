"""rsl_rl PPO configuration of ANYmal B's flat task: ANYmal C's (Isaac Lab's flat PPO settings)."""

from isaaclab.utils import configclass

from ...anymal_c.agents.rsl_rl_ppo_cfg import AnymalCFlatDiffPPORunnerCfg


@configclass
class AnymalBFlatDiffPPORunnerCfg(AnymalCFlatDiffPPORunnerCfg):
    experiment_name = "anymal_b_flat_diffsim"
