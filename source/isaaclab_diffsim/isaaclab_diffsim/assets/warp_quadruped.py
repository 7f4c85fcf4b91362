"""The Warp/Newton example quadruped (``newton/examples/assets/quadruped.urdf``, 30.7 kg with its inertials): the
light robot of the paper's gradient-norm-against-horizon comparison."""

from __future__ import annotations

from .robot_cfg import DiffRobotCfg, FootSphereCfg

WARP_QUADRUPED_LEGS = ("LF", "RF", "LH", "RH")

WARP_QUADRUPED_ROBOT_CFG = DiffRobotCfg(
    name="warp_quadruped",
    urdf_distribution="newton",
    urdf_file="newton/examples/assets/quadruped.urdf",
    legs=WARP_QUADRUPED_LEGS,
    # the shanks are 0.25 m cylinders of radius 0.02 along -z: a sphere of that radius at the tip
    foot_sphere=FootSphereCfg(link="{leg}_SHANK", radius=0.02, center=(0.0, 0.0, -0.25)),
    # Newton's example pose pattern (left/right HFE axes mirrored), bent further to stand lower
    default_joint_pos={
        **{f"{leg}_HAA": 0.0 for leg in WARP_QUADRUPED_LEGS},
        **{f"{leg}_HFE": 0.6 if leg.startswith("L") else -0.6 for leg in WARP_QUADRUPED_LEGS},
        **{f"{leg}_KFE": -1.2 if leg.startswith("L") else 1.2 for leg in WARP_QUADRUPED_LEGS},
    },
    # its legs are heavy (6 kg of its 30.7): at kp 80 / kd 2 a trot generator folding two legs tips it over
    kp=150.0,
    kd=4.0,
    actuator_saturation=0.0,  # no motor model in the URDF: its 80 N m effort limit only
    init_base_height=0.45,
    min_base_height=0.2,
)
"""The Warp quadruped with a bent standing pose and stiff PD drives."""
