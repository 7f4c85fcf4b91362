"""scripts/experiments/actor_gradient_snr.py and actor_loss_terms.py on a tiny rough-task checkpoint: a record per
input group, from the checkpoint's own envs and from a reset with another env count; a run's env config that the
overrides do not give is refused, naming the field; the loss terms' shares add up to the whole gradient."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from actor_gradient_snr import TerminationRecorder
from helpers.training import TINY_SHAC

ROOT = Path(__file__).resolve().parents[2]
TASK = "DiffSim-Velocity-Rough-AnymalC-Direct"
SCRIPT = ROOT / "scripts" / "experiments" / "actor_gradient_snr.py"
TERMS_SCRIPT = ROOT / "scripts" / "experiments" / "actor_loss_terms.py"
LR_SCRIPT = ROOT / "scripts" / "experiments" / "likelihood_ratio_gradient.py"
OVERRIDES = [a for a in TINY_SHAC if "=" in a] + [
    "env.terrain.generator.num_rows=3",
    "env.terrain.generator.num_cols=6",
    "env.terrain.generator.border_width=2.0",
    "agent.algorithm.env_action_grad_clip=null",
    "env.rewards.termination_penalty=-50.0",  # not the task's -100: without it the checkpoint's config is refused
]


@pytest.fixture(scope="module")
def tiny_checkpoint(tmp_path_factory) -> str:
    """One SHAC iteration of 4 envs on a small rough terrain."""
    run = tmp_path_factory.mktemp("snr") / "run"
    train = [sys.executable, str(ROOT / "scripts" / "train.py"), "--task", TASK, "--log_dir", str(run)]
    train += ["--num_envs", "4", "--max_iterations", "1", "--eval_episodes", "0", "--seed", "3"]
    proc = subprocess.run(train + ["agent.warm_start_task=null", *OVERRIDES], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return str(run / "model_1.pt")


@pytest.mark.integration
@pytest.mark.slow
def test_actor_gradient_snr_script(tmp_path, tiny_checkpoint):
    ckpt = tiny_checkpoint
    out = tmp_path / "snr.json"
    base = [sys.executable, str(SCRIPT), ckpt, "--task", TASK, "--horizons", "2"]
    proc = subprocess.run([*base, "--out", str(out), *OVERRIDES], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-3000:]
    rec = json.loads(out.read_text())[ckpt]
    assert rec["num_envs"] == 4 and rec["horizons"] == 2
    fallen = {f"fallen_{k}_share" for k in ("envs", "gradient", "largest")}
    assert set(rec) == {"num_envs", "horizons", "outlier_share", "flat", "scan"} | fallen
    assert 0.0 < rec["outlier_share"] <= 1.0 and all(0.0 <= rec[k] <= 1.0 for k in fallen)
    for group in ("flat", "scan"):
        r = rec[group]
        assert r["second_moment"] > 0 and r["second_moment"] >= r["signal"]
        assert 0.0 <= r["cosine@1024"] <= r["cosine@4096"] <= 1.0
        assert 0.0 <= r["trimmed_cosine@1024"] <= r["trimmed_cosine@4096"] <= 1.0
        assert 0.0 <= r["weights_snr1@1024"] <= r["weights_snr1@4096"] <= 1.0
        assert 0.0 <= r["null_weights_snr1@1024"] <= r["null_weights_snr1@4096"] <= 1.0
    assert "scan: signal" in proc.stdout

    proc = subprocess.run([*base, "--num_envs", "3", "--warmup_steps", "2", *OVERRIDES], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "flat: signal" in proc.stdout

    proc = subprocess.run([*base, *OVERRIDES[:-1]], capture_output=True, text=True)
    assert proc.returncode != 0 and "rewards.termination_penalty" in proc.stderr


@pytest.mark.integration
@pytest.mark.slow
def test_actor_loss_terms_script(tmp_path, tiny_checkpoint):
    ckpt, out = tiny_checkpoint, tmp_path / "terms.json"
    base = [sys.executable, str(TERMS_SCRIPT), ckpt, ckpt, "--task", TASK, "--horizons", "2", *OVERRIDES]
    proc = subprocess.run(
        [*base, "--out", str(out), "--reference_term", "action_rate_l2"], capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.count("scan: |G|") == 2  # the first checkpoint's env (an Isaac Lab scene) closed for the next
    rec = json.loads(out.read_text())[ckpt]
    assert rec["num_envs"] == 4 and rec["horizons"] == 2 and len(rec["loss"]) == 2
    for group in ("flat", "scan"):
        parts = rec[group]["parts"]
        assert {"values", "action_rate_l2", "dof_torques_l2"} <= set(parts)
        assert "termination_penalty" not in parts  # constant per failure: no gradient
        assert sum(p["share"] for p in parts.values()) == pytest.approx(1.0, abs=1e-4)
        assert all(-1.0 - 1e-9 <= p["cosine"] <= 1.0 + 1e-9 and p["norm"] >= 0.0 for p in parts.values())
    assert len(rec["additivity_error"]) == 2 and all(0.0 <= e < 1e-3 for e in rec["additivity_error"])
    assert "scan: |G|" in proc.stdout
    aligned = rec["along_action_rate_l2"]
    assert aligned["action_rate_l2"]["cosine"] == pytest.approx(1.0)
    assert sum(a["along"] for k, a in aligned.items() if k != "whole") == pytest.approx(aligned["whole"]["along"])
    typical = rec["along_action_rate_l2_per_horizon"]
    assert set(typical) == set(aligned) and all(len(a["per_horizon"]) == 2 for a in typical.values())
    assert all(v > 0 for v in typical["action_rate_l2"]["per_horizon"])  # each horizon's own term along itself

    proc = subprocess.run([*base, "--reference_term", "speed"], capture_output=True, text=True)
    assert proc.returncode != 0 and "no part 'speed'" in proc.stderr

    proc = subprocess.run([*base, "agent.algorithm.env_action_grad_clip=10"], capture_output=True, text=True)
    assert proc.returncode != 0 and "env_action_grad_clip=null" in proc.stderr


def test_termination_recorder_collects_the_envs_that_terminated_and_restores_the_step():
    class Env:
        num_envs = 4

        def __init__(self):
            self.calls = 0

        def step(self, actions):
            self.calls += 1
            terminated = torch.tensor([False, self.calls == 2, False, False])
            return actions, None, terminated, ~terminated, {}

    env = Env()
    with TerminationRecorder(env) as fell:
        env.step(0)
        env.step(1)  # env 1 terminates; the time-outs (truncated) are not falls
        env.step(2)
    assert fell.mask.tolist() == [False, True, False, False] and env.calls == 3
    assert "step" not in vars(env)  # the class's step again


@pytest.mark.integration
@pytest.mark.slow
def test_likelihood_ratio_gradient_script(tmp_path, tiny_checkpoint):
    ckpt, out = tiny_checkpoint, tmp_path / "lr.json"
    base = [sys.executable, str(LR_SCRIPT), ckpt, "--task", TASK, "--horizons", "3", *OVERRIDES]
    proc = subprocess.run([*base, "--out", str(out)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-3000:]
    rec = json.loads(out.read_text())[ckpt]
    assert rec["num_envs"] == 4 and rec["horizons"] == 3 and set(rec) == {"num_envs", "horizons", "all", "scan"}
    for group in ("all", "scan"):
        r = rec[group]
        assert r["first"]["mean_norm"] > 0 and r["second"]["mean_norm"] > 0 and r["norm_ratio"] > 0
        assert len(r["cosine_per_horizon"]) == 3 and all(-1 <= c <= 1 for c in r["cosine_per_horizon"])
        for key in ("first", "second"):
            assert -1 <= r[key]["consistency"] <= 1 and 0 <= r[key]["sum_ratio"] <= 3**0.5 + 1e-9
    assert "all: likelihood ratio" in proc.stdout
    proc = subprocess.run([*base, "agent.algorithm.likelihood_ratio_coef=0.0"], capture_output=True, text=True)
    assert proc.returncode != 0 and "likelihood_ratio_coef must be positive" in proc.stderr
