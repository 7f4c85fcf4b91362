"""rsl_rl PPO configuration of the Warp quadruped's flat task: ANYmal C's (Isaac Lab's flat PPO settings)."""

from isaaclab.utils import configclass

from ...anymal_c.agents.rsl_rl_ppo_cfg import AnymalCFlatDiffPPORunnerCfg


@configclass
class WarpQuadrupedFlatDiffPPORunnerCfg(AnymalCFlatDiffPPORunnerCfg):
    experiment_name = "warp_quadruped_flat_diffsim"
