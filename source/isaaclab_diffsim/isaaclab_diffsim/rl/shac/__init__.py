"""SHAC (short-horizon actor-critic) for differentiable environments, split like rsl_rl's PPO/OnPolicyRunner.

- :class:`SHAC` (``shac.py``): networks, actor loss through the rollout, TD(lambda) critic, updates.
- :class:`ShacRunner` (``runner.py``): rollout loop, TensorBoard/console logging, checkpoints, export.
- :class:`ShacRunnerCfg`, :class:`ShacAlgorithmCfg`, :class:`ShacActorCriticCfg` (``shac_cfg.py``).
"""

from .runner import ShacRunner
from .shac import SHAC, FrozenObsNormalizer, RunningObsNormalizer, ShacActorCritic, ShacInferencePolicy
from .shac_cfg import ShacActorCriticCfg, ShacAlgorithmCfg, ShacRunnerCfg

__all__ = [
    "SHAC",
    "FrozenObsNormalizer",
    "RunningObsNormalizer",
    "ShacActorCritic",
    "ShacActorCriticCfg",
    "ShacAlgorithmCfg",
    "ShacInferencePolicy",
    "ShacRunner",
    "ShacRunnerCfg",
]
