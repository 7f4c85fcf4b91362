"""SpeedProfile, DirectionProfile and EnvGroupProfile: tracking by command speed, direction and group of envs, against
hand-computed means."""

import math

import pytest
import torch

from isaaclab_diffsim.rl.speed_profile import (
    DIRECTION_SECTORS,
    SPEED_BANDS,
    DirectionProfile,
    EnvGroupProfile,
    SpeedProfile,
    along_summary,
    band_label,
    pooled,
    profile_summary,
)


def test_band_means_by_hand():
    """Commands of 0 (band 0), 0.3 and 0.4 m/s (band 1), exactly 0.75 m/s (the band starting there) and 1.2 m/s
    (the open band); a masked-out env counts nowhere."""
    cmd = torch.tensor([[0.0, 0.0], [0.3, 0.0], [0.0, -0.4], [0.45, 0.6], [1.2, 0.0], [1.0, 0.0]])
    vel = torch.tensor([[0.1, 0.0], [0.3, 0.1], [0.0, -0.2], [0.3, 0.4], [0.6, 0.3], [5.0, 5.0]])
    prof = SpeedProfile()
    prof.add(cmd, vel, torch.tensor([True, True, True, True, True, False]))
    rows = {tuple(r["band"]): r for r in prof.rows()}
    assert list(rows) == [(0.0, 0.25), (0.25, 0.5), (0.75, 1.0), (1.0, None)]
    assert rows[(0.0, 0.25)] == {
        "band": [0.0, 0.25],
        "steps": 1,
        "tracking_error": pytest.approx(0.1),
        "speed_along_command": 0.0,  # a zero command has no direction
        "command_speed": 0.0,
    }
    slow = rows[(0.25, 0.5)]
    assert slow["steps"] == 2
    assert slow["tracking_error"] == pytest.approx((0.1 + 0.2) / 2)
    assert slow["speed_along_command"] == pytest.approx((0.3 + 0.2) / 2)
    assert slow["command_speed"] == pytest.approx(0.35)
    assert rows[(0.75, 1.0)]["speed_along_command"] == pytest.approx(0.5)  # (0.3, 0.4) along (0.6, 0.8)
    assert rows[(0.75, 1.0)]["tracking_error"] == pytest.approx(0.25)
    fast = rows[(1.0, None)]
    assert fast["speed_along_command"] == pytest.approx(0.6)
    assert fast["tracking_error"] == pytest.approx(math.hypot(0.6, 0.3))


def test_accumulates_over_calls():
    prof = SpeedProfile()
    for v in (0.2, 0.6):
        prof.add(torch.tensor([[0.8, 0.0]]), torch.tensor([[v, 0.0]]), torch.tensor([True]))
    (row,) = prof.rows()
    assert row["steps"] == 2
    assert row["speed_along_command"] == pytest.approx(0.4)
    assert row["tracking_error"] == pytest.approx(0.4)


def test_bad_bands_refused():
    assert SPEED_BANDS[0] == 0.0 and math.isinf(SPEED_BANDS[-1])
    for bands in [(0.0,), (0.1, 0.5), (0.0, 0.5, 0.5), (0.0, 1.0, 0.5)]:
        with pytest.raises(ValueError, match="speed bands"):
            SpeedProfile(bands)


def test_labels_and_summary_line():
    assert band_label([0.25, 0.5]) == "0.25-0.50" and band_label([1.0, None]) == ">= 1.00"
    rows = [{"band": [1.0, None], "steps": 3, "tracking_error": 0.5, "speed_along_command": 0.7, "command_speed": 1.2}]
    assert profile_summary(rows) == ">= 1.00: 0.70 of 1.20 m/s (error 0.500)"


def test_direction_sectors_by_hand():
    """Forward within 45 degrees of +x (at 30 and 40 degrees), lateral to either side (72 degrees), backward
    within 45 degrees of -x; a zero command has no direction and a masked-out env counts nowhere."""
    cmd = torch.tensor(
        [
            [1.0, 0.0],
            [0.5 * math.sqrt(3.0), 0.5],
            [0.6, 0.5],
            [0.0, 0.8],
            [0.2, -0.6],
            [-0.5, 0.1],
            [0.0, 0.0],
            [1.0, 0],
        ]
    )
    vel = torch.tensor(
        [[0.4, 0.0], [0.0, 0.0], [0.0, 0.0], [0.1, 0.3], [0.0, 0.0], [-0.3, 0.0], [0.2, 0.0], [9.0, 9.0]]
    )
    prof = DirectionProfile()
    prof.add(cmd, vel, torch.tensor([True] * 7 + [False]))
    rows = {r["sector"]: r for r in prof.rows()}
    assert list(rows) == list(DIRECTION_SECTORS) == ["forward", "lateral", "backward"]
    fwd, lat, back = rows["forward"], rows["lateral"], rows["backward"]
    assert fwd["steps"] == 3
    assert fwd["speed_along_command"] == pytest.approx(0.4 / 3)
    assert fwd["tracking_error"] == pytest.approx((0.6 + 1.0 + math.hypot(0.6, 0.5)) / 3)
    assert fwd["command_speed"] == pytest.approx((2.0 + math.hypot(0.6, 0.5)) / 3)
    assert lat["steps"] == 2
    assert lat["speed_along_command"] == pytest.approx(0.3 / 2)  # (0.1, 0.3) along (0, 1), and 0
    assert lat["tracking_error"] == pytest.approx((math.hypot(0.1, 0.5) + math.hypot(0.2, 0.6)) / 2)
    assert lat["command_speed"] == pytest.approx((0.8 + math.hypot(0.2, 0.6)) / 2)
    assert back["steps"] == 1
    assert back["speed_along_command"] == pytest.approx(0.15 / math.hypot(0.5, 0.1))
    assert profile_summary([back]).startswith("backward: 0.29 of 0.51 m/s (error ")


def test_speed_and_direction_profiles_count_the_same_steps():
    torch.manual_seed(0)
    cmd, vel = torch.randn(64, 2), torch.randn(64, 2)
    mask = torch.rand(64) < 0.7
    speed, direction = SpeedProfile(), DirectionProfile()
    for prof in (speed, direction):
        prof.add(cmd, vel, mask)
    for key in ("steps", "tracking_error"):
        total = [sum(r["steps"] * (r[key] if key != "steps" else 1) for r in p.rows()) for p in (speed, direction)]
        assert total[0] == pytest.approx(total[1])
    assert sum(r["steps"] for r in direction.rows()) == int(mask.sum())


def test_pooled_rows_weigh_by_steps():
    rows = [
        {"band": [0.0, 0.25], "steps": 1, "tracking_error": 0.1, "speed_along_command": 0.0, "command_speed": 0.1},
        {"band": [1.0, None], "steps": 3, "tracking_error": 0.5, "speed_along_command": 0.8, "command_speed": 1.2},
    ]
    assert pooled(rows) == {
        "steps": 4,
        "tracking_error": pytest.approx(0.4),
        "speed_along_command": pytest.approx(0.6),
        "command_speed": pytest.approx(0.925),
    }
    with pytest.raises(ValueError, match="no steps"):
        pooled([])
    assert along_summary(rows) == "along the commands: 0.600 of 0.925 m/s (standing still would track at 0.925 m/s)"


def test_env_groups_by_hand():
    """Envs 0 and 2 in group "b", env 1 in group "a", group "c" empty; a masked-out env counts nowhere and a zero
    command counts in its group; pooled over the groups is pooled over the speed bands."""
    cmd = torch.tensor([[0.6, 0.0], [0.0, 0.0], [0.0, 0.8], [1.0, 0.0]])
    vel = torch.tensor([[0.3, 0.0], [0.1, 0.0], [0.2, 0.5], [9.0, 0.0]])
    mask = torch.tensor([True, True, True, False])
    groups = EnvGroupProfile(torch.tensor([1, 0, 1, 2]), ["a", "b", "c"])
    bands = SpeedProfile()
    for _ in range(2):  # two steps of the same
        groups.add(cmd, vel, mask)
        bands.add(cmd, vel, mask)
    a, b = groups.rows()
    assert a == {
        "group": "a",
        "steps": 2,
        "tracking_error": pytest.approx(0.1),
        "speed_along_command": 0.0,
        "command_speed": 0.0,
    }
    assert b["group"] == "b" and b["steps"] == 4
    assert b["speed_along_command"] == pytest.approx((0.3 + 0.5) / 2)
    assert b["command_speed"] == pytest.approx((0.6 + 0.8) / 2)
    assert b["tracking_error"] == pytest.approx((0.3 + math.hypot(0.2, 0.3)) / 2)
    assert pooled(groups.rows()) == pytest.approx(pooled(bands.rows()))
    with pytest.raises(ValueError, match="1-D index into the 2 labels"):
        EnvGroupProfile(torch.tensor([0, 2]), ["a", "b"])
