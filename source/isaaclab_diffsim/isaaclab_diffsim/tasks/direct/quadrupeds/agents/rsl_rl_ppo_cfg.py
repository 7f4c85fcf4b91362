"""rsl_rl PPO configurations of the other quadrupeds' flat tasks: ANYmal C's (Isaac Lab's flat PPO settings)."""

from isaaclab.utils import configclass

from ...anymal_c.agents.rsl_rl_ppo_cfg import AnymalCFlatDiffPPORunnerCfg


@configclass
class WarpQuadrupedFlatDiffPPORunnerCfg(AnymalCFlatDiffPPORunnerCfg):
    experiment_name = "warp_quadruped_flat_diffsim"


@configclass
class Go2FlatDiffPPORunnerCfg(AnymalCFlatDiffPPORunnerCfg):
    experiment_name = "go2_flat_diffsim"


@configclass
class AnymalBFlatDiffPPORunnerCfg(AnymalCFlatDiffPPORunnerCfg):
    experiment_name = "anymal_b_flat_diffsim"
