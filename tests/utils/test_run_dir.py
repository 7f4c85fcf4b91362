"""Runs started in the same second get distinct log directories."""

from isaaclab_diffsim.utils.run_dir import new_run_dir


def test_same_stamp_gets_a_suffix(tmp_path):
    first = new_run_dir(str(tmp_path / "exp"), "2026-11-30_15-02-41")
    second = new_run_dir(str(tmp_path / "exp"), "2026-11-30_15-02-41")
    third = new_run_dir(str(tmp_path / "exp"), "2026-11-30_15-02-41")
    assert first.endswith("2026-11-30_15-02-41")
    assert second.endswith("2026-11-30_15-02-41_2") and third.endswith("2026-11-30_15-02-41_3")
    assert len({first, second, third}) == 3
