"""Configuration of the SHAC runner, algorithm and actor-critic, in the style of isaaclab_rl's ``RslRl...Cfg``.

A task's gym registration can point at a subclass of :class:`ShacRunnerCfg` with
``"shac_cfg_entry_point"`` next to ``"rsl_rl_cfg_entry_point"``.

Defaults follow the published configuration of SHAC (Xu et al., "Accelerated Policy Learning with
Parallel Differentiable Simulation", ICLR 2022; ``examples/cfg/shac/*.yaml`` of its code): actor and
critic learning rates 2e-3 with linear decay, Adam betas (0.7, 0.95), gamma 0.99, TD(lambda) critic
targets with lambda 0.95, 16 critic epochs of 4 minibatches, target-critic soft update with alpha 0.2,
gradient-norm clipping at 1.0, running observation normalisation, ELU MLPs with LayerNorm, a
Gaussian policy with a learned state-independent log-std initialised at -1, actions squashed by tanh.
Where the ANYmal task is expected to differ, the field's docstring says so.
"""

from __future__ import annotations

from typing import Literal

from isaaclab.utils import configclass


@configclass
class ShacActorCriticCfg:
    """Networks of the SHAC actor (Gaussian policy) and critic (state-value function)."""

    class_name: str = "ShacActorCritic"
    """The actor-critic class name. Defaults to ShacActorCritic."""

    actor_hidden_dims: list[int] = [256, 128, 64]
    """Hidden layer sizes of the actor's mean network.

    SHAC used [128, 64, 32] (Ant) to [256, 128] (Humanoid); [256, 128, 64] is the size of Isaac Lab's
    ANYmal PPO policies, so the two algorithms train the same policy architecture. Cheap next to the
    physics even on CPU; tests use smaller networks.
    """

    critic_hidden_dims: list[int] = [256, 128, 64]
    """Hidden layer sizes of the critic. SHAC used [64, 64] to [256, 128]; see ``actor_hidden_dims``."""

    activation: str = "elu"
    """Activation of the hidden layers: one of elu, relu, selu, tanh, sigmoid, leaky_relu, gelu, silu, mish,
    identity. Defaults to elu (SHAC)."""

    layer_norm: bool = True
    """Whether a LayerNorm follows each hidden activation, as in SHAC's actor and critic MLPs."""

    init_log_std: float = -1.0
    """Initial log standard deviation of the policy's Gaussian (state independent, learned). SHAC: -1.0."""

    log_std_range: tuple[float, float] = (-5.0, 2.0)
    """The learned log-std is clamped into this range when sampling."""

    squash_actions: bool = True
    """Whether actions sent to the environment are ``tanh`` of the Gaussian sample, as in SHAC.

    The deterministic (exported) action is then ``tanh(mean)``. With False the raw sample is sent.
    """

    obs_normalization: bool = True
    """Whether observations are normalised by running mean and variance (SHAC's ``obs_rms``).

    The statistics are frozen for the duration of a horizon (so gradients flow through a fixed affine
    map) and updated from the detached observations; the exported policy contains the normaliser.
    """

    obs_norm_clip: float | None = None
    """If set, normalised observations are clamped to [-clip, clip]. SHAC does not clip (None); note that a
    clamp zeroes the gradient of the clamped entries."""


@configclass
class ShacAlgorithmCfg:
    """Losses and optimisation of SHAC."""

    class_name: str = "SHAC"
    """The algorithm class name. Defaults to SHAC."""

    gamma: float = 0.99
    """Discount factor. SHAC: 0.99."""

    lam: float = 0.95
    """Lambda of the critic's TD(lambda) targets. SHAC: 0.95."""

    actor_learning_rate: float = 2e-3
    """Initial learning rate of the actor. SHAC: 2e-3.

    On ANYmal (a heavy robot with stiff contacts, gradients larger and noisier than in SHAC's MuJoCo-like
    tasks) a lower rate, e.g. 5e-4 to 1e-3, is the first thing to try if training is unstable; this default is
    not tuned for ANYmal.
    """

    critic_learning_rate: float = 2e-3
    """Initial learning rate of the critic. SHAC: 2e-3 (Ant, Cheetah), 5e-4 (Humanoid, SNU Humanoid)."""

    min_learning_rate: float = 1e-5
    """Learning rate reached at ``ShacRunnerCfg.max_iterations`` under the linear schedule. SHAC: 1e-5."""

    schedule: Literal["linear", "constant"] = "linear"
    """Learning-rate schedule: linear decay from the initial rate to ``min_learning_rate`` over
    ``ShacRunnerCfg.max_iterations`` iterations (SHAC), or constant."""

    betas: tuple[float, float] = (0.7, 0.95)
    """Adam betas for actor and critic. SHAC: (0.7, 0.95)."""

    max_grad_norm: float = 1.0
    """Gradient-norm clip of actor and critic updates. SHAC: 1.0. The actor's norm before clipping is logged."""

    max_actor_grad_norm: float | None = None
    """If set, an actor step whose gradient norm before clipping is above this is skipped (the critic is still
    fitted); counted in ``exploding_count`` and logged as ``Policy/exploding_skipped``, but not as a non-finite
    iteration. SHAC has no such rule (None). Through contact, a horizon occasionally yields a gradient 1e3-1e18
    times the usual norm; clipping keeps its size but not its direction, which is then noise from one trajectory.
    """

    critic_iterations: int = 16
    """Epochs over the horizon's data when fitting the critic. SHAC: 16."""

    num_critic_minibatches: int = 4
    """Minibatches per critic epoch (the horizon's num_envs * horizon samples are split). SHAC: 4."""

    target_critic_alpha: float = 0.2
    """Soft update of the target critic: ``target = alpha * target + (1 - alpha) * critic``. SHAC: 0.2."""

    value_gradient: bool = True
    """Backpropagate the actor loss through the critic's value of the horizon's last state (SHAC: True).
    False keeps the value as a constant bootstrap, so the actor's gradient comes only from the rewards inside
    the horizon (a critic fitted mostly on standing data can point its state gradient away from the command)."""


@configclass
class ShacRunnerCfg:
    """Configuration of :class:`~isaaclab_diffsim.rl.shac.ShacRunner` (rollout loop, logging, checkpoints)."""

    class_name: str = "ShacRunner"
    """The runner class name. Defaults to ShacRunner."""

    seed: int = 42
    """Seed for the experiment. The runner does not seed anything itself; train scripts pass it to the env and
    ``torch.manual_seed`` (as for rsl_rl)."""

    device: str = "cpu"
    """Device of the agent's networks. Defaults to cpu (this project's main target; rsl_rl defaults to cuda:0)."""

    horizon: int = 32
    """Length h of each short-horizon rollout that is differentiated through (steps per env per iteration).

    32 is SHAC's default and the paper's value on a lighter quadruped; on ANYmal the paper (Schwarke et al.)
    needed 12 because gradient norms explode over long horizons on a heavy robot (override
    ``agent.horizon=12``).
    """

    max_iterations: int = 500
    """Number of training iterations; also the length of the linear learning-rate decay."""

    save_interval: int = 50
    """Iterations between checkpoints (``model_<iteration>.pt`` in the log directory)."""

    max_consecutive_nonfinite: int = 5
    """Training stops with a RuntimeError (naming the last good checkpoint) after this many consecutive
    iterations whose actor or critic update was skipped because a loss or gradient was not finite."""

    capture_grad_norm: float | None = 100.0
    """Horizons whose actor gradient norm (before clipping) is above this, or not finite, are written to
    ``<log_dir>/bad_horizons/horizon_<iteration>.pt`` with everything needed to recompute them
    (``scripts/tools/replay_horizon.py``). None disables capture (and the per-iteration snapshot it needs)."""

    max_captures: int = 5
    """At most this many horizons are captured per runner (bounds disk use)."""

    record_interval: int = 0
    """Every this many iterations, one horizon is recorded to ``<log_dir>/recordings/horizon_<iteration>.usd``
    (robots, per-foot contact overlays and the per-step actor-gradient magnitude |dL/da_t|; see
    :mod:`isaaclab_diffsim.recording`). 0 disables recording; needs a ``log_dir``."""

    record_envs: int = 4
    """How many robots (the first envs) a recorded horizon holds."""

    experiment_name: str = "shac"
    """The experiment name (log directory ``logs/shac/<experiment_name>``)."""

    run_name: str = ""
    """Appended to the run directory's time-stamped name if not empty."""

    logger: Literal["tensorboard"] = "tensorboard"
    """The logger to use. Only tensorboard."""

    resume: bool = False
    """Whether to resume from a checkpoint (used by train scripts)."""

    load_run: str = ".*"
    """Run directory to load; regex, the latest matching run is taken (as in isaaclab_rl)."""

    load_checkpoint: str = "model_.*.pt"
    """Checkpoint file to load; regex, the latest matching file is taken (as in isaaclab_rl)."""

    policy: ShacActorCriticCfg = ShacActorCriticCfg()
    """The actor-critic configuration."""

    algorithm: ShacAlgorithmCfg = ShacAlgorithmCfg()
    """The algorithm configuration."""
