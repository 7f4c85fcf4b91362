"""ANYmal C as an Isaac Lab ``ArticulationCfg``: the locally converted USD, ANYdrive DC motors, standing pose."""

from __future__ import annotations

from isaaclab.assets.articulation import ArticulationCfg
from isaaclab.utils import configclass
from isaaclab_assets.robots.anymal import ANYDRIVE_3_SIMPLE_ACTUATOR_CFG

from .anymal_c import ANYMAL_C_BASE_HEIGHT, ANYMAL_C_DEFAULT_JOINT_POS
from .usd_spawn import RobotUsdFileCfg


@configclass
class AnymalCUsdFileCfg(RobotUsdFileCfg):
    """``UsdFileCfg`` whose file (``anymal_c_usd_path()``) is resolved when spawned: the cache is built then, not at
    import."""

    robot: str = "anymal_c"


ANYMAL_C_FOOT_COLLIDERS_EXPR = ".*_FOOT/sphere"
"""Shape labels (``DiffSimSolverCfg.collider_shapes_expr``) of the four foot spheres: the paper's one contact point
per foot, the only shapes that collide under the DiffSim presets."""

ANYMAL_C_DIFFSIM_CFG = ArticulationCfg(
    spawn=AnymalCUsdFileCfg(activate_contact_sensors=True),
    init_state=ArticulationCfg.InitialStateCfg(
        pos=(0.0, 0.0, ANYMAL_C_BASE_HEIGHT), joint_pos=dict(ANYMAL_C_DEFAULT_JOINT_POS)
    ),
    # ANYdrive 3 as a DC motor: PD 40/5, 120 N m at stall to 0 at 7.5 rad/s, 80 N m continuous
    actuators={"legs": ANYDRIVE_3_SIMPLE_ACTUATOR_CFG},
    soft_joint_pos_limit_factor=0.95,
)
"""ANYmal C (example-robot-data URDF converted to USD offline) with Isaac Lab's standing pose and DC motors."""
