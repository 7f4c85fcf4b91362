"""The robots the differentiable tasks know, by name."""

from __future__ import annotations

from .anymal_b import ANYMAL_B_ROBOT_CFG
from .anymal_c import ANYMAL_C_ROBOT_CFG
from .go2 import GO2_ROBOT_CFG
from .robot_cfg import DiffRobotCfg
from .warp_quadruped import WARP_QUADRUPED_ROBOT_CFG

ROBOTS: dict[str, DiffRobotCfg] = {
    cfg.name: cfg for cfg in (ANYMAL_C_ROBOT_CFG, ANYMAL_B_ROBOT_CFG, GO2_ROBOT_CFG, WARP_QUADRUPED_ROBOT_CFG)
}


def robot_cfg(name: str) -> DiffRobotCfg:
    """A copy of the named robot's config; ValueError naming the known robots otherwise."""
    if name not in ROBOTS:
        raise ValueError(f"unknown robot {name!r}; known robots: {sorted(ROBOTS)}")
    return ROBOTS[name].copy()
