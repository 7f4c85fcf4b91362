"""The experiment runner's pieces: config composition (hydra), subprocess jobs (reuse, failure, interruption),
Table 1's aggregation and the generated results page."""

import json
import os
import sys

import numpy as np
import pytest
from hydra import compose, initialize_config_dir
from hydra.errors import ConfigCompositionException
from omegaconf import OmegaConf
from orchestration.jobs import Job, run_jobs
from orchestration.training import latest_checkpoint

from isaaclab_diffsim.experiments import table1
from isaaclab_diffsim.experiments.results_page import write_result, write_results_page

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CONFIGS = os.path.join(REPO, "configs")
EXPERIMENTS = sorted(f[:-5] for f in os.listdir(os.path.join(CONFIGS, "experiment")) if f.endswith(".yaml"))


def composed(*overrides):
    with initialize_config_dir(config_dir=CONFIGS, version_base="1.3"):
        return compose(config_name="run", overrides=list(overrides))


@pytest.mark.parametrize("name", EXPERIMENTS)
@pytest.mark.parametrize("size", ["cpu", "gpu"])
def test_every_experiment_composes_with_every_size(name, size):
    cfg = composed(f"experiment={name}", f"size={size}")
    exp = OmegaConf.to_container(cfg.experiment, resolve=True)
    assert exp["name"] == name and exp["description"]
    assert cfg.size.name == size and cfg.size.parallel_jobs >= 1


def test_every_first_stage_is_valid():
    from orchestration.first_stage import first_stage_spec

    for name in EXPERIMENTS:
        exp = OmegaConf.to_container(composed(f"experiment={name}").experiment, resolve=True)
        if "runs" in exp:
            first_stage_spec(exp)  # raises on a bad one


def test_bad_key_and_bad_group_are_refused():
    with pytest.raises(ConfigCompositionException):
        composed("experiment=table1", "size.no_such_key=3")
    with pytest.raises(ConfigCompositionException):
        composed("experiment=no_such_experiment")


def test_experiment_scripts_exist():
    for name in EXPERIMENTS:
        cfg = composed(f"experiment={name}")
        if cfg.experiment.kind == "script":
            assert os.path.isfile(os.path.join(REPO, cfg.experiment.script))


def _job(tmp_path, name, code):
    return Job(name, str(tmp_path / name), [sys.executable, "-c", code])


def test_jobs_run_once_and_are_reused(tmp_path):
    marker = tmp_path / "count"
    code = f"open({str(marker)!r}, 'a').write('x'); print('hello')"
    jobs = [_job(tmp_path, "a", code), _job(tmp_path, "b", code)]
    run_jobs(jobs, parallel=2)
    assert marker.read_text() == "xx"
    assert all(j.is_done() for j in jobs) and "hello" in open(jobs[0].log_path).read()
    run_jobs(jobs, parallel=2)
    assert marker.read_text() == "xx"  # complete jobs are not run again


def test_completed_job_with_another_command_is_refused(tmp_path):
    run_jobs([_job(tmp_path, "a", "print(1)")], parallel=1)
    with pytest.raises(RuntimeError, match="different command"):
        run_jobs([_job(tmp_path, "a", "print(2)")], parallel=1)


def test_failed_job_is_reported_and_not_marked_done(tmp_path):
    ok, bad = _job(tmp_path, "ok", "print(1)"), _job(tmp_path, "bad", "raise SystemExit('boom')")
    with pytest.raises(RuntimeError, match="bad .*exit 1.*boom"):
        run_jobs([bad, ok], parallel=1)
    assert ok.is_done() and not bad.is_done()


def test_latest_checkpoint(tmp_path):
    assert latest_checkpoint(str(tmp_path)) is None
    for it in (50, 100, 1000, 150):
        (tmp_path / f"model_{it}.pt").write_bytes(b"")
    (tmp_path / "model_final.pt").write_bytes(b"")
    assert latest_checkpoint(str(tmp_path)) == str(tmp_path / "model_1000.pt")
    (tmp_path / "model_1000_interrupted.pt").write_bytes(b"")
    assert latest_checkpoint(str(tmp_path)) == str(tmp_path / "model_1000.pt")
    (tmp_path / "model_1020_interrupted.pt").write_bytes(b"")
    assert latest_checkpoint(str(tmp_path)) == str(tmp_path / "model_1020_interrupted.pt")


def test_table1_summary_is_mean_and_std_over_seeds():
    exp = {
        "seeds": [1, 2],
        "runs": {"shac_soft": {"algo": "shac", "contact_model": "soft"}},
        "eval_contact_models": ["hard"],
    }
    evals = {
        ("shac_soft", 1): {"models": {"hard": {"returns": [1.0, 3.0], "tracking_errors": [0.1, 0.3], "falls": [0, 1]}}},
        ("shac_soft", 2): {"models": {"hard": {"returns": [4.0, 4.0], "tracking_errors": [0.4, 0.4], "falls": [0, 0]}}},
    }
    text, numbers = table1.summarize(exp, evals)
    np.testing.assert_allclose(numbers["shac_soft"]["hard"]["returns"], [2.0, 4.0])
    np.testing.assert_allclose(numbers["shac_soft"]["hard"]["falls"], [50.0, 0.0])
    assert (
        "| SHAC, soft | hard | 3.0 +- 1.0 (2.0, 4.0) | 0.300 +- 0.100 (0.200, 0.400) | 25.0 +- 25.0 (50.0, 0.0) |"
        in text
    )


def test_results_page_lists_each_experiment_with_its_command(tmp_path):
    for name in ("gait", "table1"):
        out = tmp_path / "results" / name
        out.mkdir(parents=True)
        write_result(
            str(out),
            {
                "name": name,
                "description": f"about {name}",
                "command": f"run.py experiment={name}",
                "config": "",
                "machine": "cpu",
                "wall_s": 90.0,
                "tables": ["| a |"],
                "figures": ["f.png"],
                "jobs": {"count": 3, "wall_s": 600.0},
            },
        )
    page = write_results_page(str(tmp_path / "results"), str(tmp_path / "docs" / "results.md"))
    text = open(page).read()
    assert text.index("## table1") < text.index("## gait")  # the paper's order
    assert "`run.py experiment=gait`" in text and "1.5 min" in text and "](../results/gait/f.png)" in text
    assert "its 3 jobs" in text and "10.0 min of process wall time" in text
    assert json.load(open(tmp_path / "results" / "gait" / "result.json"))["finished"]


@pytest.mark.integration
@pytest.mark.slow
def test_table1_and_gait_end_to_end_tiny(tmp_path):
    """The real runner on a tiny budget: trains every Table 1 run for 2 iterations, evaluates each in every contact
    model, writes the page; then the gait experiment reuses those runs (about 3 min on 2 cores)."""
    import subprocess

    common = [
        f"runs_dir={tmp_path / 'runs'}",
        f"results_dir={tmp_path / 'results'}",
        f"results_page={tmp_path / 'results.md'}",
        "size.num_envs=4",
        "size.eval_envs=4",
        "size.shac_iterations=2",
        "size.ppo_iterations=2",
        "experiment.seeds=[1]",
    ]
    run = [sys.executable, os.path.join(REPO, "scripts", "experiments", "run.py")]
    subprocess.run([*run, "experiment=table1", *common], check=True, cwd=REPO)
    result = json.load(open(tmp_path / "results" / "table1" / "result.json"))
    assert set(result["numbers"]) == {"shac_soft", "shac_hard", "shac_smoothed", "ppo_hard"}
    gait = [c for c in common if not c.startswith(("size.", "experiment."))]
    subprocess.run(
        [
            *run,
            "experiment=gait",
            "experiment.num_envs=2",
            "experiment.duration_s=3",
            "experiment.transient_s=1",
            *gait,
        ],
        check=True,
        cwd=REPO,
    )
    page = open(tmp_path / "results.md").read()
    assert "## table1" in page and "## gait" in page and "fig8_sim_to_sim.png" in page


def test_recipe_summary_reports_each_run_over_its_seeds():
    from isaaclab_diffsim.experiments.recipe import summarize

    def result(ret, lift):
        gait = {
            "period_s": [0.5, 0.7],
            "autocorrelation": [0.9, 0.7],
            "steps_per_s": [1.0, 3.0],
            "mean_air_time_s": [0.2, 0.4],
            "max_lift_m": [lift, lift],
        }
        return {
            "models": {
                "hard": {
                    "returns": [ret, ret + 2.0],
                    "tracking_errors": [0.1, 0.3],
                    "yaw_errors": [0.2, 0.4],
                    "falls": [0.0, 1.0],
                    "gait": gait,
                    "stand": {"drift_m": [0.05, 0.15], "steps_per_s": [0.0, 0.5]},
                }
            }
        }

    exp = {
        "seeds": [1],
        "runs": {"baseline": {"seeds": [1, 2]}, "kp85": {"overrides": ["env.kp=85.0"]}, "ppo": {"algo": "ppo"}},
    }
    evals = {
        ("baseline", 1): result(10.0, 0.02),
        ("baseline", 2): result(20.0, 0.04),
        ("kp85", 1): result(5.0, 0.1),
        ("ppo", 1): result(7.0, 0.1),
    }
    table, numbers = summarize(exp, evals)
    assert numbers["baseline"]["return"] == [11.0, 21.0]
    assert numbers["baseline"]["foot lift [cm]"] == pytest.approx([2.0, 4.0])
    assert numbers["kp85"]["falls [%]"] == [50.0] and numbers["kp85"]["gait period [s]"] == pytest.approx([0.6])
    lines = table.splitlines()
    assert lines[2].startswith("| baseline | baseline | 1, 2 | 16.0 +- 5.0 (11.0, 21.0) |")
    assert lines[3] == (
        "| kp85 | `env.kp=85.0` | 1 | 6.0 | 0.200 | 0.300 | 50.0 | 0.60 | 0.80 | 2.00 | 0.300 | 10.0 | 0.100 | 0.25 |"
    )
    assert lines[4].startswith("| ppo | PPO | 1 | 8.0 |")


def test_recipe_runs_train_with_their_algorithm():
    from orchestration.recipe import run_algo

    assert run_algo({}) == "shac" and run_algo({"algo": "ppo"}) == "ppo"
    with pytest.raises(ValueError, match="algo must be 'shac' or 'ppo'"):
        run_algo({"algo": "sac"})


def test_recipe_runs_may_name_their_own_task():
    from orchestration.recipe import run_tasks

    exp = {"task": "T", "eval_task": "T-Eval"}
    assert run_tasks(exp, {}) == ("T", "T-Eval")
    assert run_tasks(exp, {"task": "R"}) == ("R", "R-Play")  # the run's own -Play, not the experiment's
    assert run_tasks(exp, {"task": "R", "eval_task": "R-Eval"}) == ("R", "R-Eval")
    assert run_tasks({"task": "T"}, {}) == ("T", None)  # experiments that train only (deployability)


def test_recipe_run_overrides_read_the_jobs_seed(tmp_path):
    """``{seed}`` in a run's override reads each job's seed (its own first stage per seed), in training and in the
    evaluations; the factor column keeps the field."""
    from orchestration.context import ExperimentContext
    from orchestration.recipe import play_overrides, run_overrides, training_jobs

    exp = {
        "name": "e",
        "task": "T",
        "seeds": [3, 4],
        "runs": {"r": {"overrides": ["agent.warm_start=a/seed{seed}/m.pt", "env.kp={seed}0.0"]}},
    }
    size = {"device": "cpu", "num_envs": 2, "shac_iterations": 1}
    ctx = ExperimentContext(REPO, str(tmp_path / "runs"), str(tmp_path / "out"), size)
    jobs = training_jobs(ctx, exp)
    assert "agent.warm_start=a/seed3/m.pt" in jobs[("r", 3)].argv and "env.kp=40.0" in jobs[("r", 4)].argv
    assert play_overrides(exp, "r", 4) == ["env.kp=40.0"]
    assert run_overrides(exp, exp["runs"]["r"]) == ["agent.warm_start=a/seed{seed}/m.pt", "env.kp={seed}0.0"]


def test_train_overrides_reach_the_training_runs_only(tmp_path):
    """``train_overrides`` (a task's earlier defaults, pinned) come first in every training command, so that the
    run's own overrides win, and never reach the evaluations; a malformed list is refused naming the field."""
    from orchestration.context import ExperimentContext
    from orchestration.recipe import play_overrides, training_jobs

    exp = {
        "name": "e",
        "task": "T",
        "seeds": [3],
        "train_overrides": ["env.terrain.max_init_terrain_level=5", "env.kp=1.0"],
        "base_overrides": ["env.rewards.termination_penalty=0.0"],
        "runs": {"r": {"overrides": ["env.kp=2.0"]}},
    }
    size = {"device": "cpu", "num_envs": 2, "shac_iterations": 1}
    ctx = ExperimentContext(REPO, str(tmp_path / "runs"), str(tmp_path / "out"), size)
    argv = training_jobs(ctx, exp)[("r", 3)].argv
    tail = argv[argv.index("env.terrain.max_init_terrain_level=5") :]
    assert tail == [
        "env.terrain.max_init_terrain_level=5",
        "env.kp=1.0",
        "env.rewards.termination_penalty=0.0",
        "env.kp=2.0",
    ]
    assert play_overrides(exp, "r", 3) == ["env.rewards.termination_penalty=0.0", "env.kp=2.0"]
    exp["train_overrides"] = "env.kp=1.0"
    with pytest.raises(ValueError, match="train_overrides must be a list"):
        training_jobs(ctx, exp)


def test_gradient_horizon_table_reports_the_growth_per_robot():
    from isaaclab_diffsim.experiments.script_results import summary_table

    def rows(norms):
        return [{"horizon": h, "grad_norm_mean": n, "grad_norm_std": 0.0} for h, n in zip((2, 64), norms)]

    table = summary_table({"results": {"anymal_c hard": rows((0.5, 10.0)), "warp_quadruped hard": rows((0.5, 1.0))}})
    lines = table.splitlines()
    assert lines[0] == (
        "| horizon | anymal_c hard: grad norm mean +- std | warp_quadruped hard: grad norm mean +- std |"
    )
    assert lines[-1] == "| growth 64 / 2 | 20x | 2x |"


def test_script_experiment_needs_the_training_runs_it_names(tmp_path):
    from orchestration import script_experiment
    from orchestration.context import ExperimentContext

    exp = OmegaConf.to_container(composed("experiment=gradient_horizon_trained").experiment)
    ctx = ExperimentContext(REPO, str(tmp_path / "runs"), str(tmp_path / "out"), {"device": "cpu"})
    with pytest.raises(SystemExit, match="experiment=deployability` first"):
        script_experiment.run(ctx, exp)
    assert not (tmp_path / "runs" / "gradient_horizon_trained").exists()  # nothing ran


def _first_stage_exp(**stage):
    return {
        "name": "e",
        "task": "Rough",
        "seeds": [3, 4],
        "first_stage": {"task": "Flat", "num_envs": 8, **stage},
        "runs": {
            "a": {"overrides": ["agent.warm_start={first_stage}", "env.kp=1.0"]},
            "b": {"seeds": [5], "overrides": ["agent.warm_start={first_stage}"]},
            "c": {"seeds": [6], "overrides": ["env.kp=2.0"]},
        },
    }


def test_first_stage_is_trained_once_per_seed_and_read_by_the_runs(tmp_path):
    """The runs that read ``{first_stage}`` start from the shared stage of their seed (one job per seed, in a folder
    every experiment naming the same stage shares, with the task's registered iterations unless it names them)."""
    from orchestration.context import ExperimentContext
    from orchestration.first_stage import first_stage_jobs
    from orchestration.recipe import training_jobs

    size = {"device": "cpu", "num_envs": 2, "shac_iterations": 1}
    ctx = ExperimentContext(REPO, str(tmp_path / "runs"), str(tmp_path / "out"), size)
    exp = _first_stage_exp()
    stages = first_stage_jobs(ctx, exp)
    assert sorted(stages) == [3, 4, 5]  # run c's seed 6 reads no first stage
    argv = stages[4].argv
    assert argv[argv.index("--task") + 1] == "Flat" and argv[argv.index("--num_envs") + 1] == "8"
    assert argv[argv.index("--seed") + 1] == "4" and "--max_iterations" not in argv
    assert stages[4].directory == str(tmp_path / "runs" / "first_stages" / "Flat" / "cpu_envs8" / "seed4")
    other = dict(_first_stage_exp(), name="f")
    assert first_stage_jobs(ctx, other)[4].directory == stages[4].directory  # shared between experiments
    named = first_stage_jobs(ctx, _first_stage_exp(iterations=7))[4]
    assert named.argv[named.argv.index("--max_iterations") + 1] == "7" and named.directory.endswith("_it7/seed4")

    for job in stages.values():
        os.makedirs(job.info["run_dir"])
        for it in (5, 10):
            open(os.path.join(job.info["run_dir"], f"model_{it}.pt"), "w").close()
    jobs = training_jobs(ctx, exp, stages)
    assert f"agent.warm_start={stages[3].info['run_dir']}/model_10.pt" in jobs[("a", 3)].argv
    assert f"agent.warm_start={stages[5].info['run_dir']}/model_10.pt" in jobs[("b", 5)].argv
    assert "env.kp=2.0" in jobs[("c", 6)].argv


@pytest.mark.parametrize(
    "change, message",
    [
        ({"first_stage": None}, r"runs \['a', 'b'\] read \{first_stage\} but the experiment has no first_stage"),
        ({"first_stage": "Flat"}, "first_stage must be a mapping"),
        ({"first_stage": {"task": "Flat", "num_envs": 8, "envs": 3}}, r"unknown field\(s\) \['envs'\]"),
        ({"first_stage": {"num_envs": 8}}, "first_stage.task must be a task id"),
        ({"first_stage": {"task": "Flat", "num_envs": 0}}, "first_stage.num_envs must be an integer >= 1"),
        ({"first_stage": {"task": "Flat", "num_envs": 8, "iterations": 1.5}}, "first_stage.iterations must be"),
        ({"runs": {"c": {"overrides": ["env.kp=2.0"]}}}, "no run reads it"),
    ],
)
def test_bad_first_stage_is_refused(tmp_path, change, message):
    from orchestration.first_stage import first_stage_spec

    exp = {**_first_stage_exp(), **change}
    if exp["first_stage"] is None:
        del exp["first_stage"]
    with pytest.raises(ValueError, match=message):
        first_stage_spec(exp)


def test_first_stage_field_without_a_stage_job_is_refused():
    from orchestration.first_stage import with_first_stage

    assert with_first_stage(["env.kp=1.0"], {}, 3) == ["env.kp=1.0"]
    with pytest.raises(ValueError, match="no job for seed 3"):
        with_first_stage(["agent.warm_start={first_stage}"], {}, 3)
