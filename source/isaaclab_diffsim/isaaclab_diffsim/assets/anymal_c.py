"""ANYmal C for Newton builders, from the URDF shipped in the ``example-robot-data`` package.

Only the URDF's inertials count (shape density 0), and only the four foot spheres collide.
"""

from __future__ import annotations

from pathlib import Path

import newton

from .anymal_c_urdf import _URDF_REL, LEGS, anymal_c_urdf_path
from .anymal_c_usd import anymal_c_usd_path
from .robot_builder import add_robot, build_robot_model
from .robot_cfg import DiffRobotCfg
from .robot_layout import RobotLayout

__all__ = [
    "ANYMAL_C_BASE_HEIGHT",
    "ANYMAL_C_DEFAULT_JOINT_POS",
    "ANYMAL_C_ROBOT_CFG",
    "LEGS",
    "add_anymal_c",
    "anymal_c_urdf_path",
    "build_anymal_c_model",
]

ANYMAL_C_BASE_HEIGHT = 0.6
"""Initial base height [m] (Isaac Lab's ANYmal init pos z)."""

ANYMAL_C_DEFAULT_JOINT_POS: dict[str, float] = {
    **{f"{leg}_HAA": 0.0 for leg in LEGS},
    "LF_HFE": 0.4,
    "RF_HFE": 0.4,
    "LH_HFE": -0.4,
    "RH_HFE": -0.4,
    "LF_KFE": -0.8,
    "RF_KFE": -0.8,
    "LH_KFE": 0.8,
    "RH_KFE": 0.8,
}
"""Isaac Lab's ANYmal standing pose [rad], by URDF joint name."""

ANYMAL_C_ROBOT_CFG = DiffRobotCfg(
    name="anymal_c",
    urdf_file=str(Path("cmeel.prefix") / _URDF_REL),
    asset_sources=("urdf", "usd", "isaaclab"),
    isaaclab_scene="isaaclab_diffsim.tasks.direct.locomotion.velocity.config.anymal_c.scene_model:AnymalCScene",
    usd_path=anymal_c_usd_path,
    legs=LEGS,
    foot_body="{leg}_SHANK",  # the URDF's *_FOOT (with its 0.03 m sphere) is merged into the shank
    default_joint_pos=ANYMAL_C_DEFAULT_JOINT_POS,
    kp=40.0,  # ANYdrive 3 as a DC motor (Isaac Lab's ANYDRIVE_3_SIMPLE_ACTUATOR_CFG): PD 40/5, 120 N m at stall
    kd=5.0,
    actuator_saturation=120.0,
    init_base_height=ANYMAL_C_BASE_HEIGHT,
    min_base_height=0.3,
)
"""ANYmal C (example-robot-data's ``anymal_c_simple_description``, 52 kg): Isaac Lab's pose, ANYdrive PD and
envelope, the URDF's 80 N m effort and 7.5 rad/s speed limits."""


def add_anymal_c(
    builder: newton.ModelBuilder, xform=None, *, kp=40.0, kd=5.0, foot_radius=None, source: str = "urdf"
) -> dict:
    """Add one floating-base ANYmal C to ``builder`` (:func:`~.robot_builder.add_robot` with
    :data:`ANYMAL_C_ROBOT_CFG`): 13 bodies, 18 dofs, 19 coordinates. ``source="usd"`` imports the cached USD that
    Isaac Lab scenes spawn (same bodies, joints and masses). Returns indices, feet ordered LF, RF, LH, RH."""
    return add_robot(builder, ANYMAL_C_ROBOT_CFG, xform, kp=kp, kd=kd, foot_radius=foot_radius, source=source)


def build_anymal_c_model(
    num_worlds=1,
    device="cpu",
    *,
    kp=40.0,
    kd=5.0,
    base_height=0.6,
    requires_grad=False,
    ground_mu=1.0,
    source: str = "urdf",
) -> tuple[newton.Model, RobotLayout]:
    """Finalize ``num_worlds`` ANYmal C worlds plus one shared ground plane (the model's last shape); body_q set by
    FK. Returns the model and its :class:`RobotLayout` (feet LF, RF, LH, RH)."""
    return build_robot_model(
        ANYMAL_C_ROBOT_CFG,
        num_worlds,
        device,
        kp=kp,
        kd=kd,
        base_height=base_height,
        requires_grad=requires_grad,
        ground_mu=ground_mu,
        source=source,
    )
