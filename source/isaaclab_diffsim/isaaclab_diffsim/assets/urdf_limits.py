"""Joint limits read from a URDF file (Newton's URDF importer leaves the velocity limit unset)."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path


def read_urdf_joint_limits(path: str | Path, key: str) -> dict[str, float]:
    """The ``<limit>`` attribute ``key`` (``velocity``, ``effort``, ...) of each joint that has one, by joint name."""
    out = {}
    for joint in ET.parse(path).getroot().iter("joint"):
        lim = joint.find("limit")
        if lim is not None and lim.get(key) is not None:
            out[joint.get("name")] = float(lim.get(key))
    return out
