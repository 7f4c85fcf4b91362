"""How much a SHAC policy reads its height scan: the first layers' weights on the scan's inputs against those on the
flat-MDP inputs, from a checkpoint's state (no env is built)."""

from __future__ import annotations

from ..terrains.height_scan import grid_pattern

SCAN_WEIGHT_FIELDS = (
    "actor_flat_norm",
    "actor_scan_norm",
    "critic_flat_norm",
    "critic_scan_norm",
    "scan_std",
    "actor_scan_per_m",
)
"""The record's measures: the mean over the inputs of a group (flat-MDP terms, scan points) of the first layer's
column norm ||W[:, j]||, actor and critic; the mean of the normaliser's std over the scan entries [m]; the mean of
||W[:, j]|| / std_j over the scan entries, the actor's first-layer response to 1 m of one scan point."""


def scan_columns(env_cfg: dict) -> slice:
    """The scan's entries of the observation from a checkpoint's ``env_cfg``: after the ``observation_space``
    flat-MDP terms, one per point of the ``height_scan`` grid; ValueError without a scan."""
    scan = env_cfg.get("height_scan")
    if not scan:
        raise ValueError("the checkpoint's env_cfg has no height_scan: the policy observes no scan")
    start = int(env_cfg["observation_space"])
    return slice(start, start + len(grid_pattern(tuple(scan["size"]), float(scan["resolution"]))))


def scan_weight_record(state: dict) -> dict:
    """:data:`SCAN_WEIGHT_FIELDS` of a SHAC checkpoint ``state`` (``model_state_dict`` with ``actor.0.weight`` and
    ``critic.0.weight``, ``obs_normalizer_state_dict``, ``env_cfg``)."""
    cols = scan_columns(state["env_cfg"])
    model = state["model_state_dict"]
    actor, critic = model["actor.0.weight"].double(), model["critic.0.weight"].double()
    if actor.shape[1] < cols.stop:
        raise ValueError(f"actor.0.weight has {actor.shape[1]} inputs, the scan ends at input {cols.stop}")
    std = state["obs_normalizer_state_dict"]["var"].double().sqrt()[cols]
    a, c = actor.norm(dim=0), critic.norm(dim=0)
    return {
        "actor_flat_norm": float(a[: cols.start].mean()),
        "actor_scan_norm": float(a[cols].mean()),
        "critic_flat_norm": float(c[: cols.start].mean()),
        "critic_scan_norm": float(c[cols].mean()),
        "scan_std": float(std.mean()),
        "actor_scan_per_m": float((a[cols] / std).mean()),
    }
