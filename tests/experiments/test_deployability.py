"""The deployability suite: its summary tables and goal on synthetic sim2sim.py results, and (integration) the
experiment end to end on a tiny budget."""

import json
import os
import subprocess
import sys

import pytest

from isaaclab_diffsim.deploy.sim2sim import parse_variant
from isaaclab_diffsim.experiments.deployability import in_goal, summarize

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def result(falls: dict, tracking=0.1):
    return {
        "variants": {
            name: {"fall_rate": f, "tracking_error": tracking, "joint_power_w": 100.0 * (i + 1)}
            for i, (name, f) in enumerate(falls.items())
        }
    }


def test_goal_variants():
    for name in ("nominal", "friction0.4", "friction1.2", "payload-5", "payload10", "push1.0", "latency2"):
        assert in_goal(parse_variant(name)), name
    for name in ("motor0.8", "motor1.2"):
        assert in_goal(parse_variant(name)), name
    for name in ("friction0.2", "payload15", "push1.5", "latency3", "motor0.7", "noise", "cmd1.0"):
        assert not in_goal(parse_variant(name)), name


def test_tables_per_simulator_and_goal_per_seed():
    exp = {
        "seeds": [1, 2],
        "variants": ["nominal", "friction0.4", "friction0.2"],
        "runs": {"nominal_training": {}, "randomised": {"seeds": [3]}},
    }
    ok = {"nominal": 0.0, "friction0.4": 0.0, "friction0.2": 1.0}  # friction 0.2 is outside the goal
    loaded = {
        ("nominal_training", 1, "mujoco"): result(ok),
        ("nominal_training", 2, "mujoco"): result({**ok, "friction0.4": 0.25}),
        ("nominal_training", 1, "diffsim"): result(ok),
        ("nominal_training", 2, "diffsim"): result(ok),
        ("randomised", 3, "mujoco"): result(ok, tracking=0.3),
        ("randomised", 3, "diffsim"): result(ok),
    }
    tables, numbers = summarize(exp, loaded)
    goal, mujoco, diffsim = tables
    assert numbers["goal_met"] == {
        "nominal_training seed 1": True,
        "nominal_training seed 2": False,
        "randomised seed 3": False,
    }
    assert "| nominal_training | 2 | no | friction0.4 | 0.100 |" in goal
    assert "| randomised | 3 | no | none | 0.300 |" in goal
    assert mujoco.startswith("**MuJoCo**") and "hard contact" in diffsim
    # mean +- std over the seeds with the per-seed values; a metric the JSON lacks reads nan
    assert "| nominal_training | friction0.4 | 1, 2 | 12.5 +- 12.5 (0.0, 25.0) |" in mujoco
    assert "| randomised | friction0.2 | 3 | 100.0 |" in mujoco and "nan" in mujoco
    assert numbers["mujoco"]["nominal_training"]["friction0.4"]["joint power [W]"] == [200.0, 200.0]


def test_long_check_goal_on_its_own_runs_and_variants():
    exp = {
        "seeds": [1],
        "variants": ["nominal", "friction0.4"],
        "runs": {"a": {}, "b": {}},
        "long_check": {"runs": ["b"], "variants": ["nominal", "push1.0"], "episodes": 16, "episode_s": 20.0, "seed": 1},
    }
    ok = result({"nominal": 0.0, "friction0.4": 0.0})
    loaded = {(r, 1, sim): ok for r in "ab" for sim in ("mujoco", "diffsim")}
    long_loaded = {("b", 1, "mujoco"): result({"nominal": 0.0, "push1.0": 0.125})}
    tables, numbers = summarize(exp, loaded, long_loaded)
    assert numbers["goal_met"] == {"a seed 1": True, "b seed 1": True}
    assert numbers["long_check_goal_met"] == {"b seed 1": False}
    assert tables[-1].startswith("**Long check, MuJoCo**: 16 episodes of 20.0 s")
    assert "| b | 1 | no | push1.0 | 0.100 |" in tables[-1] and "| a |" not in tables[-1]
    assert numbers["long_check_mujoco"]["b"]["push1.0"]["falls [%]"] == [12.5]
    with pytest.raises(ValueError, match="not runs of the experiment"):
        summarize({**exp, "long_check": {**exp["long_check"], "runs": ["c"]}}, loaded, long_loaded)
    with pytest.raises(ValueError, match="include nominal"):
        summarize({**exp, "long_check": {**exp["long_check"], "variants": ["push1.0"]}}, loaded, long_loaded)


@pytest.mark.integration
def test_deployability_end_to_end_tiny(tmp_path):
    """The real runner on a tiny budget: 2 runs x 1 seed trained for 2 iterations on 2 envs, each bundle through
    sim2sim.py in both simulators (2 variants, 1 episode of 1 s); the page gets the goal and both tables."""
    argv = [
        sys.executable,
        os.path.join(REPO, "scripts", "experiments", "run.py"),
        "experiment=deployability",
        f"runs_dir={tmp_path / 'runs'}",
        f"results_dir={tmp_path / 'results'}",
        f"results_page={tmp_path / 'results.md'}",
        "size.num_envs=2",
        "size.shac_iterations=2",
        "~experiment.runs",  # two runs of its own, whatever the config lists
        "+experiment.runs={randomised:{iterations:2},nominal_training:{iterations:2}}",
        "experiment.seeds=[1]",
        "experiment.episodes=1",
        "experiment.episode_s=1.0",
        "experiment.variants=[nominal,motor0.8]",
        "experiment.trace_step_s=0.25",
        "experiment.long_check.runs=[randomised]",
        "experiment.long_check.variants=[nominal]",
        "experiment.long_check.episodes=1",
        "experiment.long_check.episode_s=1.0",
    ]
    subprocess.run(argv, check=True, cwd=REPO)
    result = json.load(open(tmp_path / "results" / "deployability" / "result.json"))
    assert set(result["numbers"]["goal_met"]) == {"nominal_training seed 1", "randomised seed 1"}
    assert set(result["numbers"]["mujoco"]["randomised"]) == {"nominal", "motor0.8"}
    page = open(tmp_path / "results.md").read()
    assert "## deployability" in page and "**MuJoCo**" in page and "**our hard contact model**" in page
    assert "velocity_trace_randomised_seed1.png" in page
    assert set(result["numbers"]["long_check_goal_met"]) == {"randomised seed 1"} and "**Long check, MuJoCo**" in page


def test_standing_is_part_of_the_goal_with_the_zero_command_variant():
    exp = {"seeds": [1, 2, 3], "variants": ["nominal", "cmd0.0"], "runs": {"r": {}}}

    def stand(touchdowns: list[float], drift: float) -> dict:
        out = result({"nominal": 0.0, "cmd0.0": 0.0})
        still = out["variants"]["cmd0.0"]
        still["per_episode"] = [{"touchdowns_per_foot_s": t} for t in touchdowns]
        still["touchdowns_per_foot_s"], still["drift_m"] = sum(touchdowns) / len(touchdowns), drift
        return out

    loaded = {
        ("r", 1, "mujoco"): stand([0.0, 0.0], 0.02),
        ("r", 2, "mujoco"): stand([0.0, 0.1], 0.02),  # one episode stepped
        ("r", 3, "mujoco"): stand([0.0, 0.0], 0.15),  # drifted too far
    }
    loaded.update({("r", s, "diffsim"): loaded[("r", s, "mujoco")] for s in (1, 2, 3)})
    tables, numbers = summarize(exp, loaded)
    assert numbers["goal_met"] == {"r seed 1": True, "r seed 2": False, "r seed 3": False}
    assert "| r | 2 | no | none | 0.100 | 0.05, 0.020 |" in tables[0]
    assert "touchdowns per foot [1/s]" in tables[1] and "base drift [m]" in tables[1]
