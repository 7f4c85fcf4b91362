"""ANYmal C's URDF in the installed ``example-robot-data`` package: where it is, its leg names and its joint limits.

Shared by the Newton builder (``anymal_c``) and the USD conversion (``anymal_c_usd``). Imports the standard library
only; never downloads.
"""

from __future__ import annotations

import importlib.metadata
import site
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

_URDF_REL = Path("share/example-robot-data/robots/anymal_c_simple_description/urdf/anymal.urdf")

LEGS = ("LF", "RF", "LH", "RH")
"""Leg order used for every per-foot list (Isaac Lab's order)."""


def anymal_c_urdf_path() -> Path:
    """Path of ``anymal.urdf`` in the installed ``example-robot-data`` (cmeel prefix); never downloads."""
    candidates = []
    try:
        candidates.append(Path(importlib.metadata.distribution("example-robot-data").locate_file("cmeel.prefix")))
    except importlib.metadata.PackageNotFoundError:
        pass
    roots = [*sys.path, *site.getsitepackages(), site.getusersitepackages(), sys.prefix]
    candidates += [Path(r) / "cmeel.prefix" for r in roots if r]
    for prefix in candidates:
        if (prefix / _URDF_REL).is_file():
            return prefix / _URDF_REL
    raise FileNotFoundError(
        f"ANYmal C URDF ({_URDF_REL}) not found: install the PyPI package 'example-robot-data' "
        "(pip install example-robot-data) into this Python environment."
    )


def urdf_joint_limits(key: str, path: Path | None = None) -> dict[str, float]:
    """Joint ``velocity`` or ``effort`` limits by joint name from the ANYmal C URDF (Newton's URDF importer leaves
    velocity unset, its USD importer both)."""
    out = {}
    for joint in ET.parse(path or anymal_c_urdf_path()).getroot().iter("joint"):
        lim = joint.find("limit")
        if lim is not None and lim.get(key) is not None:
            out[joint.get("name")] = float(lim.get(key))
    return out
