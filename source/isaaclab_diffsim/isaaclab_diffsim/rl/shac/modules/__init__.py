"""Networks of SHAC: MLPs, observation normalisers, the actor-critic and the deterministic inference policy."""

from .actor_critic import ShacActorCritic
from .inference import ShacInferencePolicy
from .mlp import build_mlp
from .normalization import FrozenObsNormalizer, RunningObsNormalizer

__all__ = ["FrozenObsNormalizer", "RunningObsNormalizer", "ShacActorCritic", "ShacInferencePolicy", "build_mlp"]
