"""SHAC configuration of the differentiable ANYmal C flat velocity task (CPU-sized)."""

from isaaclab.utils import configclass

from isaaclab_diffsim.rl.shac import ShacRunnerCfg


@configclass
class AnymalCFlatShacRunnerCfg(ShacRunnerCfg):
    """SHAC on ANYmal C: horizon 12, the paper's value on ANYmal (with the stepping gait the actor's gradient norm
    jumped from its usual 0.02-0.4 to 2-1e18 in one iteration in eleven at horizon 32, one in twenty at 12); actor
    steps whose gradient norm is above 10 are skipped (``algorithm.max_actor_grad_norm``: clipping keeps the size
    of such a step, not a useful direction); actor learning rate 1e-3 (half SHAC's 2e-3: the heavy robot's
    gradients are large); 1000 iterations (about 40 min at 64 envs on 2 CPU cores shared with a second run)."""

    experiment_name: str = "anymal_c_flat_diffsim"
    horizon: int = 12
    max_iterations: int = 1000
    save_interval: int = 50

    def __post_init__(self):
        self.algorithm.actor_learning_rate = 1e-3
        self.algorithm.max_actor_grad_norm = 10.0
