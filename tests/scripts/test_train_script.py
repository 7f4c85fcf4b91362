"""The main path as a user runs it: scripts/train.py on the registered task (tiny, CPU) -> checkpoint -> export ->
evaluation; and (slow) SIGTERM -> model_<it>_interrupted.pt, exit 143, resume -> the uninterrupted run's result."""

import glob
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import torch
import yaml
from helpers.shac import assert_bitwise_equal
from helpers.training import TINY_SHAC

ROOT = Path(__file__).resolve().parents[2]
TINY = TINY_SHAC


def train_cmd(log_root, *extra):
    return [sys.executable, str(ROOT / "scripts" / "train.py"), "--log_root", str(log_root), *TINY, *extra]


def one_iteration_checkpoint(tmp_path) -> Path:
    """The checkpoint of a tiny one-iteration SHAC run (no evaluation) in ``tmp_path/run``."""
    log_dir = tmp_path / "run"
    args = ["--max_iterations", "1", "--eval_episodes", "0", "--log_dir", str(log_dir)]
    subprocess.run(train_cmd(tmp_path, *args), check=True, capture_output=True, timeout=600)
    return log_dir / "model_1.pt"


def run_dir(log_root) -> Path:
    (d,) = glob.glob(str(Path(log_root) / "shac" / "anymal_c_flat_diffsim" / "*"))
    return Path(d)


@pytest.mark.integration
def test_train_checkpoint_export_evaluate(tmp_path):
    proc = subprocess.run(
        train_cmd(tmp_path, "--max_iterations", "2", "--eval_episodes", "2"),
        capture_output=True,
        text=True,
        timeout=900,
        env=os.environ.copy(),
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "[eval] by command direction: " in proc.stdout and "[eval] along the commands: " in proc.stdout
    d = run_dir(tmp_path)
    assert (d / "model_2.pt").is_file()
    assert torch.load(d / "model_2.pt", weights_only=True)["iter"] == 2
    assert (d / "exported" / "policy.onnx").is_file() and (d / "exported" / "policy.pt").is_file()
    assert (d / "exported" / "io.yaml").is_file()
    env_cfg = torch.load(d / "model_2.pt", weights_only=True)["env_cfg"]  # plain data: weights_only reads it
    assert env_cfg["num_envs"] == 2 and env_cfg["episode_length_s"] == 0.2 and env_cfg["gait"]["period_s"] == 0.0
    params = yaml.full_load((d / "params" / "env.yaml").read_text())  # as Isaac Lab's load_yaml reads it
    assert params["num_envs"] == 2 and params["solver_cfg"]["contact_model"] == "smoothed"
    assert yaml.full_load((d / "params" / "agent.yaml").read_text())["horizon"] == 4
    assert "[SHAC] it 2/2" in proc.stdout
    eval_line = [ln for ln in proc.stdout.splitlines() if ln.startswith("[eval]")]
    assert eval_line and "episodes 2:" in eval_line[0] and "nan" not in eval_line[0], proc.stdout[-2000:]
    # a bad override is refused before anything runs, naming the field and the value
    bad = subprocess.run(
        train_cmd(tmp_path / "bad", "agent.algorithm.gamma=0"),
        capture_output=True,
        text=True,
        timeout=600,
        env=os.environ.copy(),
    )
    assert bad.returncode != 0 and "algorithm.gamma must be in (0, 1], got 0" in bad.stderr


@pytest.mark.integration
def test_warm_start_task_trains_its_stage_first_then_skips_it_once_finished(tmp_path):
    stage = ["agent.warm_start_task=DiffSim-Velocity-Flat-AnymalC-Direct", "agent.warm_start_iterations=1"]
    first = tmp_path / "run"
    args = [*stage, "--max_iterations", "1", "--eval_episodes", "0", "--seed", "3"]
    proc = subprocess.run(
        train_cmd(tmp_path, *args, "--log_dir", str(first)), capture_output=True, text=True, timeout=900
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    ckpt = first / "warm_start" / "model_1.pt"
    assert ckpt.is_file() and (first / "warm_start" / "exported" / "policy.pt").is_file()
    assert f"[train] warm-start stage: DiffSim-Velocity-Flat-AnymalC-Direct in {first / 'warm_start'}" in proc.stdout
    assert f"[SHAC] warm start from {ckpt}" in proc.stdout and (first / "model_1.pt").is_file()
    stage_params = yaml.full_load((first / "warm_start" / "params" / "agent.yaml").read_text())
    assert stage_params["seed"] == 3 and stage_params["horizon"] == 4 and stage_params["warm_start"] is None
    assert yaml.full_load((first / "params" / "agent.yaml").read_text())["warm_start"] == str(ckpt)
    # a run folder whose stage has finished (here: a copy) goes straight to the second stage
    second = tmp_path / "run2"
    shutil.copytree(first / "warm_start", second / "warm_start")
    again = subprocess.run(
        train_cmd(tmp_path, *args, "--log_dir", str(second)), capture_output=True, text=True, timeout=900
    )
    assert again.returncode == 0, again.stderr[-3000:]
    assert "warm-start stage:" not in again.stdout
    assert f"[SHAC] warm start from {second / 'warm_start' / 'model_1.pt'}" in again.stdout


@pytest.mark.integration
def test_an_oracle_policy_trains_and_evaluates_and_is_not_exported(tmp_path):
    log_dir = tmp_path / "oracle"
    small = ["env.terrain.generator.num_rows=3", "env.terrain.generator.num_cols=6", "env.asset_source=urdf"]
    flags = ["--task", "DiffSim-Velocity-Rough-AnymalC-Direct", "--max_iterations", "1", "--eval_episodes", "2"]
    cmd = [sys.executable, str(ROOT / "scripts" / "train.py"), *flags, "--log_dir", str(log_dir), *TINY]
    cmd += ["agent.warm_start_task=null", "env.terrain_oracle=true", *small]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "[train] not exported: env.terrain_oracle observes the sub-terrain type" in proc.stdout
    assert (log_dir / "model_1.pt").is_file() and not (log_dir / "exported").exists()
    assert "exported policy to" not in proc.stdout
    eval_line = [ln for ln in proc.stdout.splitlines() if ln.startswith("[eval]")]
    assert eval_line and "episodes 2:" in eval_line[0], proc.stdout[-2000:]


def _checkpoint_state(path):
    s = torch.load(path, weights_only=True)
    return {k: v for k, v in s.items() if k not in ("wall_time", "cfg", "infos")}


@pytest.mark.integration
@pytest.mark.slow
def test_sigterm_then_resume_equals_uninterrupted_run(tmp_path):
    args = ("--max_iterations", "4", "--eval_episodes", "0")
    ref = subprocess.run(train_cmd(tmp_path / "ref", *args), capture_output=True, text=True, timeout=900)
    assert ref.returncode == 0, ref.stderr[-3000:]

    proc = subprocess.Popen(
        train_cmd(tmp_path / "run", *args), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    out = []
    for line in proc.stdout:  # stop it while it trains iteration 2
        out.append(line)
        if line.startswith("[SHAC] it 1/4"):
            time.sleep(0.05)
            proc.send_signal(signal.SIGTERM)
            break
    rest, err = proc.communicate(timeout=600)
    out = "".join(out) + rest
    assert proc.returncode == 128 + signal.SIGTERM, err[-3000:]
    files = sorted(p.name for p in run_dir(tmp_path / "run").iterdir())
    interrupted = [f for f in files if f.endswith("_interrupted.pt")]
    assert interrupted in (["model_1_interrupted.pt"], ["model_2_interrupted.pt"]), files
    assert "exported" not in files and "[eval]" not in out

    resumed = subprocess.run(
        train_cmd(tmp_path / "resumed", *args, "--resume", str(run_dir(tmp_path / "run") / interrupted[0])),
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert "[SHAC] it 4/4" in resumed.stdout and "[SHAC] it 5/" not in resumed.stdout
    assert_bitwise_equal(
        _checkpoint_state(run_dir(tmp_path / "ref") / "model_4.pt"),
        _checkpoint_state(run_dir(tmp_path / "resumed") / "model_4.pt"),
    )


def _play(*args, overrides=()):
    cmd = [
        sys.executable,
        str(ROOT / "scripts" / "play.py"),
        "--episodes",
        "4",
        *args,
        "env.episode_length_s=1.0",
        *overrides,
    ]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=600, env=os.environ.copy())


@pytest.mark.integration
@pytest.mark.slow
def test_export_and_onnx_play_reproduce_torch_play(tmp_path):
    """scripts/export.py on a tiny run's checkpoint, then play.py --onnx (onnxruntime only) against play.py
    --checkpoint: the same episodes, the same metrics; a bundle with another joint order is refused."""
    proc = subprocess.run(
        train_cmd(tmp_path, "--max_iterations", "2", "--eval_episodes", "0"),
        capture_output=True,
        text=True,
        timeout=900,
        env=os.environ.copy(),
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    d = run_dir(tmp_path)
    exp = subprocess.run(
        [
            sys.executable,
            str(ROOT / "scripts" / "export.py"),
            "--checkpoint",
            str(d / "model_2.pt"),
            "--out",
            str(tmp_path / "bundle"),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert exp.returncode == 0, exp.stderr[-3000:]
    assert (tmp_path / "bundle" / "io.yaml").read_text() == (d / "exported" / "io.yaml").read_text()
    torch_play = _play(
        "--checkpoint",
        str(d / "model_2.pt"),
        overrides=("agent.policy.actor_hidden_dims=[16]", "agent.policy.critic_hidden_dims=[16]"),
    )
    onnx_play = _play("--onnx", str(tmp_path / "bundle"))
    assert torch_play.returncode == 0, torch_play.stderr[-2000:]
    assert onnx_play.returncode == 0, onnx_play.stderr[-2000:]

    def metrics(out):
        """(return mean, return std, tracking error, fall rate %, length) of the summary line."""
        (line,) = [ln for ln in out.splitlines() if ln.startswith("[play]") and "episodes 4:" in ln]
        number = r"(\S+)"
        m = re.search(
            rf"return {number} \+- {number}, lin-vel tracking error {number} m/s, fall rate {number} %, "
            rf"length {number} steps",
            line,
        )
        return [float(x) for x in m.groups()]

    ref, got = metrics(torch_play.stdout), metrics(onnx_play.stdout)
    # the same episodes: falls and lengths equal; float32 rounding differences between onnxruntime and torch grow
    # through the hard-contact rollouts to a few 1e-3 in the returns and tracking errors
    assert got[3:] == ref[3:] and np.allclose(got[:3], ref[:3], atol=0.02, rtol=0), (ref, got)
    bad = _play("--onnx", str(tmp_path / "bundle"), overrides=("env.asset_source=urdf",))  # legs LF, RF, LH, RH
    assert bad.returncode != 0 and "joint order differs" in bad.stderr, bad.stderr[-2000:]


PPO_TINY = [
    "--algo",
    "ppo",
    "--num_envs",
    "2",
    "--max_iterations",
    "1",
    "--eval_episodes",
    "0",
    "agent.num_steps_per_env=4",
    "agent.actor.hidden_dims=[16]",
    "agent.critic.hidden_dims=[16]",
    "agent.algorithm.num_mini_batches=1",
    "env.episode_length_s=0.2",
]


@pytest.mark.integration
def test_export_ppo_checkpoint_matches_training_bundle(tmp_path):
    """A PPO checkpoint carries the env and agent cfgs; scripts/export.py rebuilds from them the bundle train.py wrote
    (same io.yaml, same ONNX controller outputs); a file that neither runner wrote is refused."""
    import onnxruntime as ort

    proc = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "train.py"), "--log_root", str(tmp_path), *PPO_TINY],
        capture_output=True,
        text=True,
        timeout=900,
        env=os.environ.copy(),
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    (d,) = [Path(p) for p in glob.glob(str(tmp_path / "ppo" / "*" / "*"))]
    (ckpt,) = [p for p in d.glob("model_*.pt")]
    state = torch.load(ckpt, weights_only=True)  # plain data only
    assert state["env_cfg"]["num_envs"] == 2 and state["cfg"]["num_steps_per_env"] == 4
    exp = subprocess.run(
        [
            sys.executable,
            str(ROOT / "scripts" / "export.py"),
            "--checkpoint",
            str(ckpt),
            "--out",
            str(tmp_path / "bundle"),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert exp.returncode == 0, exp.stderr[-3000:]
    assert "ppo checkpoint" in exp.stdout
    io = yaml.safe_load((tmp_path / "bundle" / "io.yaml").read_text())
    assert (tmp_path / "bundle" / "io.yaml").read_text() == (d / "exported" / "io.yaml").read_text()
    assert io["controller"]["algorithm"] == "ppo" and io["controller"]["action_clip"] == state["cfg"]["clip_actions"]
    num_obs = io["controller"]["inputs"][0]["shape"][1]
    gen = torch.Generator().manual_seed(0)
    feed = {"obs": torch.randn(5, num_obs, generator=gen).numpy()}  # no gait clock: no step input
    a = ort.InferenceSession(str(d / "exported" / "policy.onnx")).run(None, feed)
    b = ort.InferenceSession(str(tmp_path / "bundle" / "policy.onnx")).run(None, feed)
    for x, y in zip(a, b):
        assert np.array_equal(x, y)
    foreign = tmp_path / "foreign.pt"
    torch.save({"weights": torch.zeros(3)}, foreign)
    bad = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "export.py"), "--checkpoint", str(foreign)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert bad.returncode != 0 and "neither a SHAC nor an rsl_rl PPO checkpoint" in bad.stderr, bad.stderr[-2000:]


@pytest.mark.integration
def test_gradient_horizon_script_keys_each_contact_model_of_a_checkpoint(tmp_path):
    """The checkpoint's policy settings do not overwrite the result labels: one row set per (robot, contact model)."""
    checkpoint = one_iteration_checkpoint(tmp_path)
    script = ROOT / "scripts" / "experiments" / "gradient_norm_vs_horizon.py"
    out = tmp_path / "gnh"
    argv = [sys.executable, str(script), "--checkpoint", str(checkpoint), "--horizons", "1,2"]
    argv += ["--contact_models", "smoothed,hard", "--num_envs", "2", "--repeats", "1", "--out", str(out)]
    subprocess.run(argv, check=True, capture_output=True, timeout=600)
    results = json.loads((out / "gradient_norm_vs_horizon.json").read_text())["results"]
    assert sorted(results) == ["anymal_c hard", "anymal_c smoothed"]
    assert all(r["grad_norm_mean"] > 0 for rows in results.values() for r in rows)


@pytest.mark.integration
def test_actor_gradient_tool_reproduces_a_checkpoints_gradients(tmp_path):
    """scripts/tools/actor_gradient.py run twice on one checkpoint: the same losses and gradients (rel. 0, cosine 1)."""
    checkpoint = one_iteration_checkpoint(tmp_path)
    script = ROOT / "scripts" / "tools" / "actor_gradient.py"
    overrides = [a for a in TINY if "=" in a]
    base = [sys.executable, str(script), str(checkpoint), "--horizons", "2", "--num_envs", "2"]
    first, second = tmp_path / "a.pt", tmp_path / "b.pt"
    subprocess.run([*base, "--out", str(first), *overrides], check=True, capture_output=True, timeout=600)
    run = subprocess.run(
        [*base, "--out", str(second), "--compare", str(first), *overrides], capture_output=True, text=True, timeout=600
    )
    assert run.returncode == 0, run.stderr[-2000:]
    rows = re.findall(r"horizon (\d): loss (\w+), gradient relative difference (\S+), cosine (\S+)", run.stdout)
    assert [r[0] for r in rows] == ["0", "1"], run.stdout
    assert all(r[1] == "equal" and float(r[2]) == 0.0 and float(r[3]) > 0.999999 for r in rows), rows
    saved = torch.load(second)
    assert len(saved) == 2 and all(float(h["grad"].norm()) > 0 for h in saved)
