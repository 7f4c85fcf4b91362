"""The classes named by the ``class_name`` fields of the SHAC cfgs."""

from __future__ import annotations

import importlib


def resolve_class(class_name: str) -> type:
    """The class ``class_name`` names.

    A simple name (``"SHAC"``, ``"ShacActorCritic"``, ``"ShacRunner"``) is one exported by
    :mod:`isaaclab_diffsim.rl.shac`; any other class is named with its module, ``"module.path:ClassName"`` or
    ``"module.path.ClassName"``. Raises ValueError if it names no class.
    """
    if ":" in class_name:
        module, attr = class_name.rsplit(":", 1)
    elif "." in class_name:
        module, attr = class_name.rsplit(".", 1)
    else:
        module, attr = __package__, class_name
    try:
        cls = getattr(importlib.import_module(module), attr)
    except (ImportError, AttributeError) as err:
        raise ValueError(f"class_name {class_name!r} names no importable class: {err}") from None
    if not isinstance(cls, type):
        raise ValueError(f"class_name {class_name!r} names {cls!r}, not a class")
    return cls
