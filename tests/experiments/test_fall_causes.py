"""The fall classification of scripts/experiments/fall_causes.py on hand-made histories."""

import numpy as np

from isaaclab_diffsim.experiments.fall_causes import fall_causes, fall_causes_table, windows_with


def test_windows_with_marks_every_window_holding_a_flag():
    flags = np.array([[0], [0], [1], [0], [0], [0]], dtype=bool)
    assert windows_with(flags, 2)[:, 0].tolist() == [False, True, True, False, False]


def test_fall_causes_reads_each_fall_one_step_before_its_end():
    T, n = 10, 4
    gravity = np.tile(np.array([0.0, 0.0, -1.0]), (T, n, 1))
    commands = np.zeros((T, n, 3))
    hanging = np.zeros((T, n), dtype=bool)
    # env 0 falls at step 6 rolled (|g_y| > |g_x|) under a sideways command, a foot hanging at step 3
    gravity[5, 0] = [0.1, -0.6, -0.5]
    commands[5, 0] = [0.2, -0.8, 0.0]
    hanging[3, 0] = True
    gravity[6, 0] = [0.9, 0.0, -0.1]  # already reset: must not be read
    # env 1 falls at step 4 pitched under a backward command, no hanging foot in the 2 steps before
    gravity[3, 1] = [0.7, 0.1, -0.5]
    commands[3, 1] = [-0.6, 0.0, 0.0]
    hanging[0, 1] = True
    # envs 2 and 3 do not fall; env 3 has one hanging step
    hanging[8, 3] = True
    fell = np.array([True, True, False, False])
    end = np.array([6, 4, 9, 9])
    rows = fall_causes(
        {"all": np.ones(n, dtype=bool), "first": np.array([1, 0, 1, 0], dtype=bool)},
        fell,
        end,
        gravity,
        commands,
        hanging,
        window=3,
    )
    assert rows["all"] == {
        "episodes": 4,
        "falls": 2,
        "rolled": 1,
        "lateral": 1,
        "backward": 1,
        "hanging": 1,
        "hanging_window_share_survivors": 2 / 16,  # env 3: windows 6-8 and 7-9 of the 8 windows of 3 steps
    }
    assert rows["first"]["falls"] == 1 and rows["first"]["rolled"] == 1 and rows["first"]["backward"] == 0
    assert rows["first"]["hanging_window_share_survivors"] == 0.0


def test_fall_causes_table_gives_each_cause_as_a_share_of_the_falls_over_seeds():
    def row(falls, rolled, hanging, share):
        return {
            "episodes": 24,
            "falls": falls,
            "rolled": rolled,
            "lateral": 0,
            "backward": falls,
            "hanging": hanging,
            "hanging_window_share_survivors": share,
        }

    exp = {"seeds": [1, 2], "runs": {"a": {}}}
    evals = {
        ("a", 1): {"groups": {"all": row(4, 1, 2, 0.02), "type boxes": row(0, 0, 0, 0.01)}},
        ("a", 2): {"groups": {"all": row(2, 2, 0, 0.04), "type boxes": row(0, 0, 0, 0.03)}},
    }
    table, numbers = fall_causes_table(exp, evals)
    lines = table.splitlines()
    assert len(lines) == 3  # header, rule, `all` (no box falls: no row)
    assert lines[2].startswith("| all | a | 1, 2 | 48 | 6 | 62 +- 38 (25, 100) | 0 +- 0 (0, 0) | 100 +- 0 (100, 100)")
    assert numbers["a"]["all"]["hanging foot before the fall [% of falls]"] == [50.0, 0.0]
    assert lines[2].endswith("| 3.0 +- 1.0 (2.0, 4.0) |")
