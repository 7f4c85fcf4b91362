"""rsl_rl PPO configuration of DiffSim-Velocity-Flat-AnymalC-Direct: the baseline SHAC is compared with.

Mirrors Isaac Lab's own ANYmal C flat PPO configuration (``isaaclab_tasks.contrib.velocity.config.anymal_c.agents.
rsl_rl_ppo_cfg.AnymalCFlatPPORunnerCfg``: 24 steps per env, 300 iterations, [128, 128, 128] ELU actor and critic,
adaptive learning rate from 1e-3 with a KL target of 0.01, ...), in the rsl-rl-lib >= 5 model-config form
(``actor``/``critic`` with ``distribution_cfg``; no deprecated ``policy`` block), so
:func:`isaaclab_rl.rsl_rl.handle_deprecated_rsl_rl_cfg` has nothing to migrate.

Differences from Isaac Lab's config, and why:

- ``device = "cpu"``: this project trains on CPU by default. The agent device should follow the env device; scripts
  set ``agent_cfg.device = env_cfg.device`` (Isaac Lab does the same from ``env_cfg.sim.device``).
- ``experiment_name = "anymal_c_flat_diffsim"``.

Use with :class:`isaaclab_diffsim.envs.rsl_rl_wrapper.DiffEnvRslRlWrapper`, which provides the ``"policy"``
observation group named in ``obs_groups``.
"""

from isaaclab.utils import configclass
from isaaclab_rl.rsl_rl import RslRlMLPModelCfg, RslRlPpoAlgorithmCfg

from isaaclab_diffsim.rl.ppo_runner_cfg import DiffPpoRunnerCfg


@configclass
class AnymalCFlatDiffPPORunnerCfg(DiffPpoRunnerCfg):
    """PPO on the differentiable ANYmal C flat env (same MDP and dynamics as SHAC, stepped without a graph)."""

    seed = 42
    device = "cpu"
    num_steps_per_env = 24
    max_iterations = 300
    save_interval = 50
    experiment_name = "anymal_c_flat_diffsim"
    obs_groups = {"actor": ["policy"], "critic": ["policy"]}
    clip_actions = None
    actor = RslRlMLPModelCfg(
        hidden_dims=[128, 128, 128],
        activation="elu",
        obs_normalization=False,
        distribution_cfg=RslRlMLPModelCfg.GaussianDistributionCfg(init_std=1.0),
    )
    critic = RslRlMLPModelCfg(
        hidden_dims=[128, 128, 128],
        activation="elu",
        obs_normalization=False,
    )
    algorithm = RslRlPpoAlgorithmCfg(
        value_loss_coef=1.0,
        use_clipped_value_loss=True,
        clip_param=0.2,
        entropy_coef=0.005,
        num_learning_epochs=5,
        num_mini_batches=4,
        learning_rate=1.0e-3,
        schedule="adaptive",
        gamma=0.99,
        lam=0.95,
        desired_kl=0.01,
        max_grad_norm=1.0,
    )


@configclass
class AnymalCRoughDiffPPORunnerCfg(AnymalCFlatDiffPPORunnerCfg):
    """PPO on the rough task: the flat configuration with Isaac Lab's rough ANYmal C networks ([512, 256, 128]) and
    its own experiment folder."""

    experiment_name = "anymal_c_rough_diffsim"
    actor = AnymalCFlatDiffPPORunnerCfg().actor.replace(hidden_dims=[512, 256, 128])
    critic = AnymalCFlatDiffPPORunnerCfg().critic.replace(hidden_dims=[512, 256, 128])


@configclass
class AnymalCFlatTrotDiffPPORunnerCfg(AnymalCFlatDiffPPORunnerCfg):
    """The flat task's PPO configuration on the trot-generator task (its own experiment folder)."""

    experiment_name = "anymal_c_flat_trot_diffsim"


@configclass
class AnymalCRoughTrotDiffPPORunnerCfg(AnymalCRoughDiffPPORunnerCfg):
    """The rough task's PPO configuration on the rough trot task (its own experiment folder)."""

    experiment_name = "anymal_c_rough_trot_diffsim"
