"""ANYmal C's URDF in the installed ``example-robot-data`` package: where it is, its leg names and its joint limits.

Shared by the Newton builder (``anymal_c``) and the USD conversion (``anymal_c_usd``). Never downloads.
"""

from __future__ import annotations

from pathlib import Path

from .installed_files import installed_file
from .urdf_limits import read_urdf_joint_limits

_URDF_REL = Path("share/example-robot-data/robots/anymal_c_simple_description/urdf/anymal.urdf")

LEGS = ("LF", "RF", "LH", "RH")
"""Leg order used for every per-foot list (Isaac Lab's order)."""


def anymal_c_urdf_path() -> Path:
    """Path of ``anymal.urdf`` in the installed ``example-robot-data`` (cmeel prefix); never downloads."""
    return installed_file("example-robot-data", Path("cmeel.prefix") / _URDF_REL)


def urdf_joint_limits(key: str, path: Path | None = None) -> dict[str, float]:
    """Joint ``velocity`` or ``effort`` limits by joint name from the ANYmal C URDF (Newton's URDF importer leaves
    velocity unset, its USD importer both)."""
    return read_urdf_joint_limits(path or anymal_c_urdf_path(), key)
