"""The warm-start stage's command line and its finished checkpoint (``agent.warm_start_task``)."""

from isaaclab_diffsim.rl.shac import ShacRunnerCfg
from isaaclab_diffsim.rl.warm_start_stage import finished_checkpoint, passed_overrides, stage_command, stage_dir


def test_only_the_shared_agent_overrides_reach_the_first_stage():
    overrides = [
        "agent.policy.actor_hidden_dims=[16]",
        "agent.horizon=4",
        "agent.algorithm.actor_learning_rate=5e-4",
        "agent.max_iterations=9",
        "agent.warm_start_task=X",
        "agent.save_interval=3",
        "agent.warm_start_obs_stats=first_obs",
        "env.terrain.max_init_terrain_level=2",
    ]
    assert passed_overrides(overrides) == overrides[:3]


def test_stage_command_resumes_a_started_stage_and_names_its_budget(tmp_path):
    cfg = ShacRunnerCfg(warm_start_task="Flat-Task", warm_start_iterations=7)
    folder = stage_dir(str(tmp_path))
    kw = dict(seed=5, device="cpu", num_envs=8, torch_threads=1, overrides=["agent.horizon=4", "env.x=1"])
    cmd = stage_command("py", "train.py", cfg, folder, **kw)
    assert cmd[:2] == ["py", "train.py"] and "--resume" not in cmd
    pairs = dict(zip(cmd[2::2], cmd[3::2]))
    assert pairs["--task"] == "Flat-Task" and pairs["--log_dir"] == folder and pairs["--seed"] == "5"
    assert pairs["--num_envs"] == "8" and pairs["--max_iterations"] == "7" and pairs["--eval_episodes"] == "0"
    assert cmd[-1] == "agent.horizon=4" and "env.x=1" not in cmd
    (tmp_path / "warm_start").mkdir()
    (tmp_path / "warm_start" / "model_3_interrupted.pt").write_bytes(b"x")
    assert stage_command("py", "train.py", cfg, folder, **kw)[-3:-1] == ["--resume", "auto"]


def test_a_stage_is_finished_only_with_a_regular_checkpoint_and_its_bundle(tmp_path):
    folder = tmp_path / "warm_start"
    assert finished_checkpoint(str(folder)) is None
    folder.mkdir()
    (folder / "model_5_interrupted.pt").write_bytes(b"x")
    (folder / "exported").mkdir()
    (folder / "exported" / "policy.pt").write_bytes(b"x")
    assert finished_checkpoint(str(folder)) is None
    (folder / "model_5.pt").write_bytes(b"x")
    assert finished_checkpoint(str(folder)) == str(folder / "model_5.pt")
    (folder / "exported" / "policy.pt").unlink()
    assert finished_checkpoint(str(folder)) is None
