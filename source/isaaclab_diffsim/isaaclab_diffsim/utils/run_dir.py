"""Log directories of training runs."""

from __future__ import annotations

import os
from datetime import datetime


def new_run_dir(parent: str, stamp: str | None = None) -> str:
    """Create and return ``parent/<stamp>`` (default: the current time as Isaac Lab names runs), adding ``_2``,
    ``_3``, ... when a run started in the same second already owns that name (runs launched together)."""
    stamp = stamp or datetime.now().strftime("%Y-%m-%d_%H-%M-%S")
    os.makedirs(parent, exist_ok=True)
    path, n = os.path.abspath(os.path.join(parent, stamp)), 1
    while True:
        try:
            os.mkdir(path)
            return path
        except FileExistsError:
            n += 1
            path = os.path.abspath(os.path.join(parent, f"{stamp}_{n}"))
