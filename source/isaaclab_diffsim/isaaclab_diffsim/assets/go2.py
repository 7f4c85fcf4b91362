"""Unitree Go2 from example-robot-data's ``go2_description`` (16.1 kg), for the differentiable tasks."""

from __future__ import annotations

from pathlib import Path

from .robot_cfg import DiffRobotCfg, FootSphereCfg
from .robot_usd import robot_usd_path

GO2_LEGS = ("FL", "FR", "RL", "RR")

GO2_ROBOT_CFG = DiffRobotCfg(
    name="go2",
    urdf_file="cmeel.prefix/share/example-robot-data/robots/go2_description/urdf/go2.urdf",
    legs=GO2_LEGS,
    foot_link="{leg}_foot",
    # the URDF's feet are meshes: a sphere at the *_foot link's origin (Go2's foot radius, about 2 cm)
    foot_sphere=FootSphereCfg(link="{leg}_foot", radius=0.022),
    default_joint_pos={
        **{f"{leg}_hip_joint": 0.1 if leg.endswith("L") else -0.1 for leg in GO2_LEGS},
        **{f"{leg}_thigh_joint": 0.8 if leg.startswith("F") else 1.0 for leg in GO2_LEGS},
        **{f"{leg}_calf_joint": -1.5 for leg in GO2_LEGS},
    },
    # Isaac Lab's UNITREE_GO2_CFG has kp 25: a trot generator folding two legs then sinks the base by 5 cm and trips
    # it; 40 carries it (the URDF's 23.7/45.43 N m and 30.1/15.7 rad/s limits still apply)
    kp=40.0,
    kd=1.0,  # Isaac Lab's 0.5 leaves a slow base rocking (about 2 cm) here after the drop; 1.0 settles
    actuator_saturation=0.0,  # hip/thigh and calf saturate differently (one envelope per model): effort limits only
    init_base_height=0.35,  # standing at the default pose is about 0.32 before it sags to 0.28
    min_base_height=0.15,
)
"""Unitree Go2 with Isaac Lab's ``UNITREE_GO2_CFG`` standing pose, stiffer drives."""


def go2_usd_path(cache_dir: str | Path | None = None, rebuild: bool = False) -> Path:
    """Go2's cached USD (17 bodies: base, 4 x hip/thigh/calf/foot; a ``foot_sphere`` collider ``<leg>_foot/sphere``
    added to each foot, whose URDF collider is a mesh)."""
    return robot_usd_path(GO2_ROBOT_CFG, cache_dir, rebuild)


GO2_ROBOT_CFG.usd_path = go2_usd_path
