"""Start a SHAC run from another task's networks whose observation is the first part of this task's (a flat policy
on the rough task, whose height scan follows the flat terms): the extra inputs get zero weights, so the started
policy acts as the source policy did. The normaliser's extra entries start at mean 0, variance 1, or at the moments of
this task's first observation (:func:`first_observation_stats`)."""

from __future__ import annotations

import torch

from .modules.normalization import batch_moments

NETWORK_KEYS = ("model_state_dict", "target_critic_state_dict")

WARM_START_OBS_STATS = ("unit", "first_obs")
"""Values of ``ShacRunnerCfg.warm_start_obs_stats``: where the normaliser's extra entries start."""


def widened_state(source: dict, target: dict, source_obs: int, target_obs: int) -> dict:
    """The networks and normaliser of checkpoint ``source`` (``source_obs`` observations) in the shapes of
    ``target`` (``target_obs``, the state dicts of the runner being started, same keys): every tensor is copied,
    an input layer (``[hidden, source_obs]``) gets zero columns for the extra observations, the normaliser's
    ``mean`` / ``var`` get 0 / 1 for them. Raises ValueError naming the first tensor that fits neither way."""
    if not 0 < source_obs <= target_obs:
        raise ValueError(f"warm start: the source's {source_obs} observations must be at most this task's {target_obs}")
    out = {}
    for part in (*NETWORK_KEYS, "obs_normalizer_state_dict"):
        src, tgt = source.get(part), target.get(part)
        if tgt is None:
            continue
        if src is None:
            raise ValueError(f"warm start: the checkpoint has no {part}")
        if set(src) != set(tgt):
            missing = sorted(set(tgt) ^ set(src))
            raise ValueError(f"warm start: {part} differs in its entries ({missing[:3]}): another network layout")
        out[part] = {k: _widened(f"{part}.{k}", src[k], tgt[k], source_obs, target_obs) for k in tgt}
    return out


def source_observations(source: dict, target: dict, target_obs: int) -> int:
    """The observation size of checkpoint ``source``: the input width of its layer where ``target`` takes
    ``target_obs`` inputs."""
    for key, tensor in target["model_state_dict"].items():
        if tensor.ndim == 2 and tensor.shape[1] == target_obs and key in source["model_state_dict"]:
            return int(source["model_state_dict"][key].shape[1])
    raise ValueError("warm start: no input layer found in this runner's networks")


def _widened(name: str, src: torch.Tensor, tgt: torch.Tensor, source_obs: int, target_obs: int) -> torch.Tensor:
    if src.shape == tgt.shape:
        return src.to(tgt).clone()
    extra = target_obs - source_obs
    if src.ndim == 2 and src.shape[0] == tgt.shape[0] and (src.shape[1], tgt.shape[1]) == (source_obs, target_obs):
        return torch.cat([src.to(tgt), torch.zeros(src.shape[0], extra, dtype=tgt.dtype, device=tgt.device)], 1)
    if src.ndim == 1 and (src.shape[0], tgt.shape[0]) == (source_obs, target_obs) and name.endswith(("mean", "var")):
        fill = torch.zeros if name.endswith("mean") else torch.ones
        return torch.cat([src.to(tgt), fill(extra, dtype=tgt.dtype, device=tgt.device)])
    raise ValueError(
        f"warm start: {name} has shape {tuple(src.shape)} in the checkpoint, {tuple(tgt.shape)} here "
        "(only the input layer and the normaliser may grow with the observation)"
    )


def first_observation_stats(normalizer_state: dict, obs: torch.Tensor, source_obs: int) -> dict:
    """``normalizer_state`` (a widened normaliser's ``mean`` / ``var`` / ``count``) with the entries after the first
    ``source_obs`` set to the mean and population variance of ``obs`` (``[envs, obs]``, finite rows) over the envs.

    The count stays the source's: a running merge (``m2 = var * count + ...``) weighs the started statistics by it,
    and the source's count is that of every sample it saw, so entries left at 0 / 1 would stay near 1 for as many
    samples again, dividing an input of spread s by about 1 where its own statistics divide by s."""
    d = normalizer_state["mean"].shape[0]
    moments = batch_moments(obs, d)
    if float(moments[0]) == 0:
        raise ValueError("warm start: the task's first observation has no finite row to start the normaliser from")
    out = {k: v.clone() for k, v in normalizer_state.items()}
    out["mean"][source_obs:] = moments[1 + source_obs : 1 + d].to(out["mean"])
    out["var"][source_obs:] = moments[1 + d + source_obs :].to(out["var"])
    return out
