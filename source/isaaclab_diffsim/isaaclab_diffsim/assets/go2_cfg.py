"""Unitree Go2 as an Isaac Lab ``ArticulationCfg``: the locally converted USD with Isaac Lab's ``UNITREE_GO2_CFG``
DC motors and pose."""

from __future__ import annotations

from isaaclab.utils import replace
from isaaclab_assets.robots.unitree import UNITREE_GO2_CFG

from .usd_spawn import RobotUsdFileCfg

GO2_FOOT_COLLIDERS_EXPR = ".*_foot/sphere"
"""Shape labels (``DiffSimSolverCfg.collider_shapes_expr``) of the four foot spheres that the conversion adds
(``GO2_ROBOT_CFG.foot_sphere``: 0.022 m at each foot link's origin; the URDF's foot colliders are meshes)."""

GO2_DIFFSIM_CFG = replace(UNITREE_GO2_CFG, spawn=RobotUsdFileCfg(robot="go2", activate_contact_sensors=True))
"""Go2 (example-robot-data URDF converted to USD offline) with Isaac Lab's ``UNITREE_GO2_CFG`` otherwise: its DC
motors (PD 25/0.5; 23.7/45.43 N m and 30.1/15.7 rad/s for hip-thigh/calf), init state (0.4 m) and joint limits
factor. The differentiable task's ``GO2_ROBOT_CFG`` uses kp 40, kd 1 instead."""
