"""SHAC over torch.distributed with 2 CPU ranks (gloo, spawned processes) on the point-mass toy env of test_shac.

What is checked, after 3 iterations (horizon 4, 4 envs per rank):

- the ranks hold bit-identical actor, critic, target critic, normaliser and optimiser states, while their envs
  differ (each rank steps its own envs with its own seed);
- a resume from the checkpoint rank 0 wrote continues bit for bit on every rank (each rank restores its own RNG and
  env state from ``rank_states``);
- a rollout that fails on one rank (FloatingPointError from env.step) makes both ranks skip that iteration together;
- the 2-rank result equals a single process with the same 8 envs, when the maths says it should: rank r's envs
  are the r-th slice of the single process's envs (same initial states, no resets within the 12 steps), exploration
  is switched off (log-std -50: std * noise is below float32 resolution of the action, so every process's action
  is its mean whatever its RNG draws), and the critic is fitted on full batches (1 minibatch: the mean over 8 envs
  is the average of the two 4-env means). The actor loss is normalised per rank by h * N and the gradients are
  averaged, which is the single process's normalisation by h * 2N. The comparison is to float tolerance: the
  sums are taken in another order (per rank, then across ranks) and the normaliser combines per-rank moments.

rsl_rl's PPO on the same 2 gloo ranks (its own multi-GPU code on our process group, the diff ANYmal env with 2 envs
per rank): the policies are identical after 2 iterations.

(slow) ``torchrun ... scripts/train.py --distributed`` on 2 gloo ranks: SIGTERM to torchrun stops both ranks after
the same iteration, rank 0 saves ``model_<it>_interrupted.pt`` (with every rank's state), and ``--resume`` on 2 ranks
ends with the checkpoint of the uninterrupted 2-rank run, bit for bit.

It does *not* hold, and is not tested, with exploration noise or env resets (each rank draws its own random
stream, not a slice of the single process's), with critic minibatches (each rank permutes and splits its own data,
a different partition of the samples), or bit for bit (float summation order).
"""

import glob
import math
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import torch
import torch.multiprocessing as mp
from helpers.shac import PointMassEnv, assert_bitwise_equal, full_state, small_cfg
from helpers.training import TINY_SHAC

from isaaclab_diffsim.rl import distributed
from isaaclab_diffsim.rl.shac import ShacRunner

pytestmark = pytest.mark.usefixtures("one_torch_thread")

WORLD, N, SEED = 2, 4, 3


class SlicedPointMassEnv(PointMassEnv):
    """Point masses whose initial states are rows ``[first, first + num_envs)`` of a fixed set of 2N states."""

    def __init__(self, num_envs: int, first: int):
        super().__init__(num_envs=num_envs, max_episode_length=10_000)
        g = torch.Generator().manual_seed(1234)
        pos = (torch.rand(WORLD * N, 2, generator=g) * 2 - 1) * 0.25
        vel = torch.randn(WORLD * N, 2, generator=g) * 0.1
        target = torch.rand(WORLD * N, 2, generator=g) * 2 - 1
        rows = slice(first, first + num_envs)
        self.init = pos[rows], vel[rows], target[rows]

    def reset(self) -> torch.Tensor:
        self.pos, self.vel, self.target = (x.clone() for x in self.init)
        self.ep_len.zero_()
        self.ep_sum.zero_()
        return self._obs()


class FailingPointMassEnv(PointMassEnv):
    """Raises FloatingPointError at step ``fail_step`` (counted from 1), once."""

    def __init__(self, fail_step: int | None, **kwargs):
        super().__init__(**kwargs)
        self.fail_step, self.steps = fail_step, 0

    def step(self, actions):
        self.steps += 1
        if self.steps == self.fail_step:
            raise FloatingPointError("non-finite state (injected)")
        return super().step(actions)


def deterministic_cfg():
    cfg = small_cfg(horizon=4, save_interval=1000)
    cfg.policy.init_log_std = -50.0
    cfg.policy.log_std_range = (-60.0, 2.0)
    cfg.algorithm.num_critic_minibatches = 1
    return cfg


def _worker(rank: int, port: int, out_dir: str) -> None:
    os.environ.update(
        MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK=str(rank), WORLD_SIZE=str(WORLD), LOCAL_RANK=str(rank)
    )
    torch.set_num_threads(1)
    info = distributed.init_distributed("cpu", timeout_s=120)  # a deadlock fails the test instead of hanging it
    result = {"info": (info.rank, info.world_size, info.device)}
    run_dir = os.path.join(out_dir, "run")
    log_dir = run_dir if rank == 0 else None
    try:
        # Training with exploration and resets: identical networks on both ranks; resume bit for bit.
        torch.manual_seed(SEED + rank)
        env = PointMassEnv(num_envs=N)
        runner = ShacRunner(env, small_cfg(horizon=4, save_interval=3), log_dir=log_dir, device="cpu")
        runner.learn(3)
        result["state_3"], result["obs_3"] = full_state(runner), env.get_observations().clone()
        runner.learn(2)
        result["state_5"], result["env_5"] = full_state(runner), env.get_state()
        runner.close()
        torch.manual_seed(1000 + rank)  # other RNG streams and env states: load() must restore this rank's
        env = PointMassEnv(num_envs=N)
        resumed = ShacRunner(env, small_cfg(horizon=4, save_interval=3), log_dir=None, device="cpu")
        resumed.load(os.path.join(run_dir, "model_3.pt"))
        resumed.learn(2)
        result["state_5_resumed"], result["env_5_resumed"] = full_state(resumed), env.get_state()

        # A rollout failing on rank 1 only (iteration 2): both skip it, nobody waits forever.
        torch.manual_seed(SEED + rank)
        env = FailingPointMassEnv(fail_step=6 if rank == 1 else None, num_envs=N)
        runner = ShacRunner(env, small_cfg(horizon=4), log_dir=None, device="cpu")
        runner.learn(3)
        result["fail_counts"] = (runner.alg.nonfinite_count, runner.current_learning_iteration)
        result["fail_state"] = full_state(runner)

        # Deterministic setting for the comparison with one process (see the module docstring).
        torch.manual_seed(SEED + rank)
        runner = ShacRunner(SlicedPointMassEnv(N, first=rank * N), deterministic_cfg(), log_dir=None, device="cpu")
        runner.learn(3)
        result["det_state"] = full_state(runner)
    finally:
        torch.save(result, os.path.join(out_dir, f"rank{rank}.pt"))
        distributed.shutdown()


def _ppo_worker(rank: int, port: int, out_dir: str) -> None:
    import importlib.metadata

    from isaaclab.utils import to_dict
    from isaaclab_rl.rsl_rl import handle_deprecated_rsl_rl_cfg

    from isaaclab_diffsim.envs import DiffEnvRslRlWrapper
    from isaaclab_diffsim.rl.ppo_runner import DiffOnPolicyRunner
    from isaaclab_diffsim.tasks.direct.locomotion.velocity import DiffVelocityEnv, DiffVelocityEnvCfg
    from isaaclab_diffsim.tasks.direct.locomotion.velocity.config.anymal_c.agents.rsl_rl_ppo_cfg import (
        AnymalCFlatDiffPPORunnerCfg,
    )

    os.environ.update(
        MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK=str(rank), WORLD_SIZE=str(WORLD), LOCAL_RANK=str(rank)
    )
    torch.set_num_threads(1)
    distributed.init_distributed("cpu", timeout_s=120)
    result = {}
    try:
        torch.manual_seed(SEED + rank)
        env = DiffVelocityEnv(DiffVelocityEnvCfg(num_envs=2, device="cpu", seed=SEED + rank))
        cfg = AnymalCFlatDiffPPORunnerCfg()
        cfg.num_steps_per_env, cfg.max_iterations, cfg.device = 4, 2, "cpu"
        cfg = handle_deprecated_rsl_rl_cfg(cfg, importlib.metadata.version("rsl-rl-lib"))
        log_dir = os.path.join(out_dir, "ppo") if rank == 0 else None
        runner = DiffOnPolicyRunner(
            DiffEnvRslRlWrapper(env, clip_actions=cfg.clip_actions), to_dict(cfg), log_dir=log_dir, device="cpu"
        )
        runner.logger.git_status_repos = []
        before = {k: v.clone() for k, v in runner.alg.save()["actor_state_dict"].items()}
        runner.learn(init_at_random_ep_len=True)
        saved = runner.alg.save()
        result = {
            "multi_gpu": runner.cfg["multi_gpu"],
            "before": before,
            "actor": saved["actor_state_dict"],
            "critic": saved["critic_state_dict"],
            "obs": env.get_observations().clone(),
        }
    finally:
        torch.save(result, os.path.join(out_dir, f"ppo_rank{rank}.pt"))
        distributed.shutdown()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def two_ranks(tmp_path_factory):
    out = str(tmp_path_factory.mktemp("dist"))
    mp.start_processes(_worker, args=(_free_port(), out), nprocs=WORLD, join=True, start_method="spawn")
    return [torch.load(os.path.join(out, f"rank{r}.pt"), weights_only=False) for r in range(WORLD)], out


def test_ranks_identical_after_three_iterations_envs_differ(two_ranks):
    (r0, r1), _ = two_ranks
    assert r0["info"] == (0, 2, "cpu") and r1["info"] == (1, 2, "cpu")
    for key in ("state_3", "state_5", "fail_state", "det_state"):
        assert_bitwise_equal(r0[key], r1[key], key)
    assert not torch.equal(r0["obs_3"], r1["obs_3"])  # each rank stepped its own envs (seed + rank)
    assert r0["state_3"]["norm"]["count"] > 2 * 3 * 5 * N  # 3 iterations of (h + 1) x 4 obs, both ranks merged


def test_only_rank0_writes_and_checkpoint_holds_every_rank(two_ranks):
    _, out = two_ranks
    run = os.path.join(out, "run")
    assert sorted(f for f in os.listdir(run) if f.endswith(".pt")) == ["model_3.pt", "model_5.pt"]
    ckpt = torch.load(os.path.join(run, "model_3.pt"), weights_only=True)
    assert len(ckpt["rank_states"]) == WORLD
    assert ckpt["total_samples"] == 3 * 4 * N * WORLD
    assert not torch.equal(ckpt["rank_states"][0]["env_state"]["pos"], ckpt["rank_states"][1]["env_state"]["pos"])


def test_resume_restores_every_rank_bit_for_bit(two_ranks):
    ranks, _ = two_ranks
    for r in ranks:
        assert_bitwise_equal(r["state_5"], r["state_5_resumed"], "networks")
        assert_bitwise_equal(r["env_5"], r["env_5_resumed"], "env")


def test_failed_rollout_on_one_rank_skips_on_all(two_ranks):
    ranks, _ = two_ranks
    assert [r["fail_counts"] for r in ranks] == [(1, 3), (1, 3)]


def test_two_ranks_equal_one_process_with_all_envs(two_ranks, one_torch_thread):
    (r0, _), _ = two_ranks
    torch.manual_seed(SEED)
    single = ShacRunner(SlicedPointMassEnv(WORLD * N, first=0), deterministic_cfg(), log_dir=None, device="cpu")
    single.learn(3)
    ref = full_state(single)
    assert bool((single.env.ep_len == 3 * 4).all())  # no resets (they would draw from each process's RNG)
    torch.manual_seed(SEED)  # and the reference is sensitive to the other rank's envs:
    half = ShacRunner(SlicedPointMassEnv(N, first=0), deterministic_cfg(), log_dir=None, device="cpu")
    half.learn(3)

    def flat(s):
        return torch.cat([v.double().flatten() for part in ("model", "target", "norm") for v in s[part].values()])

    a, b, c = flat(r0["det_state"]), flat(ref), flat(full_state(half))
    assert torch.allclose(a, b, rtol=1e-4, atol=1e-5), float((a - b).abs().max())
    assert (a - c).abs().max() > 1e-3  # rank 0 alone (its 4 envs) would be far off


def test_distributed_needs_torchrun_environment(monkeypatch):
    for v in distributed.TORCHRUN_VARS:
        monkeypatch.delenv(v, raising=False)
    with pytest.raises(RuntimeError, match="torchrun"):
        distributed.init_distributed("cpu")
    monkeypatch.setenv("RANK", "0")
    with pytest.raises(RuntimeError, match="WORLD_SIZE"):
        distributed.init_distributed("cpu")


def test_single_process_helpers_are_identity():
    assert distributed.world_size() == 1 and distributed.rank() == 0 and not distributed.is_multi_process()
    x = torch.tensor([1.5, math.nan])
    assert distributed.average_gradients([], x) is x
    assert distributed.any_rank(3) == 3


def test_ppo_two_gloo_ranks_identical(tmp_path):
    mp.start_processes(_ppo_worker, args=(_free_port(), str(tmp_path)), nprocs=WORLD, join=True, start_method="spawn")
    r0, r1 = (torch.load(tmp_path / f"ppo_rank{r}.pt", weights_only=False) for r in range(WORLD))
    assert r0["multi_gpu"] == {"global_rank": 0, "local_rank": 0, "world_size": 2}
    assert r1["multi_gpu"] == {"global_rank": 1, "local_rank": 1, "world_size": 2}
    assert not all(torch.equal(r0["before"][k], r1["before"][k]) for k in r0["before"])  # seeded apart...
    assert_bitwise_equal(r0["actor"], r1["actor"], "actor")  # ...then broadcast and trained on averaged gradients
    assert_bitwise_equal(r0["critic"], r1["critic"], "critic")
    assert not torch.equal(r0["obs"], r1["obs"])
    assert sorted(os.listdir(tmp_path / "ppo")).count("model_1.pt") == 1


ROOT = Path(__file__).resolve().parents[2]
TORCHRUN = str(Path(sys.executable).with_name("torchrun"))
TINY = [
    *TINY_SHAC,
    "--max_iterations",
    "4",
    "--eval_episodes",
    "0",
]


def _torchrun_train(log_dir, *extra):
    return [
        TORCHRUN,
        "--standalone",
        "--nnodes",
        "1",
        "--nproc_per_node",
        "2",
        str(ROOT / "scripts" / "train.py"),
        "--distributed",
        "--log_dir",
        str(log_dir),
        *TINY,
        *extra,
    ]


@pytest.mark.integration
@pytest.mark.slow
def test_torchrun_sigterm_then_resume_equals_uninterrupted_two_rank_run(tmp_path):
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    ref = subprocess.run(_torchrun_train(tmp_path / "ref"), capture_output=True, text=True, timeout=900, env=env)
    assert ref.returncode == 0, ref.stderr[-3000:]
    assert ref.stdout.count("[SHAC] it 4/4") == 1  # rank 0 alone prints
    assert ref.stdout.count("[train] task") == 1

    proc = subprocess.Popen(
        _torchrun_train(tmp_path / "run"), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )
    for line in proc.stdout:  # stop it while it trains iteration 2
        if line.startswith("[SHAC] it 1/4"):
            proc.send_signal(signal.SIGTERM)
            break
    proc.communicate(timeout=600)
    assert proc.returncode != 0
    (interrupted,) = glob.glob(str(tmp_path / "run" / "model_*_interrupted.pt"))
    saved = torch.load(interrupted, weights_only=True)
    assert len(saved["rank_states"]) == 2 and 1 <= saved["iter"] < 4

    resumed = subprocess.run(
        _torchrun_train(tmp_path / "resumed", "--resume", interrupted),
        capture_output=True,
        text=True,
        timeout=900,
        env=env,
    )
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    a = torch.load(tmp_path / "ref" / "model_4.pt", weights_only=True)
    b = torch.load(tmp_path / "resumed" / "model_4.pt", weights_only=True)
    for k in ("wall_time", "cfg", "infos"):
        a.pop(k), b.pop(k)
    assert_bitwise_equal(a, b)
