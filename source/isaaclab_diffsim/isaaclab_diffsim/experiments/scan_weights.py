"""How much a SHAC policy reads its height scan: the first layers' weights on the scan's inputs against those on the
flat-MDP inputs, and how consistent the actor's gradient on them was, from a checkpoint's state (no env is built)."""

from __future__ import annotations

import torch

from ..terrains.height_scan import grid_pattern

SCAN_WEIGHT_FIELDS = (
    "actor_flat_norm",
    "actor_scan_norm",
    "critic_flat_norm",
    "critic_scan_norm",
    "scan_std",
    "actor_scan_per_m",
    "actor_flat_grad_snr",
    "actor_scan_grad_snr",
)
"""The record's measures: the mean over the inputs of a group (flat-MDP terms, scan points) of the first layer's
column norm ||W[:, j]||, actor and critic; the mean of the normaliser's std over the scan entries [m]; the mean of
||W[:, j]|| / std_j over the scan entries, the actor's first-layer response to 1 m of one scan point; the mean over
the actor's first-layer weights of a group of :func:`adam_grad_snr`."""


def scan_columns(env_cfg: dict) -> slice:
    """The scan's entries of the observation from a checkpoint's ``env_cfg``: after the ``observation_space``
    flat-MDP terms, one per point of the ``height_scan`` grid; ValueError without a scan."""
    scan = env_cfg.get("height_scan")
    if not scan:
        raise ValueError("the checkpoint's env_cfg has no height_scan: the policy observes no scan")
    start = int(env_cfg["observation_space"])
    return slice(start, start + len(grid_pattern(tuple(scan["size"]), float(scan["resolution"]))))


def input_groups(env_cfg: dict, num_obs: int) -> dict[str, slice]:
    """The actor's input groups: the flat-MDP terms, the scan and whatever follows it (when present)."""
    try:
        scan = scan_columns(env_cfg)
    except ValueError:
        return {"flat": slice(0, num_obs)}
    groups = {"flat": slice(0, scan.start), "scan": scan}
    if scan.stop < num_obs:
        groups["after_scan"] = slice(scan.stop, num_obs)
    return groups


def adam_grad_snr(optimizer_state: dict, shape: tuple) -> torch.Tensor:
    """|m| / sqrt(v) per weight of the first parameter of an Adam ``optimizer_state`` (a ``state_dict()``), m and v
    the bias-corrected moments (Kingma & Ba 2015, Alg. 1): the gradient's mean over Adam's recent steps against its
    root mean square. 1 for a gradient that keeps its value; about sqrt((1 - b1) / (1 + b1)) sqrt(2 / pi) (0.33 at
    SHAC's b1 0.7) for independent zero-mean Gaussian ones, less for heavy-tailed ones. ValueError when that
    parameter's moments are not of ``shape``."""
    group = optimizer_state["param_groups"][0]
    b1, b2 = group["betas"]
    moments = optimizer_state["state"].get(group["params"][0])
    if moments is None or tuple(moments["exp_avg"].shape) != tuple(shape):
        found = None if moments is None else tuple(moments["exp_avg"].shape)
        raise ValueError(f"the actor optimizer's first parameter has moments of shape {found}, not {tuple(shape)}")
    t = float(moments["step"])
    m = moments["exp_avg"].double() / (1 - b1**t)
    v = moments["exp_avg_sq"].double() / (1 - b2**t)
    return m.abs() / v.sqrt().clamp_min(1e-30)


def scan_weight_record(state: dict) -> dict:
    """:data:`SCAN_WEIGHT_FIELDS` of a SHAC checkpoint ``state`` (``model_state_dict`` with ``actor.0.weight`` and
    ``critic.0.weight``, ``obs_normalizer_state_dict``, ``actor_optimizer_state_dict`` whose first parameter is
    ``actor.0.weight``, ``env_cfg``)."""
    cols = scan_columns(state["env_cfg"])
    model = state["model_state_dict"]
    actor, critic = model["actor.0.weight"].double(), model["critic.0.weight"].double()
    if actor.shape[1] < cols.stop:
        raise ValueError(f"actor.0.weight has {actor.shape[1]} inputs, the scan ends at input {cols.stop}")
    std = state["obs_normalizer_state_dict"]["var"].double().sqrt()[cols]
    a, c = actor.norm(dim=0), critic.norm(dim=0)
    snr = adam_grad_snr(state["actor_optimizer_state_dict"], tuple(actor.shape))
    return {
        "actor_flat_norm": float(a[: cols.start].mean()),
        "actor_scan_norm": float(a[cols].mean()),
        "critic_flat_norm": float(c[: cols.start].mean()),
        "critic_scan_norm": float(c[cols].mean()),
        "scan_std": float(std.mean()),
        "actor_scan_per_m": float((a[cols] / std).mean()),
        "actor_flat_grad_snr": float(snr[:, : cols.start].mean()),
        "actor_scan_grad_snr": float(snr[:, cols].mean()),
    }
