"""Warm start: a SHAC run started from another task's networks whose observation is the first part of its own (the
flat policy on the rough task): the started policy and critic act as the source's, extra inputs at zero weight."""

import pytest
import torch
from helpers.shac import PointMassEnv, make_runner, small_cfg

from isaaclab_diffsim.rl.checkpoints import CheckpointError
from isaaclab_diffsim.rl.shac import ShacRunner
from isaaclab_diffsim.rl.shac.warm_start import first_observation_stats, widened_state

EXTRA = 3


class WidePointMassEnv(PointMassEnv):
    """The point masses with ``EXTRA`` more observations after the usual six (as a height scan follows the flat
    terms)."""

    def __init__(self, num_envs: int = 4):
        super().__init__(num_envs=num_envs)
        self.num_obs = 6 + EXTRA

    def _obs(self) -> torch.Tensor:
        extra = torch.sin(self.pos.sum(-1, keepdim=True) * torch.arange(1, EXTRA + 1))
        return torch.cat([super()._obs(), extra], dim=-1)


pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture
def source_checkpoint(one_torch_thread, tmp_path):
    """A source run trained for 3 iterations (its normaliser has moved off 0 / 1)."""
    env, runner = make_runner(seed=1, log_dir=str(tmp_path), max_iterations=3, save_interval=3)
    runner.learn()
    yield runner, str(tmp_path / "model_3.pt")
    runner.close()


def test_started_policy_and_critic_act_as_the_source(source_checkpoint):
    source, path = source_checkpoint
    torch.manual_seed(5)
    env = WidePointMassEnv()
    runner = ShacRunner(env, small_cfg(), device="cpu")
    runner.warm_start(path)
    obs = env.reset()
    ours, theirs = runner.get_inference_policy(), source.get_inference_policy()
    assert torch.allclose(ours(obs), theirs(obs[:, :6]), atol=1e-6)
    assert not torch.equal(obs[:, 6:], torch.zeros_like(obs[:, 6:]))  # the extra inputs carry values, weighted 0
    own = runner.alg.state_dict()
    first = own["model_state_dict"]["actor.0.weight"]
    assert first.shape[1] == 6 + EXTRA and torch.count_nonzero(first[:, 6:]) == 0
    norm = own["obs_normalizer_state_dict"]
    assert torch.equal(norm["mean"][6:], torch.zeros(EXTRA, dtype=norm["mean"].dtype))
    assert torch.equal(norm["var"][6:], torch.ones(EXTRA, dtype=norm["var"].dtype))
    assert not torch.equal(norm["mean"][:6], torch.zeros(6, dtype=norm["mean"].dtype))
    with torch.no_grad():
        v_src = source.alg.policy.evaluate(source.alg.obs_normalizer(obs[:, :6]))
        v_own = runner.alg.policy.evaluate(runner.alg.obs_normalizer(obs))
        t_src = source.alg.target_critic(source.alg.obs_normalizer(obs[:, :6]))
        t_own = runner.alg.target_critic(runner.alg.obs_normalizer(obs))
    assert torch.allclose(v_own, v_src, atol=1e-5) and torch.allclose(t_own, t_src, atol=1e-5)
    assert runner.current_learning_iteration == 0 and not runner.alg.actor_optimizer.state  # a fresh run otherwise
    runner.learn(num_iterations=1)  # trains from there


def test_same_observation_copies_the_networks(source_checkpoint):
    source, path = source_checkpoint
    env, runner = make_runner(seed=9)
    runner.warm_start(path)
    for key, value in source.alg.state_dict()["model_state_dict"].items():
        assert torch.equal(runner.alg.state_dict()["model_state_dict"][key], value)


def test_other_network_sizes_are_refused_naming_the_file(source_checkpoint):
    _, path = source_checkpoint
    runner = ShacRunner(WidePointMassEnv(), small_cfg(policy=small_cfg().policy.replace(actor_hidden_dims=[16, 16])))
    with pytest.raises(CheckpointError, match="model_3.pt.*actor"):
        runner.warm_start(path)


def test_a_wider_source_is_refused():
    small = {"model_state_dict": {"w": torch.zeros(4, 9)}, "target_critic_state_dict": {}}
    target = {"model_state_dict": {"w": torch.zeros(4, 6)}, "target_critic_state_dict": {}}
    with pytest.raises(ValueError, match="at most"):
        widened_state(small, target, 9, 6)


def test_first_obs_starts_the_extra_normaliser_entries_at_the_first_observation(source_checkpoint):
    source, path = source_checkpoint
    torch.manual_seed(5)
    env = WidePointMassEnv(num_envs=8)
    runner = ShacRunner(env, small_cfg(warm_start_obs_stats="first_obs"), device="cpu")
    obs = env.get_observations().double()
    runner.warm_start(path)
    norm, src = runner.alg.obs_normalizer, source.alg.obs_normalizer
    assert torch.allclose(norm.mean[6:], obs[:, 6:].mean(0)) and torch.allclose(norm.var[6:], obs[:, 6:].var(0, False))
    assert torch.equal(norm.mean[:6], src.mean) and torch.equal(norm.var[:6], src.var)
    assert torch.equal(norm.count, src.count)  # the source's weight in later merges
    ours, theirs = runner.get_inference_policy(), source.get_inference_policy()
    assert torch.allclose(ours(obs.float()), theirs(obs[:, :6].float()), atol=1e-6)  # still zero weight


def test_first_observation_stats_by_hand():
    state = {"mean": torch.tensor([5.0, 0.0, 0.0], dtype=torch.float64), "var": torch.ones(3, dtype=torch.float64)}
    state["count"] = torch.tensor(1e6, dtype=torch.float64)
    obs = torch.tensor([[1.0, 0.1, 2.0], [3.0, 0.3, float("nan")], [2.0, 0.5, 4.0]])
    out = first_observation_stats(state, obs, 1)  # the nan row is left out: rows 0 and 2
    assert out["mean"].tolist() == pytest.approx([5.0, 0.3, 3.0]) and out["var"].tolist() == pytest.approx(
        [1.0, 0.04, 1.0]
    )
    assert float(out["count"]) == 1e6 and float(state["var"][1]) == 1.0  # the input is not changed
    with pytest.raises(ValueError, match="no finite row"):
        first_observation_stats(state, torch.full((2, 3), float("nan")), 1)


def test_warm_start_obs_stats_is_checked():
    with pytest.raises(ValueError, match="warm_start_obs_stats"):
        small_cfg(warm_start_obs_stats="zeros").validate_values()
