"""ANYmal B from example-robot-data's ``anymal_b_simple_description`` (30.5 kg), for the differentiable tasks."""

from __future__ import annotations

from pathlib import Path

from .robot_cfg import DiffRobotCfg
from .robot_usd import robot_usd_path

ANYMAL_B_LEGS = ("LF", "RF", "LH", "RH")

ANYMAL_B_ROBOT_CFG = DiffRobotCfg(
    name="anymal_b",
    urdf_file="cmeel.prefix/share/example-robot-data/robots/anymal_b_simple_description/robots/anymal.urdf",
    legs=ANYMAL_B_LEGS,
    foot_body="{leg}_SHANK",  # *_ADAPTER and *_FOOT (with its 0.031 m sphere) are merged into the shank
    default_joint_pos={
        **{f"{leg}_HAA": 0.0 for leg in ANYMAL_B_LEGS},
        **{f"{leg}_HFE": 0.4 if leg.endswith("F") else -0.4 for leg in ANYMAL_B_LEGS},
        **{f"{leg}_KFE": -0.8 if leg.endswith("F") else 0.8 for leg in ANYMAL_B_LEGS},
    },
    kp=40.0,  # ANYdrive as a DC motor, as ANYmal C: PD 40/5, 120 N m at stall; the URDF's 80 N m and 15 rad/s
    kd=5.0,
    actuator_saturation=120.0,
    init_base_height=0.6,
    min_base_height=0.3,
)
"""ANYmal B with Isaac Lab's ``ANYMAL_B_CFG`` standing pose and init height."""


def anymal_b_usd_path(cache_dir: str | Path | None = None, rebuild: bool = False) -> Path:
    """ANYmal B's cached USD (17 bodies: base, 4 x HIP/THIGH/SHANK/FOOT; the URDF's foot spheres on the feet)."""
    return robot_usd_path(ANYMAL_B_ROBOT_CFG, cache_dir, rebuild)


ANYMAL_B_ROBOT_CFG.usd_path = anymal_b_usd_path
