"""ANYmal B as an Isaac Lab ``ArticulationCfg``: the locally converted USD, ANYdrive PD drives, Isaac Lab's pose."""

from __future__ import annotations

from isaaclab.actuators import ImplicitActuatorCfg
from isaaclab.utils import replace
from isaaclab_assets.robots.anymal import ANYDRIVE_3_SIMPLE_ACTUATOR_CFG as _ANYDRIVE
from isaaclab_assets.robots.anymal import ANYMAL_B_CFG

from .usd_spawn import RobotUsdFileCfg

ANYMAL_B_FOOT_COLLIDERS_EXPR = ".*_FOOT/sphere"
"""Shape labels (``DiffSimSolverCfg.collider_shapes_expr``) of the four foot spheres (the URDF's, 0.031 m)."""

ANYMAL_B_ACTUATOR_SATURATION = _ANYDRIVE.saturation_effort
"""ANYdrive's stall torque (120 N m) for ``DiffSimSolverCfg.actuator_saturation``: with it the solver bounds the
implicit drives by the DC motor's torque-speed envelope."""

ANYMAL_B_DIFFSIM_CFG = replace(
    ANYMAL_B_CFG,
    spawn=RobotUsdFileCfg(robot="anymal_b", activate_contact_sensors=True),
    # Isaac Lab's actuator net has its weights on the asset server. Isaac Lab's ANYdrive DC motor (PD 40/5, 80 N m,
    # 7.5 rad/s) computes its torque explicitly, and its damping is unstable on ANYmal B's light shanks at the 5 ms
    # physics step (stable up to kd 3.5 here): the same PD as an implicit drive, the envelope from the solver.
    actuators={
        "legs": ImplicitActuatorCfg(
            joint_names_expr=_ANYDRIVE.joint_names_expr,
            stiffness=_ANYDRIVE.stiffness,
            damping=_ANYDRIVE.damping,
            effort_limit_sim=_ANYDRIVE.actuator_effort_limit,
            velocity_limit_sim=_ANYDRIVE.actuator_velocity_limit,
        )
    },
)
"""ANYmal B (example-robot-data URDF converted to USD offline) with Isaac Lab's ``ANYMAL_B_CFG`` init state and joint
limits factor, and ANYdrive PD drives."""
