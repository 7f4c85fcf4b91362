"""rsl_rl PPO configuration of Go2's flat task: ANYmal C's (Isaac Lab's flat PPO settings)."""

from isaaclab.utils import configclass

from ...anymal_c.agents.rsl_rl_ppo_cfg import AnymalCFlatDiffPPORunnerCfg


@configclass
class Go2FlatDiffPPORunnerCfg(AnymalCFlatDiffPPORunnerCfg):
    experiment_name = "go2_flat_diffsim"
