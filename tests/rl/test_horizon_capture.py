"""Capture of bad SHAC horizons, their replay (same actor gradient), the factor variants and the runner's timers.

One short training run (ANYmal URDF env, 4 envs, horizon 3) serves all tests. Commands are resampled every step, so
the observation the env holds at a horizon start is not the one ``set_state`` recomputes: the replay must use the
captured one to reproduce the gradient.
"""

import glob
import importlib.util
import math
import os
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
import torch

from isaaclab_diffsim.diagnostics import VARIANTS, applied, build_runner, replay
from isaaclab_diffsim.rl.shac import ShacRunner
from isaaclab_diffsim.rl.shac.capture import load_capture
from isaaclab_diffsim.tasks.task_cfgs import load_task_cfgs

TASK = "DiffSim-Velocity-Flat-AnymalC-Direct"
HORIZON = 3


pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """Iterations 1-3 with capture threshold 0 and at most 2 captures, then iteration 4 with threshold 1e9."""
    torch.set_num_threads(1)
    torch.manual_seed(0)
    env_cfg, agent = load_task_cfgs(TASK, "shac_cfg_entry_point")
    env_cfg.num_envs, env_cfg.asset_source = 4, "urdf"
    env_cfg.commands.resampling_time_s = 0.01
    agent.horizon = HORIZON
    agent.policy.actor_hidden_dims = agent.policy.critic_hidden_dims = [32, 32]
    agent.algorithm.critic_iterations = 2
    agent.capture_grad_norm, agent.max_captures = 0.0, 2
    log_dir = str(tmp_path_factory.mktemp("shac"))
    env = gym.make(TASK, cfg=env_cfg).unwrapped
    runner = ShacRunner(env, agent, log_dir=log_dir, device="cpu")
    runner.learn(3)
    runner.cfg.capture_grad_norm, runner.cfg.max_captures = 1e9, 5
    runner.learn(1)
    runner.close()
    return runner, log_dir


@pytest.fixture(scope="module")
def replay_runner(trained):
    capture = load_capture(os.path.join(trained[1], "bad_horizons", "horizon_2.pt"))
    return build_runner(capture["task"], capture["env_cfg"], capture["agent_cfg"])


def _scalars(log_dir: str, tag: str) -> list[float]:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    acc = EventAccumulator(log_dir)
    acc.Reload()
    return [e.value for e in acc.Scalars(tag)] if tag in acc.Tags()["scalars"] else []


def test_capture_written_when_gradient_is_bad(trained):
    runner, log_dir = trained
    files = sorted(os.path.basename(p) for p in glob.glob(os.path.join(log_dir, "bad_horizons", "*")))
    assert files == ["horizon_1.pt", "horizon_2.pt"]  # 3: max_captures reached; 4: below the threshold
    live = _scalars(log_dir, "Policy/grad_norm")
    for it in (1, 2):
        capture = load_capture(os.path.join(log_dir, "bad_horizons", f"horizon_{it}.pt"))
        assert capture["iteration"] == it and capture["task"] == TASK and capture["num_envs"] == 4
        assert capture["grad_norm"] == pytest.approx(live[it - 1], rel=1e-6)
        assert capture["env_cfg"]["asset_source"] == "urdf" and capture["agent_cfg"]["horizon"] == HORIZON
        for key in (
            "env_state",
            "obs",
            "model_state_dict",
            "target_critic_state_dict",
            "obs_normalizer_state_dict",
            "rng_state",
        ):
            assert capture[key] is not None, key


def test_replay_reproduces_live_gradient(trained, replay_runner):
    """Iteration 2 starts from updated networks and normaliser statistics: a snapshot taken after the update, or
    normaliser statistics taken after the rollout updated them, would give another gradient."""
    for it in (1, 2):
        capture = load_capture(os.path.join(trained[1], "bad_horizons", f"horizon_{it}.pt"))
        result = replay(replay_runner, capture)
        assert result.error is None
        assert result.grad_norm == pytest.approx(capture["grad_norm"], rel=1e-4), it
        assert result.loss == pytest.approx(capture["stats"]["actor_loss"], rel=1e-4), it
        assert len(result.steps) == HORIZON
        adjoint = result.series("adjoint_qd")
        assert adjoint.shape == (HORIZON * replay_runner.env.cfg.decimation,)
        assert np.isfinite(adjoint).all() and (adjoint > 0).all()
        residual = result.series("residual")
        if hasattr(replay_runner.env.sim.solver, "last_solve_residual"):
            assert np.isfinite(residual).all()


def test_variant_changes_gradient_and_is_undone(trained, replay_runner):
    capture = load_capture(os.path.join(trained[1], "bad_horizons", "horizon_2.pt"))
    variants = {v.key: v for v in VARIANTS}
    env = replay_runner.env
    mu = env.model.shape_material_mu.numpy().copy()
    solver = env.sim.solver
    with applied(replay_runner, variants["mu0"]):
        assert (env.model.shape_material_mu.numpy() == 0).all()
        no_friction = replay(replay_runner, capture).grad_norm
    with applied(replay_runner, variants["sweeps4"]):
        assert env.sim.solver is not solver and env.sim.solver.iterations == 4
    assert env.sim.solver is solver and np.array_equal(env.model.shape_material_mu.numpy(), mu)
    assert math.isfinite(no_friction) and no_friction != pytest.approx(capture["grad_norm"], rel=1e-3)
    assert replay(replay_runner, capture).grad_norm == pytest.approx(capture["grad_norm"], rel=1e-4)


def test_timers_in_stats_and_log(trained):
    runner, log_dir = trained
    stats = runner.last_stats
    for key in ("forward_time", "backward_time", "update_time"):
        assert stats[key] > 0.0, key
        assert len(_scalars(log_dir, f"Perf/{key}")) == 4, key
    learning = _scalars(log_dir, "Perf/learning_time")
    backward, update = _scalars(log_dir, "Perf/backward_time"), _scalars(log_dir, "Perf/update_time")
    assert all(b + u <= t * (1 + 1e-5) + 1e-6 for b, u, t in zip(backward, update, learning))
    assert _scalars(log_dir, "Perf/forward_time") == pytest.approx(_scalars(log_dir, "Perf/collection_time"))


def test_replay_script(trained, capsys):
    path = Path(__file__).resolve().parents[2] / "scripts" / "tools" / "replay_horizon.py"
    spec = importlib.util.spec_from_file_location("replay_horizon", path)
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    capture = os.path.join(trained[1], "bad_horizons", "horizon_2.pt")
    results = script.main([capture, "--variants", "baseline,margin0"])
    out = capsys.readouterr().out
    assert results["baseline"].grad_norm == pytest.approx(load_capture(capture)["grad_norm"], rel=1e-4)
    assert "rel. diff" in out and "margin 0" in out and "baseline per substep" in out
