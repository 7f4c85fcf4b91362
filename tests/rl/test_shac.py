"""SHAC runner on a differentiable toy env (2-D point masses tracking target velocities); fast, CPU only."""

import copy
import glob
import os
import signal
import subprocess
import sys

import numpy as np
import pytest
import torch
from helpers.shac import PointMassEnv, assert_bitwise_equal, full_state, make_runner, small_cfg

from isaaclab_diffsim.rl.shac import ShacRunner
from isaaclab_diffsim.rl.shac.shac import clip_env_rows

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def test_iterations_run_and_log(tmp_path):
    env, runner = make_runner(log_dir=str(tmp_path))
    runner.learn(3)
    runner.close()
    assert runner.current_learning_iteration == 3
    assert runner.total_samples == 3 * 8 * 4
    assert os.path.isfile(tmp_path / "model_2.pt") and os.path.isfile(tmp_path / "model_3.pt")
    assert runner.alg.nonfinite_count == 0
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    acc = EventAccumulator(str(tmp_path))
    acc.Reload()
    tags = set(acc.Tags()["scalars"])
    for tag in (
        "Loss/actor",
        "Loss/critic",
        "Policy/grad_norm",
        "Policy/mean_std",
        "LR/actor",
        "Perf/total_samples",
        "Perf/wall_time",
        "Train/mean_reward",
        "Train/mean_episode_length",
        "Episode/rew_tracking",
        "Episode_Termination/failure",
    ):
        assert tag in tags, tag
    grad_norms = [e.value for e in acc.Scalars("Policy/grad_norm")]
    assert len(grad_norms) == 3 and all(np.isfinite(grad_norms))


def test_actor_loss_decreases_on_fixed_batch():
    """Same start states, same sampling noise, same (initial) target critic: only the actor differs."""
    torch.manual_seed(1)
    env = PointMassEnv(num_envs=4)
    cfg = small_cfg()
    cfg.algorithm.schedule = "constant"
    cfg.policy.obs_normalization = False  # so the critic's input map is fixed too
    runner = ShacRunner(env, cfg, device="cpu")
    critic0 = copy.deepcopy(runner.alg.target_critic.state_dict())
    env_state, rng = env.get_state(), torch.get_rng_state()
    loss_before = runner.compute_actor_loss()
    runner.learn(15)
    runner.alg.target_critic.load_state_dict(critic0)
    env.set_state(env_state)
    torch.set_rng_state(rng)
    loss_after = runner.compute_actor_loss()
    assert np.isfinite(loss_before) and np.isfinite(loss_after)
    assert loss_after < loss_before - 0.05, (loss_before, loss_after)


def test_checkpoint_resume_bit_for_bit(tmp_path):
    env_a, runner_a = make_runner(seed=0)
    runner_a.learn(2)
    ckpt = str(tmp_path / "ckpt.pt")
    runner_a.save(ckpt)
    runner_a.learn(1)
    state_a, env_state_a, rng_a = full_state(runner_a), env_a.get_state(), torch.get_rng_state()

    env_b, runner_b = make_runner(seed=123)  # different init and env state, overwritten by load
    runner_b.load(ckpt)
    assert runner_b.current_learning_iteration == 2
    runner_b.learn(1)
    assert runner_b.current_learning_iteration == 3
    assert_bitwise_equal(state_a, full_state(runner_b))
    assert_bitwise_equal(env_state_a, env_b.get_state())
    assert torch.equal(rng_a, torch.get_rng_state())


def test_nan_reward_skipped_counted_and_raises(tmp_path):
    env, runner = make_runner(log_dir=str(tmp_path), save_interval=1, max_consecutive_nonfinite=3)
    runner.learn(1)
    before = {k: v.clone() for k, v in runner.alg.policy.state_dict().items()}
    env.inject_nan = True
    runner.learn(1)  # skipped: actor loss and critic targets are NaN
    assert runner.alg.nonfinite_count == 1 and runner.alg.consecutive_nonfinite == 1
    for k, v in runner.alg.policy.state_dict().items():
        assert torch.equal(v, before[k]), k
    env.inject_nan = False
    runner.learn(1)
    assert runner.alg.nonfinite_count == 1 and runner.alg.consecutive_nonfinite == 0
    assert not torch.equal(runner.alg.policy.log_std, before["log_std"])
    # model_2.pt was written at the end of learn() after the skipped iteration, but is not a "good" one.
    assert runner.last_good_checkpoint == str(tmp_path / "model_3.pt")
    env.inject_nan = True
    with pytest.raises(RuntimeError, match="consecutive") as err:
        runner.learn(10)
    runner.close()
    assert runner.alg.nonfinite_count == 4 and runner.alg.consecutive_nonfinite == 3
    assert runner.current_learning_iteration == 6
    assert str(tmp_path / "model_3.pt") in str(err.value)
    assert not glob.glob(str(tmp_path / "model_[456].pt"))


def test_exploding_actor_gradient_skips_actor_step_only():
    """``max_actor_grad_norm``: an actor gradient whose norm is above the limit leaves the actor untouched (not even
    clipped and applied), the critic is still fitted, and the skips are counted apart from non-finite iterations, so
    they never stop training. Here the limit is below any real norm: every actor step is skipped."""
    torch.manual_seed(0)
    cfg = small_cfg(max_consecutive_nonfinite=2)
    cfg.algorithm.max_actor_grad_norm = 1e-12
    runner = ShacRunner(PointMassEnv(num_envs=4), cfg, log_dir=None, device="cpu")
    actor = {k: v.clone() for k, v in runner.alg.policy.state_dict().items() if not k.startswith("critic")}
    critic = {k: v.clone() for k, v in runner.alg.policy.critic.state_dict().items()}
    runner.learn(4)
    assert runner.alg.exploding_count == 4 and runner.alg.nonfinite_count == 0
    state = runner.alg.policy.state_dict()
    for k, v in actor.items():
        assert torch.equal(state[k], v), k
    assert any(not torch.equal(v, critic[k]) for k, v in runner.alg.policy.critic.state_dict().items())
    runner.alg.cfg.max_actor_grad_norm = None
    runner.learn(1)
    assert runner.alg.exploding_count == 4
    assert any(not torch.equal(runner.alg.policy.state_dict()[k], v) for k, v in actor.items())


def test_env_floating_point_error_skips_iteration():
    env, runner = make_runner(max_consecutive_nonfinite=2)
    runner.learn(1)
    env.raise_fp = True
    runner.learn(1)
    assert runner.alg.nonfinite_count == 1 and runner.current_learning_iteration == 2
    env.raise_fp = False
    runner.learn(1)  # recovers: the aborted horizon's graph is dropped
    assert runner.alg.consecutive_nonfinite == 0
    env.raise_fp = True
    with pytest.raises(RuntimeError, match="none saved yet"):
        runner.learn(5)


def test_export_onnx_and_jit_match_torch(tmp_path):
    ort = pytest.importorskip("onnxruntime")
    env, runner = make_runner(seed=2)
    runner.learn(2)  # non-trivial normaliser statistics
    paths = runner.export(str(tmp_path / "exported"))
    assert os.path.isfile(paths["onnx"]) and os.path.isfile(paths["jit"])

    obs = torch.randn(1, env.num_obs) * 2.0
    policy = runner.get_inference_policy("cpu")
    with torch.no_grad():
        ref = policy(obs)
        alg = runner.alg
        direct = alg.policy.act(alg.obs_normalizer.normalize(obs), deterministic=True)
    torch.testing.assert_close(ref, direct, rtol=0, atol=0)

    sess = ort.InferenceSession(paths["onnx"], providers=["CPUExecutionProvider"])
    out = sess.run(None, {sess.get_inputs()[0].name: obs.numpy()})[0]
    np.testing.assert_allclose(out, ref.numpy(), rtol=1e-5, atol=1e-5)

    jit = torch.jit.load(paths["jit"])
    torch.testing.assert_close(jit(obs), ref, rtol=1e-6, atol=1e-6)
    assert glob.glob(str(tmp_path / "exported" / "*"))


def run_state(runner: ShacRunner, env) -> dict:
    """Everything a continued run depends on: networks, optimisers, normaliser, env, global RNG, counters."""
    return {
        **full_state(runner),
        "env": env.get_state(),
        "rng": torch.get_rng_state(),
        "counters": torch.tensor([runner.current_learning_iteration, runner.total_samples]),
    }


@pytest.mark.parametrize("how", ["ctrl_c_in_rollout", "sigterm_in_rollout", "raised_in_rollout", "sigterm_in_update"])
def test_interrupt_saves_last_completed_iteration_and_resume_is_bit_for_bit(tmp_path, how):
    """An interrupt during iteration 3 saves iteration 2 (inside the rollout: rolled back) or 3 (inside the update:
    the iteration is finished first) as model_<it>_interrupted.pt; a fresh runner loading it and learning to
    max_iterations ends in exactly the state of an uninterrupted run of max_iterations."""
    _, ref = make_runner(seed=0, max_iterations=5)
    ref.learn()
    assert ref.current_learning_iteration == 5
    expected = run_state(ref, ref.env)

    env, runner = make_runner(seed=0, log_dir=str(tmp_path), max_iterations=5, save_interval=100)
    step, update, calls = env.step, runner.alg.update, {"n": 0}
    previous = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}

    def interrupting_step(actions):
        calls["n"] += 1
        if calls["n"] == 2 * 8 + 5:  # 5th step of iteration 3
            if how == "ctrl_c_in_rollout":
                os.kill(os.getpid(), signal.SIGINT)
            elif how == "sigterm_in_rollout":
                os.kill(os.getpid(), signal.SIGTERM)
            elif how == "raised_in_rollout":
                raise KeyboardInterrupt
        return step(actions)

    def interrupted_update():
        if calls["n"] == 3 * 8:
            os.kill(os.getpid(), signal.SIGTERM)  # held until the iteration is finished
        return update()

    env.step = interrupting_step
    runner.alg.update = interrupted_update
    runner.learn()
    runner.close()
    assert {s: signal.getsignal(s) for s in previous} == previous  # handlers restored after learn()
    saved_it = 3 if how == "sigterm_in_update" else 2
    path = str(tmp_path / f"model_{saved_it}_interrupted.pt")
    assert runner.interrupted and runner.current_learning_iteration == saved_it
    assert runner.interrupt_signal == (
        signal.SIGINT if how in ("ctrl_c_in_rollout", "raised_in_rollout") else signal.SIGTERM
    )
    assert runner.last_checkpoint == path and os.path.isfile(path)
    assert sorted(os.listdir(tmp_path)).count(f"model_{saved_it}.pt") == 0  # the periodic name is not reused

    # the interrupted runner itself can go on (the global RNG is where the interrupt left it) ...
    env.step, runner.alg.update = step, update
    runner.learn()
    assert_bitwise_equal(expected, run_state(runner, env))
    # ... and so can a fresh runner (other seed, built from the stored cfg dict) resuming from the file
    cfg_dict = torch.load(path, weights_only=True)["cfg"]
    torch.manual_seed(123)
    env2 = PointMassEnv(num_envs=4)
    resumed = ShacRunner(env2, cfg_dict, device="cpu")
    resumed.load(path)
    assert resumed.current_learning_iteration == saved_it
    resumed.learn()
    assert resumed.current_learning_iteration == 5
    assert_bitwise_equal(expected, run_state(resumed, env2))


def test_second_ctrl_c_during_update_stops_without_saving(tmp_path):
    env, runner = make_runner(seed=0, log_dir=str(tmp_path), save_interval=100)
    runner.learn(1)
    update = runner.alg.update

    def twice():
        os.kill(os.getpid(), signal.SIGINT)
        os.kill(os.getpid(), signal.SIGINT)
        return update()

    runner.alg.update = twice
    runner.learn(3)
    assert runner.interrupted and not glob.glob(str(tmp_path / "*interrupted*"))
    assert runner.last_checkpoint == str(tmp_path / "model_1.pt")  # learn(1)'s final checkpoint, nothing since


def test_repeated_sigterm_during_update_still_saves(tmp_path):
    """A scheduler's SIGTERM may arrive twice (once through each launcher): the second is ignored and the
    interrupted checkpoint is written after the update finishes."""
    env, runner = make_runner(seed=0, log_dir=str(tmp_path), save_interval=100)
    runner.learn(1)
    update = runner.alg.update

    def twice():
        os.kill(os.getpid(), signal.SIGTERM)
        os.kill(os.getpid(), signal.SIGTERM)
        return update()

    runner.alg.update = twice
    runner.learn(3)
    assert runner.interrupted and runner.last_checkpoint == str(tmp_path / "model_2_interrupted.pt")


def horizon_actor_gradient(runner, env, start) -> torch.Tensor:
    """The actor gradient of one horizon from env state ``start`` with a fixed noise seed, flattened."""
    env.set_state(start)
    torch.manual_seed(11)
    runner.alg.policy.zero_grad(set_to_none=True)
    runner._rollout(update_normalizer=False, bookkeeping=False)
    runner.alg.actor_loss.backward()
    runner.alg.abort_horizon()
    return torch.cat([p.grad.reshape(-1) for p in runner.alg.policy.actor_parameters() if p.grad is not None])


@pytest.mark.parametrize("value_gradient", [True, False])
def test_value_gradient_switch(value_gradient):
    """With ``value_gradient=False`` the actor's gradient comes from the horizon's rewards only: replacing the
    target critic leaves it unchanged (it changes with the default, SHAC's backprop through the value)."""
    env, runner = make_runner(seed=3)
    runner.cfg.algorithm.value_gradient = value_gradient
    runner.alg.cfg.value_gradient = value_gradient
    env.reset()
    start = env.get_state()
    g1 = horizon_actor_gradient(runner, env, start)
    with torch.no_grad():
        for p in runner.alg.target_critic.parameters():
            p.add_(0.5 * torch.randn_like(p))
    g2 = horizon_actor_gradient(runner, env, start)
    assert torch.isfinite(g1).all() and g1.abs().sum() > 0
    if value_gradient:
        assert not torch.allclose(g1, g2)
    else:
        torch.testing.assert_close(g1, g2)


def test_progress_line_prints_dash_before_first_episode(capsys):
    """Before any episode has finished, the console shows '-' for return and episode length, not nan."""
    torch.manual_seed(0)
    env = PointMassEnv(num_envs=4, max_episode_length=1000)
    runner = ShacRunner(env, small_cfg(), device="cpu")
    runner.learn(1)
    line = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("[SHAC] it 1/")][0]
    assert "return - | ep_len - |" in line and "nan" not in line, line


@pytest.mark.parametrize("failure", ["nan_reward", "env_raises"])
def test_skipped_iteration_leaves_no_trace_in_normaliser(failure):
    """A horizon with huge (finite) observations whose update is skipped (NaN reward), or that the env aborts,
    leaves the normaliser's mean, var and count exactly as they were; a valid one changes them."""
    env, runner = make_runner(seed=4)
    runner.learn(1)
    norm = runner.alg.obs_normalizer
    before = {k: v.clone() for k, v in norm.state_dict().items()}
    step = env.step
    calls = {"n": 0}

    def bad_step(actions):
        calls["n"] += 1
        obs, rew, term, trunc, extras = step(actions)
        obs = obs * 1e6  # a near-divergent horizon: huge but finite states
        if failure == "env_raises" and calls["n"] == 6:
            raise FloatingPointError("non-finite state")
        if failure == "nan_reward":
            rew = rew.clone()
            rew[1] = float("nan")
        return obs, rew, term, trunc, extras

    env.step = bad_step
    runner.learn(1)
    assert runner.alg.consecutive_nonfinite == 1
    assert_bitwise_equal(before, norm.state_dict())
    # samples of completed horizons (trained on, or with a skipped update); an aborted horizon's apart
    assert runner.total_samples == 8 * 4 * (1 if failure == "env_raises" else 2)
    assert runner.aborted_samples == (5 * 4 if failure == "env_raises" else 0)
    env.step = step
    runner.learn(1)
    assert not torch.equal(before["count"], norm.count)


@pytest.mark.parametrize("damage", ["truncated", "empty", "garbage", "foreign", "other_networks", "missing"])
def test_bad_checkpoint_gives_clear_error(tmp_path, damage):
    from isaaclab_diffsim.rl.checkpoints import CheckpointError

    env, runner = make_runner(seed=0, log_dir=str(tmp_path), save_interval=1)
    runner.learn(2)
    good, path = tmp_path / "model_1.pt", tmp_path / "model_2.pt"
    data = path.read_bytes()
    if damage == "truncated":
        path.write_bytes(data[: len(data) // 2])
    elif damage == "empty":
        path.write_bytes(b"")
    elif damage == "garbage":
        path.write_bytes(b"not a checkpoint" * 100)
    elif damage == "foreign":  # e.g. an rsl_rl PPO checkpoint
        torch.save({"actor_state_dict": {}, "optimizer_state_dict": {}, "iter": 2, "infos": None}, path)
    elif damage == "other_networks":
        torch.save(
            {
                **runner.alg.state_dict(),
                "iter": 2,
                "model_state_dict": {**runner.alg.policy.state_dict(), "actor.0.weight": torch.zeros(16, 6)},
            },
            path,
        )
    else:
        path.unlink()
    _, fresh = make_runner(seed=1)
    with pytest.raises(CheckpointError) as err:
        fresh.load(str(path))
    msg = str(err.value)
    assert str(path) in msg and f"previous checkpoint of this run is {good}" in msg, msg
    fresh.load(str(good))  # the suggested one works
    assert fresh.current_learning_iteration == 1


@pytest.mark.parametrize("overlap", [False, True])
@pytest.mark.parametrize("worker", ["thread", "process"])
def test_concurrent_critic_fit_is_bitwise_the_sequential_one(worker, overlap):
    """The critic fitted in a worker thread or forked process during the actor's backward (and, with
    ``critic_fit_overlaps_rollout``, during the next rollout, whose target values then wait for it): networks,
    optimisers, normaliser, env and RNG end bit for bit where the sequential update leaves them (the fit's shuffles
    are drawn before the actor step either way), the fit did run elsewhere, and an overlapped fit's loss is reported
    by the next update."""
    import threading

    results = {}
    for concurrent in (False, True):
        env, runner = make_runner(seed=3)
        runner.cfg.algorithm.concurrent_critic_fit = concurrent
        runner.cfg.algorithm.critic_fit_worker = worker
        runner.cfg.algorithm.critic_fit_overlaps_rollout = overlap
        threads, pending, losses = set(), [], []
        alg = runner.alg
        fit, begin, update = alg._fit_critic, alg.begin_horizon, alg.update

        def fit_recording_thread(*args, _fit=fit, _threads=threads):
            _threads.add((os.getpid(), threading.get_ident()))
            return _fit(*args)

        def begin_recording_fit(*args, _begin=begin, _pending=pending, _alg=alg, **kwargs):
            _pending.append(_alg.critic_fit_pending)
            return _begin(*args, **kwargs)

        def update_recording_loss(_update=update, _losses=losses):
            stats = _update()
            _losses.append(stats["critic_loss"])
            return stats

        alg._fit_critic, alg.begin_horizon = fit_recording_thread, begin_recording_fit
        alg.update = update_recording_loss
        runner.learn(4)
        assert not alg.critic_fit_pending  # learn() applies the last fit
        results[concurrent] = (full_state(runner), env.get_state(), torch.get_rng_state(), losses)
        here = (os.getpid(), threading.get_ident())
        if worker == "process" and concurrent:  # the worker's calls are recorded in its own copy of the set
            assert threads == set() and alg.critic_fit.process.process.pid != os.getpid()
        else:
            assert (threads == {here}) != concurrent, threads
        assert pending == [False] + [concurrent and overlap] * 3
        assert alg.critic_fit_seconds > 0.0
        last_fit = alg._fit_report["critic_loss"] if alg._fit_report is not None else None
        runner.close()
        assert alg.critic_fit.process is None and alg.critic_fit.thread is None
    sequential, concurrent = results[False], results[True]
    assert_bitwise_equal(sequential[0], concurrent[0])
    assert_bitwise_equal(sequential[1], concurrent[1])
    assert torch.equal(sequential[2], concurrent[2])
    if overlap:  # reported one update late; the last by the next update (here: kept by the alg)
        assert concurrent[3] == [None] + sequential[3][:3] and last_fit == sequential[3][3]
    else:
        assert concurrent[3] == sequential[3]


def test_critic_fit_process_survives_a_checkpoint_round_trip(tmp_path):
    """A run fitting its critic in a worker process saves the worker's optimiser state, and a runner that loads the
    checkpoint (its worker restarted from the loaded state) continues bit for bit like one fitting in place."""
    runs = {}
    for worker in ("process", None):
        env, runner = make_runner(seed=5)
        runner.cfg.algorithm.concurrent_critic_fit = worker is not None
        runner.learn(2)
        path = str(tmp_path / f"{worker}.pt")
        runner.save(path)
        saved = torch.load(path, weights_only=False)["critic_optimizer_state_dict"]
        _, resumed = make_runner(seed=9)
        resumed.cfg.algorithm.concurrent_critic_fit = worker is not None
        resumed.load(path)
        resumed.learn(2)
        runs[worker] = (saved, full_state(resumed))
        runner.close()
        resumed.close()
    assert_bitwise_equal(runs["process"][0], runs[None][0])
    assert_bitwise_equal(runs["process"][1], runs[None][1])


def test_training_goes_on_bitwise_after_close():
    """close() stops the critic fit's worker process and keeps its optimiser state: learning after it continues
    exactly like a run fitting in place."""
    runs = {}
    for concurrent in (True, False):
        _, runner = make_runner(seed=4)
        runner.cfg.algorithm.concurrent_critic_fit = concurrent
        runner.learn(2)
        runner.close()
        runner.learn(2)
        runs[concurrent] = full_state(runner)
        runner.close()
    assert_bitwise_equal(runs[True], runs[False])


def test_critic_fit_process_outlives_signals_to_the_process_group(tmp_path):
    """Ctrl-C and a scheduler's SIGTERM reach every process of the group: the worker ignores both, so the parent,
    which handles them, can still fit and save."""
    env, runner = make_runner(seed=3, log_dir=str(tmp_path))
    runner.learn(1)
    proc = runner.alg.critic_fit.process.process
    for sig in (signal.SIGINT, signal.SIGTERM):
        os.kill(proc.pid, sig)
    runner.learn(1)
    assert proc.is_alive()
    runner.save(str(tmp_path / "after_signals.pt"))
    runner.close()
    assert not proc.is_alive()


_FORK_AFTER_OPENMP = """
import torch
from helpers.shac import make_runner
torch.set_num_threads(2)
torch.randn(512, 512) @ torch.randn(512, 512)  # the parent's OpenMP pool is up before the fork
env, runner = make_runner(seed=3)
runner.learn(2)
runner.close()
print("fitted", runner.current_learning_iteration)
"""


def test_critic_fit_process_works_after_the_parent_used_several_threads():
    """A parent running torch on several intra-op threads (torch's default) forks a worker whose fit finishes: GNU
    OpenMP's pool does not survive a fork, so a worker that inherited the parent's thread count would wait forever."""
    tests_dir = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # where ``helpers`` imports from
    proc = subprocess.Popen(
        [sys.executable, "-c", _FORK_AFTER_OPENMP],
        cwd=tests_dir,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        out, _ = proc.communicate(timeout=240)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)  # the worker too
        proc.communicate()
        pytest.fail("the critic fit worker hung after a fork from a parent with 2 torch threads")
    assert proc.returncode == 0, out
    assert "fitted 2" in out


def test_critic_fit_process_reports_a_failure():
    """An exception inside the worker process reaches the caller with the worker's traceback."""
    env, runner = make_runner(seed=3)
    runner.learn(1)
    proc = runner.alg.critic_fit.process
    with pytest.raises(RuntimeError, match="critic fit process failed"):
        proc._receive(proc._send("no_such_request", None))
    runner.close()


def test_clip_env_rows_against_hand_values():
    g = torch.tensor([[3.0, 4.0], [0.0, 1.0], [0.6, 0.8], [30.0, 40.0]])  # row norms 5, 1, 1, 50; median 1
    out = clip_env_rows(g, 2.0)
    torch.testing.assert_close(out[3], torch.tensor([1.2, 1.6]))  # scaled to norm 2, direction kept
    torch.testing.assert_close(out[0], torch.tensor([1.2, 1.6]))
    assert torch.equal(out[1:3], g[1:3])


def test_env_action_grad_clip_is_off_or_scales_rows():
    """Off, or at a ratio no env reaches, the actor gradient is bitwise SHAC's; at a ratio below the spread of the
    envs' action gradients it differs; a ratio that is not positive is refused, naming the field."""
    env, runner = make_runner(seed=3)
    env.reset()
    start = env.get_state()

    def actor_grad(ratio):
        runner.alg.cfg.env_action_grad_clip = ratio
        return horizon_actor_gradient(runner, env, start)

    base = actor_grad(None)
    assert torch.equal(actor_grad(1e30), base)
    clipped = actor_grad(1.0)
    assert torch.isfinite(clipped).all() and not torch.equal(clipped, base)
    cfg = small_cfg()
    cfg.algorithm.env_action_grad_clip = -1.0
    with pytest.raises(ValueError, match="env_action_grad_clip"):
        cfg.validate_values()
