"""The optional ``leapp`` dependency: one place that imports it and names the extra when it is missing."""

from __future__ import annotations

import functools
import importlib

LEAPP_EXTRA = 'pip install -e "source/isaaclab_diffsim[leapp]"'
"""How to install LEAPP with this package (the ``leapp`` extra of ``source/isaaclab_diffsim/pyproject.toml``)."""


def require_leapp():
    """The ``leapp`` module; raises ImportError naming the ``leapp`` extra when it is not installed."""
    try:
        return importlib.import_module("leapp")
    except ImportError as err:
        raise ImportError(f"LEAPP export and deployment need the 'leapp' package: {LEAPP_EXTRA}") from err


@functools.cache
def _export_manager():
    """LEAPP's ExportManager class, or None when leapp is not installed (looked up once)."""
    try:
        from leapp import ExportManager
    except ImportError:
        return None
    return ExportManager


def tracing() -> bool:
    """Whether a LEAPP export is tracing now (``leapp.start`` was called); False when leapp is not installed."""
    manager = _export_manager()
    return manager is not None and bool(manager.is_interpret_graph_enabled())
