"""SHAC configuration of the differentiable ANYmal C flat velocity task (CPU-sized)."""

from isaaclab.utils import configclass

from isaaclab_diffsim.rl.shac import ShacRunnerCfg


@configclass
class AnymalCFlatTrotShacRunnerCfg(ShacRunnerCfg):
    """SHAC on ANYmal C: horizon 12, the paper's value on ANYmal; actor learning rate 1e-3 (half SHAC's 2e-3: the
    heavy robot's gradients are large); 1000 iterations. ``algorithm.max_actor_grad_norm=100`` is a safety net
    far above the usual gradient norm (an actor step above the limit is skipped, not clipped: clipping keeps the
    size of such a step, not a useful direction)."""

    experiment_name: str = "anymal_c_flat_trot_diffsim"
    horizon: int = 12
    max_iterations: int = 1000
    save_interval: int = 50

    def __post_init__(self):
        self.algorithm.actor_learning_rate = 1e-3
        self.algorithm.max_actor_grad_norm = 100.0


@configclass
class AnymalCFlatShacRunnerCfg(AnymalCFlatTrotShacRunnerCfg):
    """SHAC on the reference-free flat task: the trot task's settings, 1000 iterations (at its 1024 envs, 12.3 M
    samples). At 500 iterations the hard-contact tracking error was 0.23-0.26 m/s and 2 steps of latency felled
    two seeds of four in MuJoCo; at 1000, 0.18-0.22 m/s and no fall (docs/results.md "standing_robust")."""

    experiment_name: str = "anymal_c_flat_diffsim"
    max_iterations: int = 1000


@configclass
class AnymalCRoughShacRunnerCfg(AnymalCFlatShacRunnerCfg):
    """The reference-free flat task's SHAC configuration on the rough task (its own experiment folder): first the
    flat task's registered defaults (``warm_start_task``: 1000 iterations on the plane), then 1000 iterations on the
    terrain from that policy (12.3 M samples), each env's action gradient clipped at every step to 10 times the
    median over the envs (``algorithm.env_action_grad_clip``). From fresh networks the rough task learned to stand,
    not to step; with 500 terrain iterations and no clip it fell in 24-30 % of the -Play episodes, with these
    settings 11-14 % on seeds 80, 81 and 613 (docs/results.md "rough_terrain_iterations", CHANGELOG)."""

    experiment_name: str = "anymal_c_rough_diffsim"
    max_iterations: int = 1000
    warm_start_task: str | None = "DiffSim-Velocity-Flat-AnymalC-Direct"

    def __post_init__(self):
        super().__post_init__()
        self.algorithm.env_action_grad_clip = 10.0


@configclass
class AnymalCRoughTrotShacRunnerCfg(AnymalCFlatTrotShacRunnerCfg):
    """The flat trot task's SHAC configuration on the rough trot task (its own experiment folder)."""

    experiment_name: str = "anymal_c_rough_trot_diffsim"
