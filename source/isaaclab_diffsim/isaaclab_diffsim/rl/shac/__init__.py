"""SHAC (short-horizon actor-critic) for differentiable environments, split like rsl_rl's PPO/OnPolicyRunner.

- :class:`SHAC` (``shac.py``): actor loss through the rollout, TD(lambda) critic, updates; where the critic fit runs
  (the caller, a worker thread or a forked process, ``critic_fit.py`` / ``critic_process.py``) is
  :class:`~.critic_fit.CriticFitWorker`'s.
- :class:`ShacActorCritic`, the observation normalisers and :class:`ShacInferencePolicy` (``modules/``).
- :class:`ShacRunner` (``runner.py``): rollout loop, checkpoints, export; :class:`ShacLogger` (``logger.py``):
  episode statistics, TensorBoard scalars and the console line.
- :class:`ShacRunnerCfg`, :class:`ShacAlgorithmCfg`, :class:`ShacActorCriticCfg` (``shac_cfg.py``); their
  ``class_name`` fields name the classes built (:func:`resolve_class`).
"""

from .logger import ShacLogger
from .modules import FrozenObsNormalizer, RunningObsNormalizer, ShacActorCritic, ShacInferencePolicy
from .resolve import resolve_class
from .runner import ShacRunner
from .shac import SHAC
from .shac_cfg import ShacActorCriticCfg, ShacAlgorithmCfg, ShacRunnerCfg

__all__ = [
    "SHAC",
    "FrozenObsNormalizer",
    "RunningObsNormalizer",
    "ShacActorCritic",
    "ShacActorCriticCfg",
    "ShacAlgorithmCfg",
    "ShacInferencePolicy",
    "ShacLogger",
    "ShacRunner",
    "ShacRunnerCfg",
    "resolve_class",
]
