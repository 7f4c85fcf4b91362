"""Files shipped inside installed Python distributions (robot descriptions); found offline, never downloaded."""

from __future__ import annotations

import importlib.metadata
import site
import sys
from pathlib import Path


def installed_file(distribution: str, rel: str | Path) -> Path:
    """Path of ``rel`` inside the installed ``distribution`` (e.g. ``example-robot-data``'s
    ``cmeel.prefix/share/...`` or ``newton``'s ``newton/examples/assets/...``). Raises FileNotFoundError naming the
    package to install."""
    rel = Path(rel)
    candidates = []
    try:
        candidates.append(Path(importlib.metadata.distribution(distribution).locate_file(rel)))
    except importlib.metadata.PackageNotFoundError:
        pass
    roots = [*sys.path, *site.getsitepackages(), site.getusersitepackages(), sys.prefix]
    candidates += [Path(r) / rel for r in roots if r]
    for path in candidates:
        if path.is_file():
            return path
    raise FileNotFoundError(
        f"{rel} not found: install the PyPI package {distribution!r} (pip install {distribution}) into this Python "
        "environment."
    )
