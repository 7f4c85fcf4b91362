"""Observation noise on a robot's measurements: additive, uniform per entry, from a seeded numpy generator."""

from __future__ import annotations

import numpy as np


def add_noise(measurements: dict, ranges: dict[str, tuple[float, float]], rng: np.random.Generator) -> dict:
    """A copy of ``measurements`` (arrays by name, as :class:`~isaaclab_diffsim.deploy.Controller` takes them) with
    uniform noise in ``ranges[name]`` = (lo, hi) added to each named one; KeyError naming a range whose
    measurement is missing."""
    missing = sorted(set(ranges) - set(measurements))
    if missing:
        raise KeyError(f"noise ranges for measurements that are not there: {missing}")
    out = dict(measurements)
    for name, (lo, hi) in ranges.items():
        value = np.asarray(measurements[name])
        out[name] = (value + rng.uniform(lo, hi, value.shape)).astype(value.dtype)
    return out
