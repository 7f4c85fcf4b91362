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

from ...utils.validation import (
    Rule,
    boolean,
    check,
    finite,
    in_range,
    integer,
    is_finite,
    is_real,
    non_negative,
    one_of,
    optional,
    positive,
    sequence,
)
from .activations import ACTIVATIONS
from .warm_start import WARM_START_OBS_STATS

_POLICY_RULES = {
    "actor_hidden_dims": sequence(integer(1), min_length=1),
    "critic_hidden_dims": sequence(integer(1), min_length=1),
    "activation": Rule(f"one of {sorted(ACTIVATIONS)}", lambda v: str(v).lower() in ACTIVATIONS),
    "init_log_std": finite,
    "log_std_range": Rule(
        "(low, high) with finite low < high", lambda r: len(r) == 2 and all(is_finite(x) for x in r) and r[0] < r[1]
    ),
    "obs_norm_clip": optional(positive),
}
_ALGORITHM_RULES = {
    "gamma": in_range(0, 1, low_open=True),
    "lam": in_range(0, 1, low_open=True),
    "actor_learning_rate": positive,
    "critic_learning_rate": positive,
    "max_grad_norm": positive,
    "min_learning_rate": non_negative,
    "schedule": one_of("linear", "constant"),
    "betas": sequence(in_range(0, 1, high_open=True), length=2),
    "max_actor_grad_norm": optional(positive),
    "env_action_grad_clip": optional(positive),
    "likelihood_ratio_coef": non_negative,
    "critic_iterations": integer(1),
    "num_critic_minibatches": integer(1),
    "target_critic_alpha": in_range(0, 1),
    "concurrent_critic_fit": boolean,
    "critic_fit_worker": one_of("process", "thread"),
    "critic_fit_overlaps_rollout": boolean,
}
_KAPPA_SCHEDULE_RULES = {
    "kappa_start": positive,
    "kappa_end": positive,
    "iterations": integer(1),
    "kind": one_of("off", "linear", "geometric"),
}
_RUNNER_RULES = {
    "horizon": integer(1),
    "max_iterations": integer(0),
    "save_interval": integer(1),
    "max_consecutive_nonfinite": integer(1),
    "max_captures": integer(0),
    "capture_grad_norm": optional(Rule("a number >= 0", lambda v: is_real(v) and v >= 0)),  # inf: non-finite ones only
    "logger": Rule("'tensorboard' (the only logger of this runner)", lambda v: v == "tensorboard"),
    "resume": boolean,
    "warm_start": optional(Rule("a checkpoint file path", lambda v: isinstance(v, str) and v != "")),
    "warm_start_task": optional(Rule("a task id", lambda v: isinstance(v, str) and v != "")),
    "warm_start_iterations": optional(integer(1)),
    "warm_start_obs_stats": one_of(*WARM_START_OBS_STATS),
}


@configclass
class ShacActorCriticCfg:
    """Networks of the SHAC actor (Gaussian policy) and critic (state-value function)."""

    class_name: str = "ShacActorCritic"
    """The actor-critic class :class:`~isaaclab_diffsim.rl.shac.SHAC` builds (see
    :func:`~isaaclab_diffsim.rl.shac.resolve.resolve_class`). Defaults to ShacActorCritic."""

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

    def validate_values(self, prefix: str = "policy") -> None:
        """Raise ValueError naming the field and its value for values that cannot work."""
        check(self, _POLICY_RULES, prefix=f"{prefix}.")


@configclass
class ShacAlgorithmCfg:
    """Losses and optimisation of SHAC."""

    class_name: str = "SHAC"
    """The algorithm class :class:`~isaaclab_diffsim.rl.shac.ShacRunner` builds (see
    :func:`~isaaclab_diffsim.rl.shac.resolve.resolve_class`). Defaults to SHAC."""

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

    env_action_grad_clip: float | None = None
    """If set, at every step of the horizon each env's gradient with respect to its action is scaled down to at most
    this multiple of the median over the envs of that step's gradient norms (None: off; SHAC has no such rule). The
    policy's gradient is a sum over envs of these gradients pulled through the actor, and on terrain a few envs (not
    the ones that fall) can hold most of the batch's squared gradient: this bounds one env's share while keeping every
    env's direction."""

    critic_iterations: int = 16
    """Epochs over the horizon's data when fitting the critic. SHAC: 16."""

    num_critic_minibatches: int = 4
    """Minibatches per critic epoch (the horizon's num_envs * horizon samples are split). SHAC: 4."""

    target_critic_alpha: float = 0.2
    """Soft update of the target critic: ``target = alpha * target + (1 - alpha) * critic``. SHAC: 0.2."""

    concurrent_critic_fit: bool = True
    """Fit the critic in a worker (``critic_fit_worker``) while the actor loss backpropagates through the physics
    (the fit needs only the horizon's detached data, the actor step never reads the critic): the same numbers, two
    cores busy instead of one. Single process only: with several ranks both steps all-reduce, so the fit runs after
    the actor step."""

    critic_fit_worker: str = "process"
    """Where the concurrent fit runs: ``"process"``, a forked worker process on the CPU (its own interpreter: the fit's
    Python does not take turns with the backward's for the GIL, so each runs at full speed), or ``"thread"``, a
    worker thread. On a CUDA device the fit always runs in a thread (a forked process cannot use CUDA)."""

    critic_fit_overlaps_rollout: bool = True
    """With ``concurrent_critic_fit``: let the fit also run beside the next horizon's rollout, not only beside the
    backward. The rollout never reads the critic; it needs the target critic (soft-updated after the fit) only for
    the values of its done and last states, which it then evaluates at the horizon's end, once the fit is in: the same
    numbers in the same order, so training is bitwise the non-overlapped one. The fit's statistics (``critic_loss``,
    ``critic_skipped``) are reported one iteration late."""

    likelihood_ratio_coef: float = 0.0
    """Weight of a likelihood-ratio (score-function) policy-gradient term added to the actor loss (0: off; SHAC has
    none): each step's action mean is pushed along its sampled noise in proportion to the step's TD(lambda)
    advantage (:mod:`.likelihood_ratio`). It sees what the smoothed dynamics do not differentiate, such as a fall
    off a step edge; at 1 it is a second estimate of the same horizon objective's gradient, added to SHAC's. The
    policy class needs a ``sample(obs) -> (action, noise)`` method."""

    value_gradient: bool = True
    """Backpropagate the actor loss through the critic's value of the horizon's last state (SHAC: True).
    False keeps the value as a constant bootstrap, so the actor's gradient comes only from the rewards inside
    the horizon (a critic fitted mostly on standing data can point its state gradient away from the command)."""

    def validate_values(self, prefix: str = "algorithm") -> None:
        """Raise ValueError naming the field and its value for values that cannot work."""
        check(self, _ALGORITHM_RULES, prefix=f"{prefix}.")


@configclass
class KappaScheduleCfg:
    """A schedule of the smoothed contact model's sigmoid stiffness kappa [1/m] over training iterations.

    Off by default (``kind="off"``: the env keeps its ``solver_cfg.kappa``). Otherwise iteration ``i`` runs with
    ``kappa_start`` moved towards ``kappa_end`` by ``t = min(i / iterations, 1)``: linearly, or geometrically
    (``kappa_start * (kappa_end / kappa_start) ** t``, even steps in log kappa). It reaches the solver through its
    runtime kappa array (``env.set_kappa``), so nothing is recompiled; with the hard or soft contact model kappa has
    no effect. Override as ``agent.kappa_schedule.kind=geometric agent.kappa_schedule.kappa_start=100.0``.
    """

    kappa_start: float = 200.0
    """kappa of the first iteration [1/m]."""

    kappa_end: float = 1000.0
    """kappa from iteration ``iterations`` on [1/m]."""

    iterations: int = 500
    """Iterations over which kappa moves from ``kappa_start`` to ``kappa_end``."""

    kind: Literal["off", "linear", "geometric"] = "off"
    """How kappa moves: ``off`` (no schedule), ``linear`` or ``geometric``."""

    @property
    def enabled(self) -> bool:
        return self.kind != "off"

    def value(self, iteration: int) -> float:
        """kappa of iteration ``iteration`` (0-based)."""
        t = min(max(iteration, 0) / self.iterations, 1.0)
        if self.kind == "linear":
            return self.kappa_start + t * (self.kappa_end - self.kappa_start)
        return self.kappa_start * (self.kappa_end / self.kappa_start) ** t

    def validate_values(self, prefix: str = "kappa_schedule") -> None:
        """Raise ValueError naming the field and its value for values that cannot work."""
        check(self, _KAPPA_SCHEDULE_RULES, prefix=f"{prefix}.")


@configclass
class ShacRunnerCfg:
    """Configuration of :class:`~isaaclab_diffsim.rl.shac.ShacRunner` (rollout loop, logging, checkpoints)."""

    class_name: str = "ShacRunner"
    """The runner class ``scripts/train.py`` builds (see :func:`~isaaclab_diffsim.rl.shac.resolve.resolve_class`).
    Defaults to ShacRunner."""

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
    """Appended to the run directory's time-stamped name (``<time>_<run_name>``) by ``scripts/train.py`` if not
    empty, as Isaac Lab's train script does."""

    logger: Literal["tensorboard"] = "tensorboard"
    """The logger to use. Only tensorboard (other values are refused by :meth:`validate_values`)."""

    resume: bool = False
    """Whether ``scripts/train.py`` resumes from a checkpoint found with ``load_run`` and ``load_checkpoint`` under
    ``<log_root>/shac/<experiment_name>`` (its ``--resume <file>`` names the file directly)."""

    load_run: str = ".*"
    """Run directory to resume from; regex, the latest matching run is taken (as in isaaclab_rl)."""

    load_checkpoint: str = "model_.*.pt"
    """Checkpoint file to resume from; regex, the latest matching file is taken (natural order, as in isaaclab_rl;
    ``model_<it>_interrupted.pt`` sorts after ``model_<it>.pt``)."""

    warm_start: str | None = None
    """A checkpoint of another task whose policy observation is the first part of this task's (the flat task's for
    the rough task): a fresh run's actor, critic and normaliser start from it, the extra inputs at zero weight
    (:meth:`ShacRunner.warm_start`). Ignored when resuming. None: fresh networks, or :attr:`warm_start_task`'s."""

    warm_start_task: str | None = None
    """A task (gymnasium id) that ``scripts/train.py`` trains first with SHAC when :attr:`warm_start` is None, in
    ``<log_dir>/warm_start`` (its registered defaults with this run's seed, device, ``--num_envs`` and ``agent.*``
    overrides), then warm starts from its final checkpoint: the rough task learns its gait on the flat task's plane.
    Resumed if interrupted, skipped once finished. None: no first stage."""

    warm_start_iterations: int | None = None
    """Iterations of the :attr:`warm_start_task` stage (None: that task's ``max_iterations``)."""

    warm_start_obs_stats: str = "unit"
    """Where the normaliser's entries for the extra inputs of a warm start (the rough task's height scan) start:
    ``"unit"``, mean 0 and variance 1; ``"first_obs"``, the mean and variance over the envs of this task's first
    observation. Either way they then merge with the source's sample count, which outweighs this run's samples for
    hundreds of iterations, so ``"unit"`` scales a scan of about 0.08 m spread down some tenfold against the
    source's inputs (:mod:`~isaaclab_diffsim.rl.shac.warm_start`)."""

    kappa_schedule: KappaScheduleCfg = KappaScheduleCfg()
    """The smoothed contact model's kappa over the iterations (off by default: the env's ``solver_cfg.kappa``). When
    on, it is set before each iteration's rollout, logged as ``Env/kappa`` and stored in checkpoints."""

    policy: ShacActorCriticCfg = ShacActorCriticCfg()
    """The actor-critic configuration."""

    algorithm: ShacAlgorithmCfg = ShacAlgorithmCfg()
    """The algorithm configuration."""

    def validate_values(self) -> None:
        """Raise ValueError naming the field and its value for values that cannot work (the runner calls it; train
        scripts call it after applying overrides)."""
        check(self, _RUNNER_RULES)
        self.kappa_schedule.validate_values("kappa_schedule")
        self.policy.validate_values("policy")
        self.algorithm.validate_values("algorithm")
