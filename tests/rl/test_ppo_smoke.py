"""PPO smoke test: rsl_rl's OnPolicyRunner trains on the differentiable ANYmal C env through DiffEnvRslRlWrapper.

The runner is built the way Isaac Lab's train entry point builds it (``handle_deprecated_rsl_rl_cfg`` then
``OnPolicyRunner(env, to_dict(agent_cfg), log_dir, device)``), on CPU, for two short iterations.
"""

import importlib.metadata
import math

import pytest
import torch
from isaaclab.utils import to_dict
from isaaclab_rl.rsl_rl import handle_deprecated_rsl_rl_cfg
from rsl_rl.env import VecEnv
from rsl_rl.runners import OnPolicyRunner
from tensordict import TensorDict

from isaaclab_diffsim.envs.rsl_rl_wrapper import DiffEnvRslRlWrapper
from isaaclab_diffsim.tasks.direct.locomotion.velocity import DiffVelocityEnv, DiffVelocityEnvCfg
from isaaclab_diffsim.tasks.direct.locomotion.velocity.config.anymal_c.agents.rsl_rl_ppo_cfg import (
    AnymalCFlatDiffPPORunnerCfg,
)

NUM_ENVS = 8


class _RecordingWrapper(DiffEnvRslRlWrapper):
    """Keeps every step's rewards and dones so the test can inspect what PPO was fed."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.rewards, self.dones, self.time_outs = [], [], []

    def step(self, actions):
        obs, rew, dones, extras = super().step(actions)
        self.rewards.append(rew.clone())
        self.dones.append(dones.clone())
        self.time_outs.append(extras["time_outs"].clone())
        return obs, rew, dones, extras


@pytest.fixture(scope="module")
def env():
    torch.manual_seed(0)
    return DiffVelocityEnv(DiffVelocityEnvCfg(num_envs=NUM_ENVS, device="cpu"))


def test_wrapper_contract(env):
    wrapped = DiffEnvRslRlWrapper(env, clip_actions=1.0)
    assert isinstance(wrapped, VecEnv)
    assert (wrapped.num_envs, wrapped.num_actions, wrapped.max_episode_length) == (NUM_ENVS, 12, env.max_episode_length)
    obs = wrapped.get_observations()
    assert isinstance(obs, TensorDict) and list(obs.keys()) == ["policy"]
    assert obs["policy"].shape == (NUM_ENVS, 48)
    # a random episode length written through the wrapper lands in the env (runner's init_at_random_ep_len)
    wrapped.episode_length_buf = torch.randint_like(wrapped.episode_length_buf, high=int(wrapped.max_episode_length))
    assert wrapped.episode_length_buf is env.episode_length_buf and env.episode_length_buf.dtype == torch.long
    with torch.inference_mode():  # how the runner calls it
        obs, rew, dones, extras = wrapped.step(100.0 * torch.ones(NUM_ENVS, 12))
    assert obs["policy"].shape == (NUM_ENVS, 48) and rew.shape == (NUM_ENVS,) and dones.shape == (NUM_ENVS,)
    assert dones.dtype == torch.long and extras["time_outs"].dtype == torch.bool
    assert not rew.requires_grad and not obs["policy"].requires_grad
    alive = dones == 0  # a reset zeroes last_actions
    assert torch.equal(env.last_actions[alive], torch.ones(int(alive.sum()), 12))  # clipped to [-1, 1]
    assert not env.q.is_inference() and not env.last_actions.is_inference()


@pytest.mark.integration
def test_ppo_smoke(env, tmp_path):
    agent_cfg = AnymalCFlatDiffPPORunnerCfg()
    agent_cfg.num_steps_per_env = 8
    agent_cfg.max_iterations = 2
    agent_cfg.device = str(env.device)  # the agent follows the env's device
    agent_cfg = handle_deprecated_rsl_rl_cfg(agent_cfg, importlib.metadata.version("rsl-rl-lib"))

    wrapped = _RecordingWrapper(env, clip_actions=agent_cfg.clip_actions)
    log_dir = tmp_path / "anymal_c_flat_diffsim"
    runner = OnPolicyRunner(wrapped, to_dict(agent_cfg), log_dir=str(log_dir), device=agent_cfg.device)
    # rsl_rl's logger writes `git diff` of the repo around rsl_rl's file (here: this repo, the venv is inside it)
    runner.logger.git_status_repos = []
    params_before = [p.detach().clone() for p in runner.alg.get_policy().parameters()]
    runner.learn(num_learning_iterations=agent_cfg.max_iterations, init_at_random_ep_len=True)

    # it ran: every step of both iterations was taken and the policy was updated
    n_steps = agent_cfg.max_iterations * agent_cfg.num_steps_per_env
    assert len(wrapped.rewards) == n_steps
    assert runner.current_learning_iteration == agent_cfg.max_iterations - 1
    rewards = torch.stack(wrapped.rewards)
    assert rewards.shape == (n_steps, NUM_ENVS)
    assert torch.isfinite(rewards).all()
    assert math.isfinite(rewards.mean().item())
    params_after = list(runner.alg.get_policy().parameters())
    assert all(torch.isfinite(p).all() for p in params_after)
    assert any(not torch.equal(a, b) for a, b in zip(params_before, params_after))

    # a checkpoint was written (iteration 0 by save_interval, the last one at the end) and loads back
    last = log_dir / f"model_{agent_cfg.max_iterations - 1}.pt"
    assert (log_dir / "model_0.pt").is_file() and last.is_file()
    ckpt = torch.load(last, weights_only=False, map_location="cpu")
    assert ckpt["iter"] == agent_cfg.max_iterations - 1
    runner.load(str(last))
    policy = runner.get_inference_policy(device="cpu")
    with torch.inference_mode():
        actions = policy(wrapped.get_observations())
    assert actions.shape == (NUM_ENVS, 12) and torch.isfinite(actions).all()

    # scripts/play.py evaluates the PPO checkpoint (rsl_rl's loader) and prints its summary line
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    proc = subprocess.run(
        [
            sys.executable,
            str(root / "scripts" / "play.py"),
            "--algo",
            "ppo",
            "--checkpoint",
            str(last),
            "--episodes",
            "1",
            "--num_envs",
            "1",
            "env.episode_length_s=1.0",
            # the policy was trained on Isaac Lab's flat MDP (48 observations): no gait clock
            "env.gait.joint_swing_scale=0.0",
            "env.gait.period_s=0.0",
        ],
        capture_output=True,
        text=True,
        env=os.environ.copy(),
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "[play] ppo" in proc.stdout and "fall rate" in proc.stdout, proc.stdout[-2000:]

    # the env stays usable for differentiable rollouts (SHAC) after rsl_rl's inference-mode rollouts
    env.detach()
    a = torch.zeros(NUM_ENVS, 12, requires_grad=True)
    _, reward, *_ = env.step(a)
    reward.sum().backward()
    assert a.grad is not None and torch.isfinite(a.grad).all()


def test_ppo_interrupt_saves_completed_iteration_and_resume_finishes(env, tmp_path):
    """SIGTERM in the middle of PPO iteration 1's rollout: the iteration is finished, saved as
    model_1_interrupted.pt (2 iterations done), and a runner resuming from it runs only the third."""
    import os
    import signal

    from isaaclab_diffsim.rl.ppo_runner import DiffOnPolicyRunner

    agent_cfg = AnymalCFlatDiffPPORunnerCfg()
    agent_cfg.num_steps_per_env = 4
    agent_cfg.max_iterations = 3
    agent_cfg.save_interval = 100
    agent_cfg = handle_deprecated_rsl_rl_cfg(agent_cfg, importlib.metadata.version("rsl-rl-lib"))

    class Interrupting(_RecordingWrapper):
        def step(self, actions):
            if len(self.rewards) == 6:  # 3rd step of iteration 1
                os.kill(os.getpid(), signal.SIGTERM)
            return super().step(actions)

    wrapped = Interrupting(env)
    runner = DiffOnPolicyRunner(wrapped, to_dict(agent_cfg), log_dir=str(tmp_path), device="cpu")
    runner.logger.git_status_repos = []
    runner.learn()
    assert runner.interrupted and runner.interrupt_signal == signal.SIGTERM
    assert runner.completed_iterations == 2 and len(wrapped.rewards) == 8  # iteration 1 was finished
    path = tmp_path / "model_1_interrupted.pt"
    assert runner.last_checkpoint == str(path) and torch.load(path, weights_only=True)["iter"] == 1

    resumed_env = _RecordingWrapper(env)
    resumed = DiffOnPolicyRunner(resumed_env, to_dict(agent_cfg), log_dir=str(tmp_path / "resumed"), device="cpu")
    resumed.logger.git_status_repos = []
    resumed.load(str(path))
    assert resumed.completed_iterations == 2
    resumed.learn()
    assert resumed.completed_iterations == 3 and len(resumed_env.rewards) == 4  # only the missing iteration
    assert (tmp_path / "resumed" / "model_2.pt").is_file()
