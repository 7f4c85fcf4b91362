"""Gait periodicity and divergence measures against signals with known answers."""

import numpy as np
import pytest

from isaaclab_diffsim.experiments.gait_measures import (
    autocorrelation_at,
    divergence_time,
    harmonic_power_share,
    rms_difference,
    stride_variability,
)

DT, PERIOD = 0.02, 0.6


def periodic(seconds=12.0):
    t = np.arange(int(seconds / DT)) * DT
    w = 2 * np.pi / PERIOD
    return np.stack([np.sin(w * t), 0.5 * np.cos(2 * w * t) + 0.2 * np.sin(3 * w * t + 1.0)], axis=1)


def test_exactly_periodic_signal():
    x = periodic()
    n = int(round(PERIOD / DT))
    assert autocorrelation_at(x, n) == pytest.approx(1.0, abs=1e-9)
    assert harmonic_power_share(x, DT, PERIOD) == pytest.approx(1.0, abs=1e-9)
    assert stride_variability(x, DT, PERIOD) == pytest.approx(0.0, abs=1e-9)


def test_half_period_lag_of_a_sine_is_anticorrelated():
    x = periodic()[:, :1]
    assert autocorrelation_at(x, int(round(PERIOD / DT / 2))) == pytest.approx(-1.0, abs=1e-9)


def test_white_noise_is_not_periodic():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3000, 4))
    n = int(round(PERIOD / DT))
    assert abs(autocorrelation_at(x, n)) < 0.05
    # 5 harmonics x 3 bins out of ~1500 bins
    assert harmonic_power_share(x, DT, PERIOD) < 0.03
    assert stride_variability(x + periodic(60.0)[:, :1], DT, PERIOD) > 0.5


def test_noise_share_matches_the_power_ratio():
    """A sine of power 1/2 plus white noise of variance s2: the harmonic share is about 0.5 / (0.5 + s2)."""
    rng = np.random.default_rng(1)
    x = periodic(120.0)[:, :1] + np.sqrt(0.5) * rng.standard_normal((6000, 1))
    assert harmonic_power_share(x, DT, PERIOD) == pytest.approx(0.5, abs=0.03)


def test_rms_and_divergence():
    a = np.zeros((100, 2))
    b = a.copy()
    b[:, 1] = 2.0
    np.testing.assert_allclose(rms_difference(a, b), [0.0, 2.0])
    pos = np.zeros((100, 3))
    moved = pos.copy()
    moved[:, 0] = np.arange(100) * 0.001  # 1 mm per step
    assert divergence_time(pos, moved, DT, 0.05) == pytest.approx(51 * DT)
    assert divergence_time(pos, pos, DT, 0.05) == np.inf
    with pytest.raises(ValueError):
        rms_difference(a, b[:50])
