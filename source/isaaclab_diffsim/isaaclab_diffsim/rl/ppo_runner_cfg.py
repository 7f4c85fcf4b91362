"""rsl_rl's runner cfg with this project's PPO additions."""

from __future__ import annotations

from isaaclab.utils import configclass
from isaaclab_rl.rsl_rl import RslRlOnPolicyRunnerCfg


@configclass
class DiffPpoRunnerCfg(RslRlOnPolicyRunnerCfg):
    """:class:`isaaclab_rl.rsl_rl.RslRlOnPolicyRunnerCfg` plus ``warm_start``."""

    warm_start: str | None = None
    """A SHAC checkpoint to continue with PPO: the actor and critic become the checkpoint's networks (LayerNorm MLPs,
    SHAC's observation statistics frozen, tanh-squashed actions) and start from its weights and log-std
    (:mod:`isaaclab_diffsim.rl.ppo_warm_start`). None: rsl_rl's fresh networks."""
