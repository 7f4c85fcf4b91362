"""The SHAC actor loss split by reward term (isaaclab_diffsim.experiments.loss_terms): the discount of each step's
reward against hand values, the parts against SHAC's own loss with a zero critic, the gradient split's figures
against hand values, and the recorder that collects the terms."""

import pytest
import torch
from helpers.shac import make_runner

from isaaclab_diffsim.experiments.loss_terms import (
    RewardTermRecorder,
    alignment,
    alignment_per_horizon,
    gradient_split,
    reward_coefficients,
    term_losses,
)

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def test_reward_coefficients_restart_after_every_done():
    done = torch.tensor([[False, True], [True, False], [False, False], [False, True]])
    c = reward_coefficients(done, 0.5)
    # env 0: 1, 0.5 (done), then 1, 0.5; env 1: 1 (done), then 1, 0.5, 0.25
    assert c.tolist() == [[1.0, 1.0], [0.5, 1.0], [1.0, 0.5], [0.5, 0.25]]


def test_term_losses_add_up_to_shacs_actor_loss_with_a_zero_critic():
    """Two made-up reward terms fed to SHAC's process_env_step with terminations and time-outs: with the target
    critic at 0 the actor loss is the rewards' part alone, and the terms' parts must add up to it."""
    env, runner = make_runner(seed=4)
    alg, dim = runner.alg, env.num_obs
    with torch.no_grad():
        for p in alg.target_critic.parameters():
            p.zero_()
    g = torch.Generator().manual_seed(0)
    n, h = alg.num_envs, alg.horizon
    obs = torch.randn(n, dim, generator=g)
    alg.begin_horizon(obs, update_normalizer=False)
    terms, done, rewards = [], [], []
    for _ in range(h):
        step = {"a": torch.randn(n, generator=g), "b": torch.randn(n, generator=g)}
        terminated = torch.rand(n, generator=g) < 0.2
        truncated = ~terminated & (torch.rand(n, generator=g) < 0.2)
        r = step["a"] + step["b"]
        alg.process_env_step(torch.randn(n, dim, generator=g), r, terminated, truncated, {"terminal_obs": obs})
        terms.append(step)
        done.append(terminated | truncated)
        rewards.append(r)
    loss = alg.actor_loss
    alg.abort_horizon()
    parts = term_losses(terms, done, alg.gamma, rewards)
    assert set(parts) == {"a", "b"} and any(bool(d.any()) for d in done)
    torch.testing.assert_close(parts["a"] + parts["b"], loss.detach(), rtol=1e-6, atol=1e-7)
    # each part alone: -1/(h N) sum c r with the coefficients restarting after a done
    c = reward_coefficients(torch.stack(done), alg.gamma).float()
    expected = -(c * torch.stack([s["a"] for s in terms])).sum() / (h * n)
    torch.testing.assert_close(parts["a"], expected)


def test_term_losses_refuse_terms_that_miss_part_of_the_reward():
    terms = [{"a": torch.ones(3)}]
    with pytest.raises(ValueError, match="add up to the reward"):
        term_losses(terms, [torch.zeros(3, dtype=torch.bool)], 0.99, [torch.full((3,), 2.0)])
    with pytest.raises(ValueError, match="same steps"):
        term_losses(terms, [], 0.99, [torch.ones(3)])


def test_gradient_split_against_hand_values():
    weight = torch.tensor([[3.0, 0.0], [4.0, 1.0]])
    parts = {"x": torch.tensor([[1.0, 0.0], [0.0, 2.0]]), "y": torch.tensor([[1.0, 0.0], [0.0, -1.0]])}
    out = gradient_split(parts, weight, {"first": slice(0, 1), "second": slice(1, 2)})
    first = out["first"]  # G = (2, 0): x and y give half each
    assert first["norm"] == pytest.approx(2.0) and first["weight_norm"] == pytest.approx(5.0)
    assert first["parts"]["x"] == pytest.approx({"norm": 1.0, "share": 0.5, "cosine": 1.0, "radial": 0.6})
    second = out["second"]  # G = (0, 1); x = (0, 2), y = (0, -1): shares 2 and -1
    assert second["parts"]["x"]["share"] == pytest.approx(2.0)
    assert second["parts"]["y"] == pytest.approx({"norm": 1.0, "share": -1.0, "cosine": -1.0, "radial": -1.0})
    for group in out.values():
        assert sum(p["share"] for p in group["parts"].values()) == pytest.approx(1.0)


def test_reward_term_recorder_collects_terms_and_done_flags_and_restores_the_methods():
    class Env:
        def _get_rewards(self):
            terms = {"a": torch.tensor([1.0, 2.0]), "b": torch.tensor([0.5, 0.0])}
            return terms["a"] + terms["b"], terms

    class Alg:
        def __init__(self):
            self.seen = []

        def process_env_step(self, obs, rewards, terminated, truncated, extras):
            self.seen.append(rewards)

    env, alg = Env(), Alg()
    with RewardTermRecorder(env, alg) as rec:
        reward, _ = env._get_rewards()
        alg.process_env_step(None, reward, torch.tensor([True, False]), torch.tensor([False, True]), {})
    assert [sorted(t) for t in rec.terms] == [["a", "b"]] and len(alg.seen) == 1
    assert rec.done[0].tolist() == [True, True] and rec.rewards[0].tolist() == [1.5, 2.0]
    assert "_get_rewards" not in vars(env) and "process_env_step" not in vars(alg)


def test_alignment_against_hand_values():
    parts = {
        "track": torch.tensor([[3.0, 4.0]]),
        "brake": torch.tensor([[-3.0, 0.0]]),
        "side": torch.tensor([[4.0, -3.0]]),
    }
    out = alignment(parts, "track")  # unit direction (0.6, 0.8)
    assert out["track"] == pytest.approx({"along": 5.0, "cosine": 1.0})
    assert out["brake"] == pytest.approx({"along": -1.8, "cosine": -0.6})
    assert out["side"] == pytest.approx({"along": 0.0, "cosine": 0.0}, abs=1e-12)
    assert out["whole"]["along"] == pytest.approx(5.0 - 1.8)  # the parts' projections add up
    with pytest.raises(KeyError, match="no part 'speed'"):
        alignment(parts, "speed")


def test_alignment_per_horizon_is_not_decided_by_one_exploding_horizon():
    def horizon(brake: float) -> dict:
        return {"track": torch.tensor([[1.0, 0.0]]), "brake": torch.tensor([[brake, 2.0]])}

    horizons = [horizon(-0.5), horizon(-0.3), horizon(1000.0)]  # the last one explodes along the tracking term
    summed = {k: sum(h[k] for h in horizons) for k in ("track", "brake")}
    assert alignment(summed, "track")["brake"]["along"] > 0  # the sum says the brake helps tracking
    out = alignment_per_horizon(horizons, "track")
    assert out["brake"]["per_horizon"] == pytest.approx([-0.5, -0.3, 1000.0])
    assert out["brake"]["median"] == pytest.approx(-0.3) and out["brake"]["against"] == pytest.approx(2 / 3)
    assert out["track"]["median"] == pytest.approx(1.0) and out["track"]["against"] == 0.0
    assert out["whole"]["per_horizon"] == pytest.approx([0.5, 0.7, 1001.0])
    late = alignment_per_horizon([horizon(-0.5), {**horizon(-0.3), "lift": torch.tensor([[-2.0, 0.0]])}], "track")
    assert late["lift"]["per_horizon"] == pytest.approx([0.0, -2.0])  # a part live in a later horizon only
    assert late["brake"]["median"] == pytest.approx(-0.5)  # the lower middle of an even count
    with pytest.raises(ValueError, match="no horizons"):
        alignment_per_horizon([], "track")
