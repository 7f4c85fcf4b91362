"""Periodicity of joint trajectories (Figure 7) and divergence of two rollouts (Figure 8); numpy only.

Signals are arrays (time, channels) sampled every ``dt`` seconds; the gait period T is known (the task's clock).
"""

from __future__ import annotations

import numpy as np


def autocorrelation_at(x: np.ndarray, lag: int) -> float:
    """Mean over channels of the normalised autocorrelation at ``lag`` samples (1: the signal repeats exactly
    after ``lag``; channels without variance are left out)."""
    x = np.asarray(x, dtype=float)
    if not 0 < lag < len(x):
        raise ValueError(f"lag must be in (0, {len(x)}), got {lag}")
    x = x - x.mean(axis=0)
    a, b = x[:-lag], x[lag:]
    den = np.sqrt((a * a).sum(axis=0) * (b * b).sum(axis=0))
    ok = den > 1e-12
    if not ok.any():
        return float("nan")
    return float(((a * b).sum(axis=0)[ok] / den[ok]).mean())


def harmonic_power_share(x: np.ndarray, dt: float, period: float, harmonics: int = 5) -> float:
    """Share of the spectral power (mean removed, all channels pooled) within one frequency bin of the gait
    frequency 1 / period and its first ``harmonics`` multiples. Uses a whole number of periods, so the
    harmonics fall on bins."""
    x = np.asarray(x, dtype=float)
    n_per = int(round(period / dt))
    cycles = len(x) // n_per
    if cycles < 2:
        raise ValueError(f"need at least two periods ({2 * n_per} samples), got {len(x)}")
    x = x[: cycles * n_per]
    x = x - x.mean(axis=0)
    power = (np.abs(np.fft.rfft(x, axis=0)) ** 2).sum(axis=1)
    total = power[1:].sum()
    if total <= 0.0:
        return float("nan")
    bins = set()
    for k in range(1, harmonics + 1):
        centre = k * cycles  # frequency k / period falls on bin k * cycles
        bins.update(b for b in (centre - 1, centre, centre + 1) if 1 <= b < len(power))
    return float(power[sorted(bins)].sum() / total)


def stride_variability(x: np.ndarray, dt: float, period: float) -> float:
    """Stride-to-stride variability: RMS over phase and channels of the standard deviation across strides,
    divided by the RMS (over phase and channels) of the mean stride's deviation from its mean. 0 for an exactly
    periodic signal; about 1 when stride-to-stride changes are as large as the gait's own motion."""
    x = np.asarray(x, dtype=float)
    n_per = int(round(period / dt))
    strides = len(x) // n_per
    if strides < 2:
        raise ValueError(f"need at least two strides ({2 * n_per} samples), got {len(x)}")
    s = x[: strides * n_per].reshape(strides, n_per, -1)
    spread = np.sqrt((s.std(axis=0) ** 2).mean())
    mean_stride = s.mean(axis=0)
    amplitude = np.sqrt(((mean_stride - mean_stride.mean(axis=0)) ** 2).mean())
    return float(spread / amplitude) if amplitude > 1e-12 else float("nan")


def rms_difference(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Per channel, the RMS over time of a - b."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.shape != b.shape:
        raise ValueError(f"shapes differ: {a.shape} vs {b.shape}")
    return np.sqrt(((a - b) ** 2).mean(axis=0))


def divergence_time(pos_a: np.ndarray, pos_b: np.ndarray, dt: float, threshold: float) -> float:
    """First time [s] at which the positions (time, 3) are farther apart than ``threshold``; inf if never."""
    dist = np.linalg.norm(np.asarray(pos_a, dtype=float) - np.asarray(pos_b, dtype=float), axis=-1)
    idx = np.nonzero(dist > threshold)[0]
    return float(idx[0] * dt) if len(idx) else float("inf")


def dominant_period(x: np.ndarray, dt: float, min_period: float = 0.2, max_period: float = 2.0) -> tuple[float, float]:
    """(period [s], autocorrelation) of the lag in [min_period, max_period] at which the signal (time, channels)
    best repeats: the first local maximum of :func:`autocorrelation_at` over the lags that is within 0.05 of the
    highest one (the fundamental, not a multiple of it). A gait that repeats gives an autocorrelation near 1 there;
    a posture that only drifts gives a low one."""
    x = np.asarray(x, dtype=float)
    lags = np.arange(max(int(round(min_period / dt)), 1), min(int(round(max_period / dt)), len(x) // 2) + 1)
    if len(lags) < 3:
        raise ValueError(f"need at least {2 * int(round(max_period / dt))} samples for periods up to {max_period} s")
    r = np.array([autocorrelation_at(x, int(k)) for k in lags])
    r = np.where(np.isfinite(r), r, -1.0)
    best = r.max()
    for i in range(len(r)):
        left = r[i - 1] if i > 0 else -np.inf
        right = r[i + 1] if i + 1 < len(r) else -np.inf
        if r[i] >= left and r[i] >= right and r[i] >= best - 0.05:
            return float(lags[i] * dt), float(r[i])
    return float(lags[int(r.argmax())] * dt), float(best)


def air_phases(contact: np.ndarray, dt: float) -> np.ndarray:
    """Durations [s] of the completed air phases (a run of no contact between two contacts) of every foot, from
    contact flags (time, feet)."""
    c = np.asarray(contact, dtype=bool)
    durations = []
    for f in range(c.shape[1]):
        edges = np.flatnonzero(np.diff(c[:, f].astype(int)))  # index before each change
        for a, b in zip(edges[:-1], edges[1:]):
            if c[a, f] and not c[a + 1, f]:  # lift-off at a + 1, touchdown at b + 1
                durations.append((b - a) * dt)
    return np.array(durations)


def steps_per_second(contact: np.ndarray, dt: float) -> float:
    """Touchdowns per foot per second, from contact flags (time, feet)."""
    c = np.asarray(contact, dtype=bool)
    touchdowns = (~c[:-1] & c[1:]).sum()
    return float(touchdowns / (c.shape[1] * (len(c) - 1) * dt))
