"""rsl_rl PPO started from a SHAC checkpoint (``agent.warm_start``), and PPO checkpoints that carry their networks.

:func:`shac_shaped_models` turns the PPO agent cfg's ``actor``/``critic`` into the SHAC checkpoint's networks
(:mod:`.shac_shaped_models`); :func:`load_shac_weights` copies the actor, critic, log-std and observation statistics
into the built PPO models, after which the PPO policy's deterministic action equals the SHAC policy's. Every PPO
checkpoint stores its agent cfg, and :func:`checkpoint_models` puts its ``actor``/``critic`` blocks back into the cfg
a checkpoint is loaded with (a fine-tuned policy loads with the registered task's agent cfg).
"""

from __future__ import annotations

import math

import torch

from .checkpoints import checkpoint_error, load_checkpoint

MODULE = "isaaclab_diffsim.rl.shac_shaped_models"
MODEL_CLASS = f"{MODULE}:ShacShapedMLPModel"
DISTRIBUTION_CLASS = f"{MODULE}:SquashedGaussianDistribution"
MODEL_FIELDS = ("class_name", "hidden_dims", "activation", "obs_normalization", "distribution_cfg")
"""The fields of an rsl_rl MLP model cfg that decide its parameters."""


def load_shac_checkpoint(path: str) -> dict:
    """The SHAC checkpoint at ``path`` (CheckpointError if it is not one or its networks cannot be continued by PPO:
    rsl_rl's models here take SHAC's LayerNorm MLPs, its observation normaliser unclipped, and tanh-squashed
    actions)."""
    from .shac import ShacRunner

    state = load_checkpoint(path, ShacRunner.CHECKPOINT_KEYS, "SHAC", map_location="cpu")
    policy = (state.get("cfg") or {}).get("policy")
    if not isinstance(policy, dict):
        raise checkpoint_error(path, "has no SHAC policy cfg (cfg['policy']) to rebuild its networks from")
    for key, wanted in (("layer_norm", True), ("squash_actions", True), ("obs_norm_clip", None)):
        if policy.get(key) != wanted:
            raise checkpoint_error(
                path, f"policy.{key}={policy.get(key)!r}: a PPO warm start takes SHAC's networks with {key}={wanted}"
            )
    return state


def shac_shaped_models(agent_cfg, shac_state: dict) -> None:
    """Set ``agent_cfg.actor`` and ``agent_cfg.critic`` (rsl_rl model cfgs) to the SHAC checkpoint's networks."""
    policy = shac_state["cfg"]["policy"]
    normalized = bool(policy["obs_normalization"]) and shac_state.get("obs_normalizer_state_dict") is not None
    log_std = shac_state["model_state_dict"]["log_std"]
    low, high = (float(x) for x in policy["log_std_range"])
    dist = agent_cfg.actor.distribution_cfg
    if dist is None:
        raise ValueError("agent.actor.distribution_cfg is None: PPO's actor needs a Gaussian distribution")
    dist.class_name = DISTRIBUTION_CLASS
    dist.std_type = "log"
    dist.init_std = float(log_std.clamp(low, high).exp().mean())  # overwritten per action by load_shac_weights
    dist.std_range = (math.exp(low), math.exp(high))
    for model, key in ((agent_cfg.actor, "actor_hidden_dims"), (agent_cfg.critic, "critic_hidden_dims")):
        model.class_name = MODEL_CLASS
        model.hidden_dims = list(policy[key])
        model.activation = str(policy["activation"])
        model.obs_normalization = normalized


@torch.no_grad()
def load_shac_weights(alg, shac_state: dict, path: str) -> None:
    """Copy the SHAC checkpoint's (``path``) actor, critic, log-std and observation statistics into rsl_rl PPO's
    models (built from :func:`shac_shaped_models`); CheckpointError if its observations or actions are not this
    task's."""
    from .shac.modules.normalization import RunningObsNormalizer

    model = shac_state["model_state_dict"]
    obs, actions = model["actor.0.weight"].shape[1], model["log_std"].shape[0]
    if (obs, actions) != (alg.actor.obs_dim, alg.actor.distribution.output_dim):
        raise checkpoint_error(
            path,
            f"its policy maps {obs} observations to {actions} actions; this task's PPO maps"
            f" {alg.actor.obs_dim} to {alg.actor.distribution.output_dim} (a warm start continues the same task)",
        )
    norm = shac_state.get("obs_normalizer_state_dict")
    stats = None
    if norm is not None:
        running = RunningObsNormalizer(norm["mean"].shape[0])
        running.load_state_dict(norm)
        stats = running.snapshot()  # SHAC's float32 (mean, std)
    for name, net in (("actor", alg.actor), ("critic", alg.critic)):
        prefix = name + "."
        net.mlp.load_state_dict({k[len(prefix) :]: v for k, v in model.items() if k.startswith(prefix)})
        if net.obs_normalization:
            net.obs_normalizer.mean.copy_(stats[0])
            net.obs_normalizer.std.copy_(stats[1])
    alg.actor.distribution.log_std_param.copy_(model["log_std"])


def checkpoint_models(agent_cfg, ppo_state: dict) -> None:
    """Put the networks a PPO checkpoint was trained with (its stored agent cfg's ``actor``/``critic`` blocks) into
    ``agent_cfg``, which then builds models the checkpoint's weights fit."""
    from isaaclab.utils import update_class_from_dict

    saved = ppo_state.get("cfg") or {}
    for name in ("actor", "critic"):
        block = saved.get(name)
        if isinstance(block, dict) and block.get("class_name") == MODEL_CLASS:
            update_class_from_dict(getattr(agent_cfg, name), {k: block[k] for k in MODEL_FIELDS if k in block})
