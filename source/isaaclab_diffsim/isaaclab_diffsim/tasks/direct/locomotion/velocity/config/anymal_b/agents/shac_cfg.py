"""SHAC configuration of ANYmal B's flat velocity task (CPU-sized)."""

from isaaclab.utils import configclass

from ...anymal_c.agents.shac_cfg import AnymalCFlatShacRunnerCfg


@configclass
class AnymalBFlatShacRunnerCfg(AnymalCFlatShacRunnerCfg):
    """SHAC on ANYmal B: ANYmal C's settings (horizon 12, actor learning rate 1e-3)."""

    experiment_name: str = "anymal_b_flat_diffsim"
