"""``RobotUsdFileCfg``: an Isaac Lab ``UsdFileCfg`` that spawns one of :data:`~.robots.ROBOTS`' locally converted
USD files, resolved (and converted on first use) when spawned, not at import."""

from __future__ import annotations

from dataclasses import MISSING

import isaaclab.sim as sim_utils
from isaaclab.utils import configclass

from .robots import ROBOTS


def spawn_robot_usd(prim_path: str, cfg: RobotUsdFileCfg, *args, **kwargs):
    """Spawn ``ROBOTS[cfg.robot].usd_path()`` like ``spawn_from_usd`` (unless ``cfg.usd_path`` is given)."""
    if not cfg.usd_path:
        robot = ROBOTS[cfg.robot]
        if robot.usd_path is None:
            raise ValueError(f"robot {cfg.robot!r} has no USD (DiffRobotCfg.usd_path is None)")
        cfg.usd_path = str(robot.usd_path())
    return sim_utils.spawn_from_usd(prim_path, cfg, *args, **kwargs)


@configclass
class RobotUsdFileCfg(sim_utils.UsdFileCfg):
    """``UsdFileCfg`` of a robot's cached USD, by ``ROBOTS`` name."""

    func: callable = spawn_robot_usd
    usd_path: str = ""
    robot: str = MISSING
    """``ROBOTS`` key, e.g. ``"go2"``."""
