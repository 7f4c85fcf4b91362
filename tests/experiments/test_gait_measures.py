"""Gait periodicity and divergence measures against signals with known answers."""

import numpy as np
import pytest

from isaaclab_diffsim.experiments import gait_measures as gm
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


def test_dominant_period_finds_the_fundamental_of_a_gait_with_harmonics():
    dt, period = 0.02, 0.6
    t = np.arange(500) * dt
    x = np.stack(
        [np.sin(2 * np.pi * t / period) + 0.5 * np.sin(4 * np.pi * t / period + 1.0), np.cos(2 * np.pi * t / period)], 1
    )
    found, r = gm.dominant_period(x, dt)
    assert found == pytest.approx(period, abs=dt) and r > 0.99


def test_dominant_period_of_a_drift_is_poorly_correlated():
    rng = np.random.default_rng(0)
    x = np.cumsum(rng.normal(size=(500, 3)), axis=0) * 0.01 + rng.normal(size=(500, 3))
    _, r = gm.dominant_period(x, 0.02)
    assert r < 0.5


def test_air_phases_and_step_rate_of_a_known_contact_pattern():
    dt = 0.02
    # each foot: 10 samples in contact, 5 in the air, repeated 4 times (period 0.3 s, air phase 0.1 s)
    pattern = np.array(([True] * 10 + [False] * 5) * 4)
    contact = np.stack([pattern, np.roll(pattern, 7)], 1)
    durations = gm.air_phases(contact, dt)
    assert np.allclose(durations, 5 * dt) and len(durations) >= 6
    rate = gm.steps_per_second(contact, dt)
    touchdowns = (~contact[:-1] & contact[1:]).sum()
    assert touchdowns >= 6 and rate == pytest.approx(touchdowns / (2 * 59 * dt))
