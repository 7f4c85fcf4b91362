"""LEAPP (Isaac Lab 3's policy-pipeline export) for policies trained on this backend.

The ``leapp`` package is an optional extra (``pip install -e "source/isaaclab_diffsim[leapp]"``); the modules that
need it call :func:`require_leapp` first, which names the extra when it is missing.
"""

from ...utils.leapp_support import LEAPP_EXTRA, require_leapp

__all__ = ["LEAPP_EXTRA", "require_leapp"]
