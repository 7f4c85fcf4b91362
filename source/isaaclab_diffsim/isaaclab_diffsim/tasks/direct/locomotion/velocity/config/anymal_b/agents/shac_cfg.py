"""SHAC configuration of ANYmal B's flat velocity task (CPU-sized)."""

from isaaclab.utils import configclass

from ...anymal_c.agents.shac_cfg import AnymalCFlatTrotShacRunnerCfg


@configclass
class AnymalBFlatShacRunnerCfg(AnymalCFlatTrotShacRunnerCfg):
    """SHAC on ANYmal B: ANYmal C's trot settings (horizon 12, actor learning rate 1e-3, 1000 iterations)."""

    experiment_name: str = "anymal_b_flat_diffsim"
