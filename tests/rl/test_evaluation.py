"""evaluate(): metric values on scripted envs and policies, against hand-computed answers."""

import numpy as np
import pytest
import torch

from isaaclab_diffsim.rl.evaluation import evaluate
from isaaclab_diffsim.tasks.direct.locomotion.velocity import DiffVelocityEnv, DiffVelocityEnvCfg


class ScriptedEnv:
    """Envs whose episodes are fixed in advance: env i falls after ``fall_at[i]`` steps (None: never, it times out
    after ``max_episode_length``). The base velocity is the action's first two entries; env i's command is
    ``commands[i]``. Each step of the e-th episode (e = 0, 1, ... since the last reset) of env i earns
    ``(i + 1) * (e + 1)``, so a later episode would show up in the returns."""

    def __init__(self, fall_at, max_episode_length=10, commands=None):
        self.num_envs = len(fall_at)
        self.fall_at = fall_at
        self.max_episode_length = max_episode_length
        self.device = torch.device("cpu")
        cmd = torch.zeros(self.num_envs, 3) if commands is None else torch.as_tensor(commands, dtype=torch.float32)
        self.commands = cmd
        self.q = torch.zeros(self.num_envs, 19)
        self.resets = 0

    def _obs(self):
        obs = torch.zeros(self.num_envs, 48)
        obs[:, 9:12] = self.commands
        return obs

    def reset(self):
        self.resets += 1
        self.ep_len = torch.zeros(self.num_envs, dtype=torch.long)
        self.ep_index = torch.zeros(self.num_envs)
        self.q[:, 7:] = 0.0
        return self._obs()

    def step(self, actions):
        self.ep_len += 1
        reward = (torch.arange(self.num_envs) + 1.0) * (self.ep_index + 1.0)
        fall = torch.tensor([f is not None and int(n) >= f for f, n in zip(self.fall_at, self.ep_len)])
        trunc = (self.ep_len >= self.max_episode_length) & ~fall
        obs = self._obs()
        obs[:, 0:2] = actions[:, 0:2]
        obs[:, 5] = actions[:, 2]  # the yaw rate: the action's third entry
        extras = {"terminal_obs": obs.clone()}
        done = fall | trunc
        self.ep_len[done] = 0
        self.ep_index[done] += 1
        self.q[:, 7:] = self.ep_len[:, None].float()  # joint "positions": the step count within the episode
        return self._obs(), reward, fall, trunc, extras


def forward_at(speed):
    """Scripted policy: base velocity (speed, 0) whatever the observation."""

    def policy(obs):
        a = torch.zeros(obs.shape[0], 12)
        a[:, 0] = speed
        return a

    return policy


def test_each_env_first_full_episode_counts():
    """Env 0 falls every 2 steps, env 1 times out after 10: the evaluated set is one episode of each (fall rate 50 %).
    Taking the first two episodes to finish would count env 0 twice (fall rate 100 %, return 2 and 4)."""
    env = ScriptedEnv(fall_at=[2, None], commands=[[0.2, 0.0, 0.0], [1.0, 0.0, 0.0]])
    res = evaluate(env, forward_at(0.5), num_episodes=2, progress=False)
    np.testing.assert_array_equal(res.falls, [True, False])
    np.testing.assert_array_equal(res.lengths, [2, 10])
    np.testing.assert_allclose(res.returns, [2 * 1.0, 10 * 2.0])
    np.testing.assert_allclose(res.tracking_errors, [0.3, 0.5], rtol=1e-6)
    np.testing.assert_allclose(res.yaw_errors, [0.0, 0.0], atol=1e-7)
    assert res.joint_trace.shape == (2, 12)  # env 0's two steps, from the reset pose
    np.testing.assert_array_equal(res.joint_trace[:, 0], [0.0, 1.0])
    assert "fall rate 50.0 %" in res.summary()
    # the counted steps by command speed: env 0's 2 steps at 0.2 m/s, env 1's 10 at 1.0 m/s (the open band)
    assert [(r["band"], r["steps"]) for r in res.speed_profile] == [([0.0, 0.25], 2), ([1.0, None], 10)]
    assert res.speed_profile[0]["tracking_error"] == pytest.approx(0.3)
    assert res.speed_profile[1]["speed_along_command"] == pytest.approx(0.5)
    assert [(r["sector"], r["steps"]) for r in res.direction_profile] == [("forward", 12)]  # both commands along +x


def test_yaw_rate_error():
    env = ScriptedEnv(fall_at=[None, 4], commands=[[0.0, 0.0, 0.5], [0.0, 0.0, -1.0]])

    def turn(obs):
        a = torch.zeros(obs.shape[0], 12)
        a[:, 2] = 0.2  # yaw rate 0.2 rad/s in both envs
        return a

    res = evaluate(env, turn, num_episodes=2, progress=False)
    np.testing.assert_allclose(res.yaw_errors, [0.3, 1.2], rtol=1e-6)
    assert "yaw-rate error 0.750 rad/s" in res.summary()


def test_fewer_episodes_than_envs_and_rounds():
    env = ScriptedEnv(fall_at=[None, 3, 1])
    res = evaluate(env, forward_at(0.0), num_episodes=2, progress=False)
    np.testing.assert_array_equal(res.lengths, [10, 3])  # envs 0 and 1 only: env 2's falls are not counted
    assert env.resets == 1
    res = evaluate(env, forward_at(0.0), num_episodes=5, progress=False)
    assert env.resets == 3  # a second round after a new reset, for envs 0 and 1
    np.testing.assert_array_equal(res.lengths, [10, 3, 1, 10, 3])
    np.testing.assert_array_equal(res.falls, [False, True, True, False, True])
    np.testing.assert_allclose(res.returns, [10.0, 6.0, 3.0, 10.0, 6.0])
    assert res.speed_profile[0]["steps"] == int(res.lengths.sum())  # only the counted episodes' steps
    with pytest.raises(ValueError, match="num_episodes"):
        evaluate(env, forward_at(0.0), num_episodes=0)


def test_non_finite_action_names_envs_and_step():
    env = ScriptedEnv(fall_at=[None, None, None])

    def policy(obs):
        a = torch.zeros(3, 12)
        if env.ep_len[0] == 4:
            a[1, 3] = float("nan")
            a[2, 0] = float("inf")
        return a

    with pytest.raises(FloatingPointError, match=r"actions from the policy at step 4 in 2 of 3 envs \[1, 2\]"):
        evaluate(env, policy, num_episodes=3, progress=False)


def test_real_env_scripted_policies():
    """On the ANYmal env: standing still (zero actions) for 10-step episodes never falls and returns what a
    hand-rolled loop over the same env sums; a tilt limit below any attainable value (projected gravity's z is -1
    when upright) makes every episode a one-step fall."""
    torch.set_num_threads(1)
    cfg = DiffVelocityEnvCfg(num_envs=3, episode_length_s=0.2)
    env = DiffVelocityEnv(cfg)
    res = evaluate(env, lambda obs: torch.zeros(obs.shape[0], 12), num_episodes=3, progress=False)
    np.testing.assert_array_equal(res.lengths, [10, 10, 10])
    assert not res.falls.any()
    # the same episodes by hand: a fresh env with the same seed, reset, repeats them
    env2 = DiffVelocityEnv(DiffVelocityEnvCfg(num_envs=3, episode_length_s=0.2))
    env2.reset()
    total, err, yaw = torch.zeros(3), torch.zeros(3), torch.zeros(3)
    with torch.no_grad():
        for _ in range(10):
            cmd = env2.commands.clone()
            _, rew, term, trunc, extras = env2.step(torch.zeros(3, 12))
            total += rew
            err += (cmd[:, :2] - extras["terminal_obs"][:, 0:2]).norm(dim=1)
            yaw += (cmd[:, 2] - extras["terminal_obs"][:, 5]).abs()  # base_ang_vel's z
    assert bool(trunc.all()) and not bool(term.any())
    np.testing.assert_allclose(res.returns, total.numpy(), rtol=1e-6)
    np.testing.assert_allclose(res.tracking_errors, (err / 10).numpy(), rtol=1e-6)
    np.testing.assert_allclose(res.yaw_errors, (yaw / 10).numpy(), rtol=1e-5, atol=1e-6)
    assert float(res.yaw_errors.min()) > 0.01  # the base config commands yaw rates
    assert res.joint_trace.shape == (10, 12)

    low = DiffVelocityEnv(DiffVelocityEnvCfg(num_envs=3, max_gravity_z=-1.5))
    res = evaluate(low, lambda obs: torch.zeros(obs.shape[0], 12), num_episodes=3, progress=False)
    np.testing.assert_array_equal(res.lengths, [1, 1, 1])
    assert res.falls.all() and bool(low.failure_tilted.all())  # upright is past a limit of -1.5: a tilt failure
