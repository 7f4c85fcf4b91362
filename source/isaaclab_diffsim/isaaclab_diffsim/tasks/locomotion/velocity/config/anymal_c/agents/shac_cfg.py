"""SHAC configuration of the differentiable ANYmal C flat velocity task (CPU-sized)."""

from isaaclab.utils import configclass

from isaaclab_diffsim.rl.shac import ShacRunnerCfg


@configclass
class AnymalCFlatShacRunnerCfg(ShacRunnerCfg):
    """SHAC on ANYmal C: horizon 32 (the issue's default; the paper used 12 on ANYmal, where longer horizons
    made gradient norms explode: override with ``agent.horizon=12``), actor learning rate 1e-3 (half SHAC's
    2e-3: the heavy robot's gradients are large), 200 iterations (about 20 min at 64 envs on 2 CPU cores)."""

    experiment_name: str = "anymal_c_flat_diffsim"
    horizon: int = 32
    max_iterations: int = 200
    save_interval: int = 25

    def __post_init__(self):
        self.algorithm.actor_learning_rate = 1e-3
