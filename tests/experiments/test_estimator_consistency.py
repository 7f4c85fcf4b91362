"""Two gradient estimators compared over horizons: hand values for consistent, alternating and orthogonal ones."""

import math

import pytest
import torch

from isaaclab_diffsim.experiments.estimator_consistency import compare_estimators, estimator_summary


def test_consistent_estimator_has_cosine_one_and_sum_ratio_sqrt_h():
    g = [torch.tensor([3.0, 4.0])] * 4
    s = estimator_summary(g)
    assert s["mean_norm"] == pytest.approx(5.0)
    assert s["consistency"] == pytest.approx(1.0)
    assert s["sum_ratio"] == pytest.approx(2.0)  # sqrt(4)


def test_independent_directions_add_in_quadrature():
    g = [torch.tensor([1.0, 0.0, 0.0]), torch.tensor([0.0, 2.0, 0.0]), torch.tensor([0.0, 0.0, 2.0])]
    s = estimator_summary(g)
    assert s["consistency"] == pytest.approx(0.0)
    assert s["sum_ratio"] == pytest.approx(1.0)
    flip = estimator_summary([torch.tensor([1.0, 1.0]), torch.tensor([-1.0, -1.0])])
    assert flip["consistency"] == pytest.approx(-1.0) and flip["sum_ratio"] == pytest.approx(0.0)
    assert estimator_summary([torch.tensor([1.0, 0.0])])["consistency"] == 0.0  # one horizon: no pair


def test_compare_estimators_against_hand_values():
    first = [torch.tensor([1.0, 0.0]), torch.tensor([1.0, 0.0])]
    second = [torch.tensor([0.0, 10.0]), torch.tensor([10.0, 0.0])]
    r = compare_estimators(first, second)
    assert r["norm_ratio"] == pytest.approx(10.0)
    assert r["cosine_per_horizon"] == pytest.approx([0.0, 1.0])
    assert r["cosine_of_sums"] == pytest.approx(1 / math.sqrt(2))  # (2, 0) against (10, 10)
    with pytest.raises(ValueError, match="1 and 2 horizons"):
        compare_estimators(first[:1], second)
    with pytest.raises(ValueError, match="no horizons"):
        estimator_summary([])
