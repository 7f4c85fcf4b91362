"""Bad input to the command-line tools, as a new user gives it: each case runs the tool as a subprocess and expects
a non-zero exit, one line saying what is wrong and what to do, no traceback, and nothing written or overwritten.
All cases fail before an env is built (a few seconds each)."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch
import yaml

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
SHAC_KEYS = (
    "model_state_dict",
    "target_critic_state_dict",
    "actor_optimizer_state_dict",
    "critic_optimizer_state_dict",
    "iter",
)
PPO_KEYS = ("model_state_dict", "optimizer_state_dict", "iter")


def tool(script: str, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(REPO / "scripts" / script), *args],
        capture_output=True,
        text=True,
        cwd=cwd or REPO,
        timeout=300,
    )


def refused(proc: subprocess.CompletedProcess, *fragments: str) -> str:
    """The one-line error of a refused command (asserting no traceback and each fragment in it)."""
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0, f"accepted (rc 0):\n{out[-2000:]}"
    assert "Traceback" not in out, f"traceback instead of a one-line error:\n{out[-3000:]}"
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip() and "Warning" not in ln and "warn(" not in ln]
    assert lines, f"no error message:\n{out[-2000:]}"
    message = lines[-1]
    for f in fragments:
        assert f in message, f"{f!r} not in the message {message!r}"
    return message


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def fake_checkpoint(path: Path, keys: tuple[str, ...], num_envs: int = 64) -> Path:
    torch.save({**{k: {} for k in keys}, "iter": 5, "env_cfg": {"num_envs": num_envs}}, path)
    return path


def test_train_refuses_to_overwrite_a_run(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    ckpt = fake_checkpoint(run / "model_5.pt", SHAC_KEYS)
    before = digest(ckpt)
    msg = refused(tool("train.py", "--log_dir", str(run), "--max_iterations", "1"), "already holds checkpoints")
    assert "--resume auto" in msg
    assert digest(ckpt) == before and sorted(os.listdir(run)) == ["model_5.pt"], "the run folder was written to"


def test_train_refuses_zero_iterations_and_a_missing_gpu(tmp_path):
    refused(tool("train.py", "--max_iterations", "0", "--log_root", str(tmp_path)), "--max_iterations must be >= 1")
    refused(tool("train.py", "--num_envs", "0", "--log_root", str(tmp_path)), "--num_envs must be >= 1")
    if not torch.cuda.is_available():
        refused(tool("train.py", "--device", "cuda", "--log_root", str(tmp_path)), "no CUDA GPU", "--device cpu")
    assert not any(tmp_path.iterdir()), "a refused command created a run folder"


def test_train_refuses_a_missing_warm_start_checkpoint(tmp_path):
    missing = str(tmp_path / "flat" / "model_500.pt")
    refused(
        tool("train.py", f"agent.warm_start={missing}", "--log_root", str(tmp_path / "logs")),
        "agent.warm_start",
        missing,
    )
    assert not (tmp_path / "logs").exists(), "a refused command created a run folder"


def test_train_refuses_an_unknown_warm_start_task(tmp_path):
    refused(
        tool("train.py", "agent.warm_start_task=DiffSim-No-Such-Task", "--log_root", str(tmp_path / "logs")),
        "agent.warm_start_task",
        "DiffSim-No-Such-Task",
    )
    assert not (tmp_path / "logs").exists(), "a refused command created a run folder"


def test_train_resume_checks_come_before_the_env(tmp_path):
    ppo = fake_checkpoint(tmp_path / "ppo.pt", PPO_KEYS)
    refused(tool("train.py", "--resume", str(ppo), "--log_root", str(tmp_path / "logs")), "--algo ppo")
    shac = fake_checkpoint(tmp_path / "shac.pt", SHAC_KEYS, num_envs=8)
    refused(
        tool("train.py", "--resume", str(shac), "--num_envs", "4", "--log_root", str(tmp_path / "logs")),
        "trained with 8 envs",
        "--num_envs 8",
    )
    truncated = tmp_path / "model_7.pt"
    truncated.write_bytes(shac.read_bytes()[:100])
    refused(tool("train.py", "--resume", str(truncated), "--log_root", str(tmp_path / "logs")), str(truncated))
    refused(tool("train.py", "--resume", "auto", "--log_root", str(tmp_path / "logs")), "--resume auto needs --log_dir")
    empty = tmp_path / "empty_run"
    empty.mkdir()
    refused(tool("train.py", "--resume", "auto", "--log_dir", str(empty)), "holds no checkpoint")
    assert not (tmp_path / "logs").exists() and not any(empty.iterdir()), "a refused resume created files"


def test_play_refuses_bad_bundles_and_arguments(tmp_path):
    refused(tool("play.py", "--onnx", str(tmp_path / "missing")), "no such bundle folder")
    bundle = tmp_path / "bundle"
    bundle.mkdir()
    refused(tool("play.py", "--onnx", str(bundle)), "holds no io.yaml")
    from isaaclab_diffsim.deploy.io_spec import FORMAT_VERSION

    (bundle / "io.yaml").write_text(
        yaml.safe_dump({"format_version": FORMAT_VERSION, "controller": {"files": {"onnx": "policy.onnx"}}})
    )
    (bundle / "policy.onnx").write_bytes(b"\x08\x07\x12\x04trun")
    refused(tool("play.py", "--onnx", str(bundle)), "not a readable ONNX model")
    ppo = fake_checkpoint(tmp_path / "ppo.pt", PPO_KEYS)
    refused(tool("play.py", "--checkpoint", str(ppo)), "--algo ppo")
    refused(tool("play.py", "--checkpoint", str(ppo), "--episodes", "0"), "--episodes must be >= 1")
    refused(
        tool("play.py", "--checkpoint", str(ppo), "--episodes", "2", "--record", "x.usd", "--record_envs", "3"),
        "--record_envs must be in [1, 2]",
    )


def test_export_errors_are_one_line(tmp_path):
    refused(tool("export.py", "--checkpoint", str(tmp_path / "model_1.pt")), "no such file")
    foreign = tmp_path / "foreign.pt"
    torch.save({"weights": torch.zeros(2)}, foreign)
    refused(tool("export.py", "--checkpoint", str(foreign)), "neither a SHAC nor an rsl_rl PPO checkpoint")


def test_experiment_runner_needs_an_experiment(tmp_path):
    proc = tool("experiments/run.py")
    msg = refused(proc, "choose an experiment", "table1")
    assert "recipe" in msg
    assert "experiments:" in tool("experiments/run.py", "--help").stdout


def test_experiment_scripts_name_unknown_robots_and_tasks(tmp_path):
    refused(tool("experiments/robot_statics.py", "--robots", "spot"), "unknown robot", "go2")
    refused(tool("experiments/robot_statics.py", "--contact_models", "rigid"), "unknown contact model", "smoothed")
    proc = tool("experiments/gradient_norm_vs_horizon.py", "--tasks", "DiffSim-Nope", "--out", str(tmp_path / "g"))
    refused(proc, "unknown task", "DiffSim-Velocity-Flat-Go2-Direct")
    assert not (tmp_path / "g").exists()


@pytest.mark.parametrize("script, flags", [("evaluate_terrain.py", ("--flat",)), ("fall_causes.py", ())])
def test_terrain_rollout_scripts_refuse_a_task_without_terrain(tmp_path, script, flags):
    ckpt = fake_checkpoint(tmp_path / "model_5.pt", SHAC_KEYS)
    out = tmp_path / "out.json"
    proc = tool(
        f"experiments/{script}",
        *("--task", "DiffSim-Velocity-Flat-AnymalC-Direct-Play", "--algo", "shac", "--checkpoint", str(ckpt)),
        *flags,
        *("--out", str(out)),
    )
    refused(proc, "DiffSim-Velocity-Flat-AnymalC-Direct-Play has no generated terrain", "needs a rough task")
    assert not out.exists()


def test_evaluate_terrain_refuses_a_flat_evaluation_of_an_oracle_policy(tmp_path):
    ckpt = fake_checkpoint(tmp_path / "model_5.pt", SHAC_KEYS)
    out = tmp_path / "out.json"
    proc = tool(
        "experiments/evaluate_terrain.py",
        *("--algo", "shac", "--checkpoint", str(ckpt), "--flat", "--out", str(out), "env.terrain_oracle=true"),
    )
    refused(proc, "--flat with env.terrain_oracle", "sub-terrain types observed")
    assert not out.exists()


@pytest.mark.parametrize(
    "overrides, message",
    [((), "the policy has no terrain oracle"), (("env.terrain_oracle=true",), "unknown sub-terrain 'stairs'; one of")],
)
def test_evaluate_terrain_refuses_a_told_type_it_cannot_tell(tmp_path, overrides, message):
    ckpt = fake_checkpoint(tmp_path / "model_5.pt", SHAC_KEYS)
    out = tmp_path / "out.json"
    args = ("--algo", "shac", "--checkpoint", str(ckpt), "--num_envs", "6", "--oracle_type", "stairs")
    small = ("env.terrain.generator.num_rows=3", "env.terrain.generator.num_cols=6", "env.asset_source=urdf")
    proc = tool("experiments/evaluate_terrain.py", *args, "--out", str(out), *small, *overrides)
    refused(proc, "--oracle_type", message)
    assert not out.exists()
