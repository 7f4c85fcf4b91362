"""The likelihood-ratio term SHAC can add to its actor loss: its gradient against hand values and against the
analytic gradient of a Gaussian bandit, and its wiring into SHAC's horizon (noise, advantages, rollout)."""

import pytest
import torch
from helpers.shac import PointMassEnv, small_cfg

from isaaclab_diffsim.rl.shac import ShacActorCritic, ShacRunner
from isaaclab_diffsim.rl.shac.likelihood_ratio import likelihood_ratio_loss


class PolicyWithoutSample(ShacActorCritic):
    """An actor-critic that cannot report the noise of its samples."""

    sample = None


def test_loss_and_gradient_against_hand_values():
    mean = torch.tensor([[0.5, -1.0], [2.0, 0.0]], requires_grad=True)
    noise = torch.tensor([[1.0, -2.0], [0.5, 3.0]])
    std = torch.tensor([0.5, 2.0], requires_grad=True)
    adv = torch.tensor([2.0, -1.0])
    loss = likelihood_ratio_loss(mean, noise, std, adv)
    loss.backward()
    # log N up to constants: -0.5 * |noise|^2 per sample -> -2.5 and -4.625; loss = -mean(adv * log N)
    torch.testing.assert_close(loss, torch.tensor(-(2.0 * -2.5 + -1.0 * -4.625) / 2))
    # d/dmean = -adv * noise / std / samples
    torch.testing.assert_close(mean.grad, torch.tensor([[-2.0, 1.0], [0.5, 0.75]]))
    assert std.grad is None  # the exploration noise is held fixed


def test_gradient_estimates_a_gaussian_bandit():
    """For r(a) = -(a - c)^2 and a ~ N(mu, sigma^2), d(-E[r])/dmu = 2 (mu - c): the term's gradient with the
    advantage r - mean(r) estimates it."""
    mu0, sigma, c, n = 0.3, 0.5, 1.0, 400_000
    gen = torch.Generator().manual_seed(0)
    noise = torch.randn(n, 1, generator=gen, dtype=torch.float64)
    mean = torch.full((n, 1), mu0, dtype=torch.float64, requires_grad=True)
    r = -(mu0 + sigma * noise[:, 0] - c).square()
    loss = likelihood_ratio_loss(mean, noise, torch.tensor([sigma], dtype=torch.float64), r - r.mean())
    loss.backward()
    estimate = float(mean.grad.sum())
    assert estimate == pytest.approx(2 * (mu0 - c), abs=0.01)


def _runner(coef: float, seed: int = 3):
    torch.manual_seed(seed)
    env = PointMassEnv(num_envs=4)
    cfg = small_cfg()
    cfg.algorithm.likelihood_ratio_coef = coef
    cfg.algorithm.concurrent_critic_fit = False  # the term does not touch the critic fit; no worker to fork
    return env, ShacRunner(env, cfg, device="cpu")


def _recorded_rollout(env, runner) -> list[torch.Tensor]:
    """One horizon from a fixed env state and noise seed; the actions the env got."""
    actions, step = [], env.step

    def recording_step(a):
        actions.append(a.detach().clone())
        return step(a)

    env.step = recording_step
    torch.manual_seed(11)
    env.reset()
    runner._rollout(update_normalizer=False, bookkeeping=False)
    env.step = step
    return actions


def test_term_keeps_the_rollout_and_its_noise_reproduces_the_actions():
    env0, off = _runner(0.0)
    env1, on = _runner(0.5)
    assert off.alg.noise_buf is None
    actions_off, actions_on = _recorded_rollout(env0, off), _recorded_rollout(env1, on)
    for a0, a1 in zip(actions_off, actions_on):
        assert torch.equal(a0, a1)  # the same draws from the global RNG
    alg = on.alg
    with torch.no_grad():
        for t, a in enumerate(actions_on):
            redrawn = alg.policy.actor(alg.obs_buf[t]) + alg.policy.std * alg.noise_buf[t]
            torch.testing.assert_close(torch.tanh(redrawn), a)


def test_term_uses_the_td_lambda_advantage_against_the_target_critic():
    """The gradient on the actor's output bias is -mean(A * noise / std) with A the TD(lambda) target minus the
    target critic's value of the step's observation."""
    env, runner = _runner(0.5)
    _recorded_rollout(env, runner)
    alg = runner.alg
    with torch.no_grad():
        values = alg.target_critic(alg.obs_buf).squeeze(-1)
        adv = (alg.compute_target_values() - values).reshape(-1, 1)
        noise = alg.noise_buf.reshape(-1, alg.num_actions)
        expected = -(adv * noise / alg.policy.std).mean(0)
    alg.policy.zero_grad(set_to_none=True)
    alg.likelihood_ratio_term().backward()
    bias = alg.policy.actor[-1].bias
    torch.testing.assert_close(bias.grad, expected)
    assert alg.policy.log_std.grad is None
    alg.abort_horizon()


def test_training_with_the_term_logs_it_and_moves_the_actor_differently():
    env0, off = _runner(0.0)
    env1, on = _runner(0.5)
    off.learn(2)
    stats = []
    update = on.alg.update

    def recording_update():
        s = update()
        stats.append(s)
        return s

    on.alg.update = recording_update
    on.learn(2)
    assert len(stats) == 2 and all(torch.isfinite(torch.tensor(s["likelihood_ratio_loss"])) for s in stats)
    w_off, w_on = off.alg.policy.actor[0].weight, on.alg.policy.actor[0].weight
    assert torch.isfinite(w_on).all() and not torch.equal(w_off, w_on)
    off.close()
    on.close()


def test_bad_coefficient_and_policy_without_noise_are_refused():
    cfg = small_cfg()
    cfg.algorithm.likelihood_ratio_coef = -0.1
    with pytest.raises(ValueError, match="likelihood_ratio_coef"):
        cfg.validate_values()
    torch.manual_seed(0)
    cfg = small_cfg()
    cfg.algorithm.likelihood_ratio_coef = 0.5
    cfg.policy.class_name = f"{__name__}:PolicyWithoutSample"
    with pytest.raises(ValueError, match="likelihood_ratio_coef.*sample"):
        ShacRunner(PointMassEnv(num_envs=4), cfg, device="cpu")
