"""SHAC configuration of Go2's flat velocity task (CPU-sized)."""

from isaaclab.utils import configclass

from ...warp_quadruped.agents.shac_cfg import WarpQuadrupedFlatShacRunnerCfg


@configclass
class Go2FlatShacRunnerCfg(WarpQuadrupedFlatShacRunnerCfg):
    """SHAC on Go2 (16 kg, lighter still): as the Warp quadruped."""

    experiment_name: str = "go2_flat_diffsim"
