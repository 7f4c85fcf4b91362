"""Robot assets built from locally installed descriptions (no downloads), for Newton builders."""

from .anymal_c import (
    ANYMAL_C_BASE_HEIGHT,
    ANYMAL_C_DEFAULT_JOINT_POS,
    add_anymal_c,
    anymal_c_urdf_path,
    build_anymal_c_model,
)
from .robot_layout import RobotLayout

__all__ = [
    "ANYMAL_C_BASE_HEIGHT",
    "ANYMAL_C_DEFAULT_JOINT_POS",
    "RobotLayout",
    "add_anymal_c",
    "anymal_c_urdf_path",
    "build_anymal_c_model",
]
