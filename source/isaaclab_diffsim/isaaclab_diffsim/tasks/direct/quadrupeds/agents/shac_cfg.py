"""SHAC configurations of the other quadrupeds' flat velocity tasks (CPU-sized)."""

from isaaclab.utils import configclass

from isaaclab_diffsim.rl.shac import ShacRunnerCfg

from ...anymal_c.agents.shac_cfg import AnymalCFlatTrotShacRunnerCfg


@configclass
class WarpQuadrupedFlatShacRunnerCfg(ShacRunnerCfg):
    """SHAC on the Warp quadruped: horizon 32, the paper's value for its light robot; SHAC's actor learning rate;
    400 iterations, the samples of ANYmal C's 1000 at horizon 12 (0.82 M against 0.77 M at 64 envs)."""

    experiment_name: str = "warp_quadruped_flat_diffsim"
    horizon: int = 32
    max_iterations: int = 400
    save_interval: int = 50

    def __post_init__(self):
        self.algorithm.max_actor_grad_norm = 100.0


@configclass
class Go2FlatShacRunnerCfg(WarpQuadrupedFlatShacRunnerCfg):
    """SHAC on Go2 (16 kg, lighter still): as the Warp quadruped."""

    experiment_name: str = "go2_flat_diffsim"


@configclass
class AnymalBFlatShacRunnerCfg(AnymalCFlatTrotShacRunnerCfg):
    """SHAC on ANYmal B: ANYmal C's trot settings (horizon 12, actor learning rate 1e-3, 1000 iterations)."""

    experiment_name: str = "anymal_b_flat_diffsim"
