"""The rough-terrain results of the recipe experiments: the terrain-level record and terrain_levels.py on synthetic
checkpoints, the per-terrain, curriculum and MuJoCo tables, the ``terrain_eval`` config and the jobs it adds."""

import json
import os

import pytest
import terrain_levels
import torch
from evaluate_terrain import (
    FirstEpisodeExcursion,
    FirstEpisodeTilt,
    flattened_scan_policy,
    told_type_policy,
    use_forward_commands,
)
from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf
from orchestration.context import ExperimentContext
from orchestration.jobs import Job
from orchestration.recipe import (
    checkpoint_terrain_jobs,
    checkpoints_terrain,
    fall_cause_jobs,
    play_overrides,
    terrain_eval,
    terrain_jobs,
    terrain_tables,
)
from orchestration.terrain_mujoco import evaluation_proportions, mujoco_jobs, mujoco_table

from isaaclab_diffsim.deploy.sim2sim.commands import FORWARD_VX_RANGE
from isaaclab_diffsim.experiments.terrain import (
    checkpoints_table,
    curriculum_table,
    level_record,
    picked_checkpoints,
    speed_table,
    terrain_table,
)

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_level_record_fractions_and_mean():
    levels = torch.tensor([0, 0, 1, 3, 3, 3])
    record = level_record([(100, 2000, levels, 4), (50, 1000, torch.zeros(6, dtype=torch.long), 4)])
    assert record["num_levels"] == 4
    first, second = record["checkpoints"]  # sorted by iteration
    assert (first["iteration"], first["samples"], first["mean_level"]) == (50, 1000, 0.0)
    assert first["fractions"] == [1.0, 0.0, 0.0, 0.0]
    assert second["mean_level"] == pytest.approx(10 / 6)
    assert second["fractions"] == pytest.approx([2 / 6, 1 / 6, 0.0, 3 / 6])
    assert sum(second["fractions"]) == pytest.approx(1.0)


def test_level_record_refuses_flat_and_bad_checkpoints():
    with pytest.raises(ValueError, match="no checkpoint"):
        level_record([])
    with pytest.raises(ValueError, match="iteration 50 has no terrain levels"):
        level_record([(50, 1, torch.zeros(4, dtype=torch.long), None)])  # flat: no generator
    with pytest.raises(ValueError, match="outside 0..3"):
        level_record([(50, 1, torch.tensor([0, 4]), 4)])
    with pytest.raises(ValueError, match="has 5 levels, an earlier one 4"):
        level_record([(50, 1, torch.tensor([0]), 4), (100, 2, torch.tensor([0]), 5)])


def _checkpoint(path, iteration, levels, num_rows=4):
    terrain = None if num_rows is None else {"generator": {"num_rows": num_rows, "num_cols": 2}}
    torch.save(
        {
            "iter": iteration,
            "total_samples": 64 * iteration,
            "env_state": {"terrain_level": torch.tensor(levels)},
            "env_cfg": {"terrain": terrain},
        },
        path,
    )


def test_terrain_levels_script_end_to_end(tmp_path, capsys):
    run = tmp_path / "run"
    run.mkdir()
    _checkpoint(run / "model_100.pt", 100, [0, 1, 1, 2])
    _checkpoint(run / "model_50.pt", 50, [0, 0, 0, 0])
    _checkpoint(run / "model_120_interrupted.pt", 120, [3, 3, 3, 3])  # left out
    out = tmp_path / "out" / "terrain_levels.json"
    terrain_levels.main([str(run), "--out", str(out)])
    record = json.loads(out.read_text())
    assert record["num_levels"] == 4 and record["run_dir"] == str(run)
    assert [c["iteration"] for c in record["checkpoints"]] == [50, 100]
    assert [c["samples"] for c in record["checkpoints"]] == [3200, 6400]
    assert [c["mean_level"] for c in record["checkpoints"]] == [0.0, 1.0]
    assert record["checkpoints"][1]["fractions"] == [0.25, 0.5, 0.25, 0.0]
    assert "iteration   100: mean level 1.000" in capsys.readouterr().out


def test_terrain_levels_script_errors_in_one_line(tmp_path):
    out = str(tmp_path / "levels.json")
    with pytest.raises(SystemExit, match="no model_<iteration>.pt checkpoint in"):
        terrain_levels.main([str(tmp_path), "--out", out])
    flat = tmp_path / "flat"
    flat.mkdir()
    _checkpoint(flat / "model_50.pt", 50, [0, 0], num_rows=None)
    with pytest.raises(SystemExit, match=r"flat.*iteration 50 has no terrain levels \(a flat task\?\)") as err:
        terrain_levels.main([str(flat), "--out", out])
    assert "\n" not in str(err.value) and not os.path.exists(out)


def _groups(falls, tracking):
    """evaluate_terrain.py's groups: two types of 4 and 2 episodes, levels 0, 1 and 10."""
    return {
        "type pyramid_stairs": {"episodes": 4, "tracking_error": tracking, "fall_rate": falls},
        "type boxes": {"episodes": 2, "tracking_error": 0.5, "fall_rate": 1.0},
        "level 10": {"episodes": 1, "tracking_error": 0.9, "fall_rate": 1.0},
        "level 0": {"episodes": 3, "tracking_error": tracking, "fall_rate": falls},
        "level 1": {"episodes": 2, "tracking_error": 0.2, "fall_rate": 0.5},
    }


def test_terrain_table_per_group_and_run_over_seeds():
    exp = {"seeds": [1], "runs": {"a": {"seeds": [1, 2]}, "b": {}}}
    evals = {
        ("a", 1): {"summary": "", "groups": _groups(0.25, 0.2)},
        ("a", 2): {"summary": "", "groups": _groups(0.75, 0.4)},
        ("b", 1): {"summary": "", "groups": _groups(0.0, 0.1)},
    }
    flats = {
        ("a", 2): {"summary": "", "groups": {"type flat": {"episodes": 6, "tracking_error": 0.2, "fall_rate": 0.5}}}
    }
    assert terrain_table(exp, evals)[0].splitlines()[4].startswith("| type pyramid_stairs")  # no flat-ground row
    table, numbers = terrain_table(exp, evals, {"flat ground": flats, "flattened scan": {("b", 1): evals[("a", 2)]}})
    lines = table.splitlines()
    assert lines[4] == "| flat ground | a | 2 | 6 | 50.0 | - | 0.200 |"  # after `all`, the seeds that have one
    assert lines[5] == "| flattened scan | b | 1 | 6 | 83.3 | - | 0.433 |"  # then the next evaluation's
    assert lines[6].startswith("| type pyramid_stairs")
    assert numbers["a"]["flat ground"]["falls [%]"] == [50.0] and "flat ground" not in numbers["b"]
    assert numbers["b"]["flattened scan"]["falls [%]"] == [pytest.approx(83.3333, abs=1e-3)]
    table, numbers = terrain_table(exp, evals)
    lines = table.splitlines()
    assert lines[0] == "| terrain | run | seeds | episodes | falls [%] | tilted falls [%] | tracking error [m/s] |"
    assert lines[2] == "| all | a | 1, 2 | 12 | 66.7 +- 16.7 (50.0, 83.3) | - | 0.367 +- 0.067 (0.300, 0.433) |"
    assert lines[3] == "| all | b | 1 | 6 | 33.3 | - | 0.233 |"
    assert (
        lines[4] == "| type pyramid_stairs (stairs down) | a | 1, 2 | 8 | 50.0 +- 25.0 (25.0, 75.0) | - | "
        "0.300 +- 0.100 (0.200, 0.400) |"
    )
    assert [ln.split(" | ")[0] for ln in lines[2::2]] == [
        "| all",
        "| type pyramid_stairs (stairs down)",
        "| type boxes",
    ] + [f"| level {k}" for k in (0, 1, 10)]
    assert numbers["a"]["level 0"]["falls [%]"] == [25.0, 75.0]
    assert numbers["b"]["type boxes"]["tracking error [m/s]"] == [0.5]
    assert "tilted falls [%]" not in numbers["a"]["level 0"]


def test_terrain_table_shows_tilted_falls_where_every_seed_has_them():
    exp = {"seeds": [1, 2], "runs": {"a": {}}}
    evals = {(run_seed): {"summary": "", "groups": _groups(0.5, 0.2)} for run_seed in (("a", 1), ("a", 2))}
    for g in evals[("a", 1)]["groups"].values():
        g["tilted_fall_rate"] = 0.25
    assert (
        terrain_table(exp, evals)[0].splitlines()[2]
        == "| all | a | 1, 2 | 12 | 66.7 +- 0.0 (66.7, 66.7) | - | 0.300 +- 0.000 (0.300, 0.300) |"
    )
    for g in evals[("a", 2)]["groups"].values():
        g["tilted_fall_rate"] = 0.5
    table, numbers = terrain_table(exp, evals)
    assert table.splitlines()[2].split(" | ")[5] == "37.5 +- 12.5 (25.0, 50.0)"  # type-weighted: all types 0.25 / 0.5
    assert numbers["a"]["type boxes"]["tilted falls [%]"] == [25.0, 50.0]


def test_curriculum_table_picks_a_handful_of_checkpoints():
    assert picked_checkpoints(list(range(50, 501, 50))) == [50, 100, 200, 300, 400, 500]
    assert picked_checkpoints([30, 90, 130, 170, 260]) == [30, 130, 260]
    record = level_record([(it, 1000 * it, torch.full((4,), min(it // 100, 2)), 3) for it in range(50, 301, 50)])
    table, numbers = curriculum_table({"seeds": [7], "runs": {"a": {}}}, {("a", 7): record})
    lines = table.splitlines()
    assert lines[0] == "| run | seed | iteration | samples [M] | mean level | level 0 [%] | level 1 [%] | level 2 [%] |"
    assert [ln.split(" | ")[2] for ln in lines[2:]] == ["50", "100", "200", "300"]
    assert lines[3] == "| a | 7 | 100 | 0.10 | 1.00 | 0.0 | 100.0 | 0.0 |"
    assert numbers["a seed 7"]["iteration"] == [50, 100, 150, 200, 250, 300]
    assert numbers["a seed 7"]["mean_level"] == [0.0, 1.0, 1.0, 2.0, 2.0, 2.0]


@pytest.mark.parametrize(
    "value, message",
    [
        ([120, 71], "terrain_eval must be a mapping"),
        ({"num_envs": 120, "seed": 71, "envs": 3}, r"unknown field\(s\) \['envs'\]"),
        ({"num_envs": 0, "seed": 71}, "terrain_eval.num_envs must be an integer >= 1, got 0"),
        ({"num_envs": "120", "seed": 71}, "terrain_eval.num_envs must be an integer >= 1, got '120'"),
        ({"num_envs": 120}, "terrain_eval.seed must be an integer >= 0, got None"),
        ({"num_envs": 120, "seed": 1.5}, "terrain_eval.seed must be an integer >= 0, got 1.5"),
        ({"num_envs": 120, "seed": 71, "mujoco_episodes": 0}, "terrain_eval.mujoco_episodes must be an integer >= 1"),
        ({"num_envs": 120, "seed": 71, "mujoco_episodes": True}, "terrain_eval.mujoco_episodes must be an integer"),
        ({"num_envs": 120, "seed": 71, "checkpoints": 0}, "terrain_eval.checkpoints must be an integer >= 1, got 0"),
        ({"num_envs": 120, "seed": 71, "checkpoints": "3"}, "terrain_eval.checkpoints must be an integer >= 1"),
    ],
)
def test_terrain_eval_config_is_validated(value, message):
    with pytest.raises(ValueError, match=message):
        terrain_eval({"terrain_eval": value})


@pytest.mark.parametrize("name", ["rough_scale", "rough_walking"])
def test_rough_experiments_evaluate_per_terrain(name):
    with initialize_config_dir(config_dir=os.path.join(REPO, "configs"), version_base="1.3"):
        exp = OmegaConf.to_container(compose(config_name="run", overrides=[f"experiment={name}"]).experiment)
    assert terrain_eval(exp) == {"num_envs": 120, "seed": 71, "mujoco_episodes": None, "checkpoints": 1}
    assert terrain_eval({}) is None
    spec = {"terrain_eval": {"num_envs": 120, "seed": 71, "mujoco_episodes": 2, "checkpoints": 3}}
    assert terrain_eval(spec) == {"num_envs": 120, "seed": 71, "mujoco_episodes": 2, "checkpoints": 3}


def test_terrain_jobs_evaluate_every_run_and_read_shac_levels(tmp_path):
    exp = {
        "task": "T",
        "eval_task": "T-Play",
        "seeds": [1],
        "base_overrides": ["env.kp=80.0", "env.events.push=0"],
        "runs": {"shac": {"overrides": ["env.commands.standing=0.1"]}, "ppo": {"algo": "ppo"}},
    }
    trained = {}
    for run in exp["runs"]:
        directory = tmp_path / run / "seed1"
        (directory / "run").mkdir(parents=True)
        (directory / "run" / "model_500.pt").write_bytes(b"")
        trained[(run, 1)] = Job(f"train {run}", str(directory), [], {"run_dir": str(directory / "run")})
    ctx = ExperimentContext(REPO, str(tmp_path), str(tmp_path / "out"), {"device": "cpu", "parallel_jobs": 1})
    jobs, levels = terrain_jobs(
        ctx, exp, trained, {"num_envs": 120, "seed": 71, "mujoco_episodes": None, "checkpoints": 1}
    )
    evals, flats, flattened = jobs["terrain"], jobs["terrain_flat"], jobs["terrain_flattened_scan"]
    argv = evals[("shac", 1)].argv
    assert argv[1].endswith("scripts/experiments/evaluate_terrain.py")
    assert argv[2:] == [
        "--task",
        "T-Play",
        "--algo",
        "shac",
        "--checkpoint",
        str(tmp_path / "shac" / "seed1" / "run" / "model_500.pt"),
        "--num_envs",
        "120",
        "--seed",
        "71",
        "--device",
        "cpu",
        "--out",
        str(tmp_path / "shac" / "seed1" / "terrain" / "eval_terrain.json"),
        "env.kp=80.0",
    ]
    flat = flats[("shac", 1)].argv
    at = argv.index("--out")
    assert (
        flat
        == [*argv[:at], "--flat", "--out", str(tmp_path / "shac" / "seed1" / "terrain_flat" / "eval_terrain.json")]
        + argv[at + 2 :]
    )
    assert flats[("shac", 1)].directory != evals[("shac", 1)].directory
    assert flattened[("shac", 1)].argv == [
        *argv[:at],
        "--flatten_scan",
        "--out",
        str(tmp_path / "shac" / "seed1" / "terrain_flattened_scan" / "eval_terrain.json"),
        *argv[at + 2 :],
    ]
    assert set(flattened) == set(evals)
    assert jobs["terrain_forward_commands"][("shac", 1)].argv == [
        *argv[:at],
        "--forward_commands",
        "--out",
        str(tmp_path / "shac" / "seed1" / "terrain_forward_commands" / "eval_terrain.json"),
        *argv[at + 2 :],
    ]
    assert evals[("ppo", 1)].argv[evals[("ppo", 1)].argv.index("--algo") + 1] == "ppo"
    assert set(flats) == set(evals)
    assert list(levels) == [("shac", 1)]  # rsl_rl's checkpoints hold no levels
    assert levels[("shac", 1)].argv[1:] == [
        os.path.join(REPO, "scripts", "experiments", "terrain_levels.py"),
        str(tmp_path / "shac" / "seed1" / "run"),
        "--out",
        str(tmp_path / "shac" / "seed1" / "terrain_levels" / "terrain_levels.json"),
    ]


def test_terrain_tables_load_what_the_jobs_wrote(tmp_path):
    exp = {"task": "T", "eval_task": "T-Play", "seeds": [1], "runs": {"shac": {}}}
    directory = tmp_path / "shac" / "seed1"
    (directory / "run").mkdir(parents=True)
    _checkpoint(directory / "run" / "model_50.pt", 50, [0, 1, 1, 1])
    (directory / "run" / "model_25.pt").write_bytes(b"")  # the one periodic checkpoint before the final one
    trained = {("shac", 1): Job("train shac", str(directory), [], {"run_dir": str(directory / "run")})}
    ctx = ExperimentContext(REPO, str(tmp_path), str(tmp_path / "out"), {"device": "cpu", "parallel_jobs": 1})
    settings = {"num_envs": 6, "seed": 71, "mujoco_episodes": None, "checkpoints": 2}
    jobs, levels = terrain_jobs(ctx, exp, trained, settings)
    earlier = checkpoint_terrain_jobs(ctx, exp, trained, settings)[("shac", 1)][25]
    causes = fall_cause_jobs(ctx, exp, trained, settings)[("shac", 1)]
    assert causes.argv[1].endswith("scripts/experiments/fall_causes.py")
    assert causes.argv[causes.argv.index("--out") + 1] == str(directory / "fall_causes" / "fall_causes.json")
    assert causes.argv[causes.argv.index("--seed") + 1] == "71" and "--num_envs" in causes.argv
    cause_row = {"episodes": 6, "falls": 4, "rolled": 3, "lateral": 2, "backward": 1, "hanging": 4}
    flat_groups = {"type flat": {"episodes": 6, "tracking_error": 0.25, "fall_rate": 0.0}}
    for job, name, content in (
        (jobs["terrain"][("shac", 1)], "eval_terrain.json", {"summary": "", "groups": _groups(0.5, 0.3)}),
        (jobs["terrain_flat"][("shac", 1)], "eval_terrain.json", {"summary": "", "groups": flat_groups}),
        (jobs["terrain_flattened_scan"][("shac", 1)], "eval_terrain.json", {"summary": "", "groups": _groups(1, 0.6)}),
        (jobs["terrain_forward_commands"][("shac", 1)], "eval_terrain.json", {"summary": "", "groups": flat_groups}),
        (levels[("shac", 1)], "terrain_levels.json", level_record([(50, 3200, torch.tensor([0, 1, 1, 1]), 2)])),
        (causes, "fall_causes.json", {"groups": {"all": cause_row | {"hanging_window_share_survivors": 0.05}}}),
        (earlier, "eval_terrain.json", {"summary": "", "groups": _groups(1, 0.3)}),
    ):  # completed jobs (done.json with their command) are reused, not run
        os.makedirs(job.directory)
        with open(os.path.join(job.directory, name), "w") as f:
            json.dump(content, f)
        with open(job.done_path, "w") as f:
            json.dump({"argv": job.argv, "wall_s": 1.0}, f)
    out = terrain_tables(ctx, exp, trained, settings)
    per_terrain, over_checkpoints, curriculum, fall_table = out["tables"]
    assert "| shac | 1 | 25, 50 | 12 | 83.3 | 16.7 |" in over_checkpoints  # falls 100 % at 25, 66.7 % at 50
    assert out["terrain_checkpoints"]["shac"]["iterations"] == {1: [25, 50]}
    assert "checkpoints" not in out  # the key of run()'s final checkpoints, which this must not overwrite
    assert "| all | shac | 1 | 6 | 4 | 75 | 50 | 25 | 100 | 5.0 |" in fall_table
    assert out["fall_causes"]["shac"]["all"]["rolled [% of falls]"] == [75.0]
    assert (
        "6 envs on the terrain of seed 71" in per_terrain and "| all | shac | 1 | 6 | 66.7 | - | 0.367 |" in per_terrain
    )
    assert "| flat ground | shac | 1 | 6 | 0.0 | - | 0.250 |" in per_terrain
    assert out["terrain"]["shac"]["flat ground"]["tracking error [m/s]"] == [0.25]
    assert "| flattened scan | shac | 1 | 6 | 100.0 | - | 0.567 |" in per_terrain
    assert "| forward commands | shac | 1 | 6 | 0.0 | - | 0.250 |" in per_terrain
    assert "`forward commands`" in per_terrain and "uniform in -1..1 m/s" in per_terrain
    assert "| shac | 1 | 50 | 0.00 | 0.75 | 25.0 | 75.0 |" in curriculum
    assert out["curriculum"] == {"shac seed 1": {"iteration": [50], "mean_level": [0.75]}}
    assert out["terrain"]["shac"]["level 10"]["falls [%]"] == [100.0]
    assert "speed" not in out  # evaluations from before speed_profile: no table by command speed


def _band(lo, hi, steps, speed, along, error):
    return {
        "band": [lo, hi],
        "steps": steps,
        "command_speed": speed,
        "speed_along_command": along,
        "tracking_error": error,
    }


def test_speed_table_per_evaluation_run_and_band_over_seeds():
    exp = {"seeds": [1], "runs": {"a": {"seeds": [1, 2]}, "b": {}}}
    terrain = {
        ("a", 1): {"speed_profile": [_band(0.0, 0.25, 10, 0.1, 0.05, 0.1), _band(1.0, None, 30, 1.2, 0.5, 0.7)]},
        ("a", 2): {"speed_profile": [_band(1.0, None, 40, 1.2, 0.7, 0.5)]},
        ("b", 1): {"groups": {}},  # from before speed_profile: left out
    }
    flat = {("b", 1): {"speed_profile": [_band(0.5, 0.75, 5, 0.6, 0.6, 0.1)]}}
    table, numbers = speed_table(exp, {"terrain": terrain, "flat ground": flat})
    lines = table.splitlines()
    assert lines[0] == (
        "| evaluation | run | seeds | command speed band [m/s] | steps [%] | command speed [m/s] | "
        "speed along the command [m/s] | tracking error [m/s] |"
    )
    assert lines[2] == "| terrain | a | 1 | 0.00-0.25 | 25.0 | 0.10 | 0.05 | 0.100 |"
    assert lines[3] == (
        "| terrain | a | 1, 2 | >= 1.00 | 87.5 +- 12.5 (75.0, 100.0) | 1.20 +- 0.00 (1.20, 1.20) | "
        "0.60 +- 0.10 (0.50, 0.70) | 0.600 +- 0.100 (0.700, 0.500) |"
    )
    assert lines[4] == "| flat ground | b | 1 | 0.50-0.75 | 100.0 | 0.60 | 0.60 | 0.100 |"
    assert len(lines) == 5
    assert numbers["a"]["terrain"][">= 1.00"]["speed along the command [m/s]"] == [0.5, 0.7]
    assert "terrain" not in numbers["b"]


def _write_done(job, name: str, content: dict) -> None:
    """A completed job: its result file and done.json with its command (reused by the runner, not run)."""
    os.makedirs(job.directory)
    with open(os.path.join(job.directory, name), "w") as f:
        json.dump(content, f)
    with open(job.done_path, "w") as f:
        json.dump({"argv": job.argv, "wall_s": 1.0}, f)


def _mujoco_setup(tmp_path, run: str):
    """(ctx, trained, settings) for the MuJoCo jobs of one trained (run, seed 1) under ``tmp_path``."""
    directory = tmp_path / run / "seed1"
    (directory / "run").mkdir(parents=True)
    trained = {(run, 1): Job(f"train {run}", str(directory), [], {"run_dir": str(directory / "run")})}
    ctx = ExperimentContext(REPO, str(tmp_path), str(tmp_path / "out"), {"device": "cpu", "parallel_jobs": 1})
    return ctx, trained, {"num_envs": 6, "seed": 71, "mujoco_episodes": 2, "checkpoints": 1}


def test_mujoco_terrain_jobs_and_table(tmp_path):
    exp = {"task": "T", "eval_task": "T-Play", "seeds": [1], "runs": {"shac": {}}}
    ctx, trained, settings = _mujoco_setup(tmp_path, "shac")
    directory = tmp_path / "shac" / "seed1"
    jobs = mujoco_jobs(ctx, exp, trained, settings)
    full, feet = jobs["terrain_mujoco"][("shac", 1)], jobs["terrain_mujoco_feet_only"][("shac", 1)]
    assert full.argv[1].endswith("scripts/deploy/sim2sim.py")
    assert full.argv[2:] == [
        str(directory / "run" / "exported"),
        "--sim",
        "mujoco",
        "--terrain",
        "--terrain_seed",
        "71",
        "--episodes",
        "2",
        "--out",
        str(directory / "terrain_mujoco" / "sim2sim_terrain.json"),
    ]
    assert feet.argv[:-2] == [*full.argv[:-2], "--feet_only"] and feet.directory != full.directory
    for job, groups in ((full, _groups(0.25, 0.3)), (feet, _groups(0.75, 0.4))):
        _write_done(job, "sim2sim_terrain.json", {"variants": {"nominal": {"fall_rate": 0.5, "groups": groups}}})
    out = mujoco_table(ctx, exp, trained, settings)
    assert "--terrain_seed 71 --episodes 2" in out["table"]
    # every episode: the episode-weighted mean over the types, as in ours: (4 * 0.25 + 2 * 1) / 6 and (4 * 0.75 + 2) / 6
    assert "| all | shac | 1 | 6 | 50.0 | - | 0.367 |" in out["table"]
    assert "| MuJoCo, feet only | shac | 1 | 6 | 83.3 | - | 0.433 |" in out["table"]
    assert out["terrain_mujoco"]["shac"]["MuJoCo, feet only"]["falls [%]"] == [pytest.approx(500 / 6)]
    assert out["terrain_mujoco"]["shac"]["level 10"]["falls [%]"] == [100.0]
    assert "--terrain_proportions" not in out["table"]


def test_mujoco_runs_on_the_evaluations_mix_when_training_changed_it(tmp_path):
    """A run trained on other sub-terrain proportions (``train_overrides``: the bundle carries them) runs in MuJoCo
    on the evaluations' mix, the rough task's proportions; a proportion the run itself sets (its evaluations see it
    too) is left to the bundle; an unknown sub-terrain is refused, naming it."""
    prefix = "env.terrain.generator.sub_terrains."
    exp = {
        "task": "T",
        "eval_task": "T-Play",
        "seeds": [1],
        "train_overrides": [f"{prefix}random_rough.proportion=0.0", f"{prefix}hf_pyramid_slope.proportion=0.0"],
        "runs": {"a": {}, "b": {"overrides": [f"{prefix}hf_pyramid_slope.proportion=0.5"]}},
    }
    assert evaluation_proportions(exp, "a") == ["hf_pyramid_slope=0.1", "random_rough=0.2"]
    assert evaluation_proportions(exp, "b") == ["random_rough=0.2"]
    assert evaluation_proportions({"runs": {"a": {}}}, "a") == []
    with pytest.raises(ValueError, match=r"\['gravel'\]"):
        evaluation_proportions({"train_overrides": [f"{prefix}gravel.proportion=1"], "runs": {"a": {}}}, "a")

    ctx, trained, settings = _mujoco_setup(tmp_path, "a")
    jobs = mujoco_jobs(ctx, exp, trained, settings)
    full = jobs["terrain_mujoco"][("a", 1)]
    at = full.argv.index("--terrain_proportions")
    assert full.argv[at : at + 4] == ["--terrain_proportions", "hf_pyramid_slope=0.1", "random_rough=0.2", "--out"]
    for job in (full, jobs["terrain_mujoco_feet_only"][("a", 1)]):
        _write_done(job, "sim2sim_terrain.json", {"variants": {"nominal": {"groups": _groups(0.0, 0.3)}}})
    out = mujoco_table(ctx, exp, trained, settings)
    assert "run on the evaluations' mix: `--terrain_proportions hf_pyramid_slope=0.1 random_rough=0.2`" in out["table"]


def test_evaluations_keep_the_level_layout_of_a_run_trained_without_curriculum():
    exp = {
        "base_overrides": ["env.terrain.generator.num_rows=5"],
        "runs": {"r": {"overrides": ["env.terrain.curriculum=false", "env.rewards.foot_lift=1.0", "agent.horizon=8"]}},
    }
    assert play_overrides(exp, "r") == ["env.terrain.generator.num_rows=5", "env.rewards.foot_lift=1.0"]


def test_flattened_scan_policy_feeds_each_row_its_scan_mean():
    """evaluate_terrain.py --flatten_scan: the scan's entries read their row's mean, the others are untouched, and
    the caller's observation is not modified."""
    obs = torch.arange(24.0).reshape(2, 12) ** 2
    before = obs.clone()
    fed = []
    act = flattened_scan_policy(lambda o: fed.append(o) or o[:, :1], slice(3, 9))
    act(obs)
    (seen,) = fed
    torch.testing.assert_close(seen[:, 3:9], before[:, 3:9].mean(dim=1, keepdim=True).expand(2, 6))
    assert torch.equal(seen[:, :3], before[:, :3]) and torch.equal(seen[:, 9:], before[:, 9:])
    assert torch.equal(obs, before)


def test_told_type_policy_sets_the_oracle_one_hot():
    """evaluate_terrain.py --oracle_type: the oracle's entries read the told type's one-hot, the others are
    untouched, and the caller's observation is not modified."""
    obs = torch.rand(3, 10)
    before = obs.clone()
    fed = []
    told_type_policy(lambda o: fed.append(o) or o[:, :1], slice(4, 8), 2)(obs)
    (seen,) = fed
    assert torch.equal(seen[:, 4:8], torch.tensor([[0.0, 0.0, 1.0, 0.0]]).expand(3, 4))
    assert torch.equal(seen[:, :4], before[:, :4]) and torch.equal(seen[:, 8:], before[:, 8:])
    assert torch.equal(obs, before)


def test_forward_commands_are_sim2sims_held_over_each_episode():
    """evaluate_terrain.py --forward_commands: forward commands uniform in sim2sim's range, no lateral, yaw-rate or
    heading command, none standing, and an env's command changes only when its episode ends."""
    from isaaclab_diffsim.tasks.direct.locomotion.velocity import DiffVelocityEnv, DiffVelocityEnvCfg

    cfg = DiffVelocityEnvCfg(num_envs=64)
    cfg.episode_length_s = 0.1  # 5 steps: the loop below crosses two time-outs
    cfg.commands.resampling_time_s = 0.04  # every 2 steps, unless the episode holds its command
    use_forward_commands(cfg)
    env = DiffVelocityEnv(cfg)
    env.reset(seed=3)
    lo, hi = FORWARD_VX_RANGE
    with torch.no_grad():
        for _ in range(12):
            before = env.commands.clone()
            env.step(torch.zeros(64, 12))
            ended = env.reset_time_outs | env.reset_terminated
            assert torch.equal(env.commands[~ended], before[~ended])
            assert torch.all(env.commands[:, 1:] == 0.0) and torch.all(env.commands[:, 0].abs() > 0)
            assert torch.all((env.commands[:, 0] >= lo) & (env.commands[:, 0] <= hi))
    assert not env.is_heading_env.any() and not env.is_standing_env.any()
    assert env.commands[:, 0].min() < 0.5 * lo and env.commands[:, 0].max() > 0.5 * hi


def test_first_episode_tilt_keeps_the_cause_of_each_envs_first_failure():
    """evaluate_terrain.py's tilted falls: an env's first done decides; a later episode's tilt does not count."""
    env = type("Env", (), {"num_envs": 3, "device": "cpu"})()
    tilt = FirstEpisodeTilt(env)
    steps = [  # (terminated, timed out, tilted) per env
        ([True, False, False], [False, True, False], [False, False, False]),  # env 0 low, env 1 times out
        ([True, True, True], [False, False, False], [True, True, True]),  # tilts: only env 2's first episode
    ]
    for terminated, time_outs, tilted in steps:
        env.reset_terminated, env.reset_time_outs = torch.tensor(terminated), torch.tensor(time_outs)
        env.failure_tilted = torch.tensor(tilted)
        tilt()
    assert tilt.tilted.tolist() == [False, False, True] and tilt.ended.all()


def test_first_episode_excursion_measures_each_base_from_its_tile_centre_until_its_first_done():
    """evaluate_terrain.py's tile leavers, on 8 m x 6 m tiles: env 0 passes x = 4 m, env 1 stays inside (y = 2.9 m),
    env 2 passes y = 3 m only in its second episode, env 3 only at the step that reset it (not read)."""
    env = type("Env", (), {"num_envs": 4, "device": "cpu"})()
    env.env_origins = torch.tensor([[10.0, 0.0, 0.0], [0.0, 10.0, 0.0], [0.0, 0.0, 0.0], [5.0, 5.0, 0.0]])
    excursion = FirstEpisodeExcursion(env, (8.0, 6.0))
    steps = [  # base xy offsets from the origins, terminated, timed out
        ([[3.0, 0.0], [0.0, -2.9], [0.0, 1.0], [0.0, 0.0]], [False] * 4, [False] * 4),
        ([[-4.5, 0.0], [1.0, 2.9], [0.0, 1.0], [9.0, 9.0]], [False, False, True, True], [False] * 4),
        ([[0.0, 0.0], [0.0, 0.0], [0.0, 3.5], [9.0, 9.0]], [False] * 4, [False, True, False, False]),
    ]
    for offsets, terminated, time_outs in steps:
        env.q = torch.cat([env.env_origins[:, :2] + torch.tensor(offsets), torch.zeros(4, 1)], dim=1)
        env.reset_terminated, env.reset_time_outs = torch.tensor(terminated), torch.tensor(time_outs)
        excursion()
    assert excursion.left_tile.tolist() == [True, False, False, False]
    assert torch.allclose(excursion.reach, torch.tensor([[4.5, 0.0], [1.0, 2.9], [0.0, 1.0], [0.0, 0.0]]))


def test_checkpoints_table_separates_the_spread_over_seeds_from_the_drift_over_checkpoints():
    exp = {"seeds": [1], "runs": {"a": {"seeds": [1, 2]}, "b": {}}}
    # all episodes: falls (4 f + 2) / 6, tracking (4 t + 1) / 6 (_groups' two types)
    evals = {
        ("a", 1): {150: {"groups": _groups(1.0, 0.4)}, 100: {"groups": _groups(0.25, 0.4)}},  # falls 50 %, 100 %
        ("a", 2): {100: {"groups": _groups(0.25, 0.4)}, 150: {"groups": _groups(0.25, 0.4)}},  # 50 %, 50 %
        ("b", 1): {},
    }
    table, numbers = checkpoints_table(exp, evals)
    assert (
        "| a | 1, 2 | 100, 150 | 24 | 62.5 +- 12.5 (75.0, 50.0) | 12.5 | 0.433 +- 0.000 (0.433, 0.433) | 0.000 |"
        in (table)
    )
    assert "| b |" not in table  # no checkpoint evaluated
    assert numbers["a"]["iterations"] == {1: [100, 150], 2: [100, 150]}
    assert numbers["a"]["falls [%]"] == {1: [50.0, 100.0], 2: [50.0, 50.0]}


def test_checkpoint_terrain_jobs_read_the_periodic_checkpoints_before_the_final_one(tmp_path):
    exp = {"task": "T", "eval_task": "T-Play", "seeds": [1], "runs": {"shac": {}}}
    directory = tmp_path / "shac" / "seed1"
    (directory / "run").mkdir(parents=True)
    for name in ("model_50.pt", "model_100.pt", "model_120_interrupted.pt", "model_150.pt", "model_200.pt"):
        (directory / "run" / name).write_bytes(b"")
    trained = {("shac", 1): Job("train shac", str(directory), [], {"run_dir": str(directory / "run")})}
    ctx = ExperimentContext(REPO, str(tmp_path), str(tmp_path / "out"), {"device": "cpu", "parallel_jobs": 1})
    settings = {"num_envs": 6, "seed": 71, "mujoco_episodes": None, "checkpoints": 3}
    jobs = checkpoint_terrain_jobs(ctx, exp, trained, settings)[("shac", 1)]
    assert sorted(jobs) == [100, 150]  # the final model_200 is the per-terrain evaluation's; interrupted ones skipped
    final = terrain_jobs(ctx, exp, trained, settings)[0]["terrain"][("shac", 1)].argv
    argv = jobs[100].argv
    at = final.index("--checkpoint")
    assert argv[at + 1] == str(directory / "run" / "model_100.pt")
    assert argv[argv.index("--out") + 1] == str(directory / "terrain_checkpoints" / "model_100" / "eval_terrain.json")
    assert [a for i, a in enumerate(argv) if i not in (at + 1, argv.index("--out") + 1)] == [
        a for i, a in enumerate(final) if i not in (at + 1, final.index("--out") + 1)
    ]  # otherwise the per-terrain evaluation's command
    with pytest.raises(RuntimeError, match=r"terrain_eval.checkpoints=5: .* holds 3 periodic checkpoint\(s\) besides"):
        checkpoint_terrain_jobs(ctx, exp, trained, settings | {"checkpoints": 5})

    for it, job in jobs.items():  # completed jobs are reused; the table joins the final checkpoint's evaluation
        os.makedirs(job.directory)
        with open(os.path.join(job.directory, "eval_terrain.json"), "w") as f:
            json.dump({"summary": "", "groups": _groups(1.0 if it == 100 else 0.25, 0.4)}, f)
        with open(job.done_path, "w") as f:
            json.dump({"argv": job.argv, "wall_s": 1.0}, f)
    text, numbers = checkpoints_terrain(ctx, exp, trained, settings, {("shac", 1): {"groups": _groups(0.25, 0.4)}})
    assert numbers["shac"]["iterations"] == {1: [100, 150, 200]}
    assert numbers["shac"]["falls [%]"] == {1: [100.0, 50.0, 50.0]}
    assert "Over the last 3 checkpoints" in text and "| shac | 1 | 100, 150, 200 | 18 | 66.7 | 23.6 |" in text
