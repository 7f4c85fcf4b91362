"""SHAC's critic targets, bootstrap values, actor loss and target-critic update against hand computations."""

import pytest
import torch

from isaaclab_diffsim.rl.shac import SHAC, ShacActorCriticCfg, ShacAlgorithmCfg

GAMMA, LAM = 0.5, 0.8


def make_alg(horizon=3, num_envs=2, num_obs=2):
    cfg, pcfg = ShacAlgorithmCfg(gamma=GAMMA, lam=LAM), ShacActorCriticCfg(obs_normalization=False)
    pcfg.actor_hidden_dims = pcfg.critic_hidden_dims = [4]
    alg = SHAC(num_obs, 1, num_envs, horizon, cfg, pcfg, max_iterations=10)
    # a target critic with a known value: V'(o) = 2 o_0 + o_1 + 1
    lin = torch.nn.Linear(num_obs, 1)
    with torch.no_grad():
        lin.weight.copy_(torch.tensor([[2.0, 1.0]]))
        lin.bias.fill_(1.0)
    alg.target_critic = torch.nn.Sequential(lin).requires_grad_(False)
    return alg


def test_td_lambda_targets_by_hand():
    alg = make_alg()
    alg.rew_buf.copy_(torch.tensor([[1.0, 1.0], [2.0, 1.0], [3.0, 1.0]]))
    alg.done_buf.copy_(torch.tensor([[0.0, 1.0], [0.0, 0.0], [1.0, 1.0]]))  # the last step always ends the horizon
    alg.next_value_buf.copy_(torch.tensor([[10.0, 5.0], [20.0, 6.0], [30.0, 7.0]]))
    g = alg.compute_target_values()
    # env 0, no done inside the horizon: G2 = r2 + g V2, G1 = r1 + g((1-l) V1 + l G2), G0 likewise
    g2 = 3 + 0.5 * 30  # 18
    g1 = 2 + 0.5 * (0.2 * 20 + 0.8 * g2)  # 2 + 0.5 * (4 + 14.4) = 11.2
    g0 = 1 + 0.5 * (0.2 * 10 + 0.8 * g1)  # 1 + 0.5 * (2 + 8.96) = 6.48
    # env 1, done at step 0: G0 = r0 + g V0 (no lambda-mixing across the done)
    h2 = 1 + 0.5 * 7  # 4.5
    h1 = 1 + 0.5 * (0.2 * 6 + 0.8 * h2)  # 1 + 0.5 * 4.8 = 3.4
    h0 = 1 + 0.5 * 5  # 3.5
    torch.testing.assert_close(g, torch.tensor([[g0, h0], [g1, h1], [g2, h2]]), rtol=1e-6, atol=1e-6)
    assert (g0, g1, g2, h0, h1, h2) == pytest.approx((6.48, 11.2, 18.0, 3.5, 3.4, 4.5))


def test_bootstrap_values_and_actor_loss_by_hand():
    """Env 0 runs the whole horizon; env 1 fails (terminated) at step 0 and times out (truncated) at step 1.
    Bootstrap: 0 after a failure, V'(terminal obs) after a time-out, V'(obs) at the horizon's end."""
    alg = make_alg()
    o0 = torch.zeros(2, 2)
    alg.begin_horizon(o0)
    obs = [
        torch.tensor([[1.0, 0.0], [9.0, 9.0]]),
        torch.tensor([[2.0, 0.0], [0.5, 0.5]]),
        torch.tensor([[3.0, 1.0], [1.0, 1.0]]),
    ]
    term_obs = torch.tensor([[2.0, 0.0], [4.0, 0.0]])  # env 1's pre-reset observation at its time-out
    rew = [torch.tensor([1.0, 10.0]), torch.tensor([2.0, 20.0]), torch.tensor([3.0, 30.0])]
    term = [torch.tensor([False, True]), torch.tensor([False, False]), torch.tensor([False, False])]
    trunc = [torch.tensor([False, False]), torch.tensor([False, True]), torch.tensor([False, False])]
    for k in range(3):
        alg.act(o0)
        alg.process_env_step(obs[k], rew[k], term[k], trunc[k], {"terminal_obs": term_obs if k == 1 else obs[k]})
    v = lambda o: 2 * o[0] + o[1] + 1  # noqa: E731
    # stored next values: env 0 V'(obs_k); env 1: 0 (failure), V'(terminal obs) = 9 (time-out), V'(obs_2) = 4
    expected_next = torch.tensor([[v(obs[0][0]), 0.0], [v(obs[1][0]), 9.0], [v(obs[2][0]), 4.0]])
    torch.testing.assert_close(alg.next_value_buf, expected_next)
    torch.testing.assert_close(alg.done_buf, torch.tensor([[0.0, 1.0], [0.0, 1.0], [1.0, 1.0]]))
    # actor loss: -1/(h N) * sum over segments of [sum_k g^k r_k + g^(k_end + 1) V'(s_end)]
    seg_env0 = 1 + 0.5 * 2 + 0.25 * 3 + 0.125 * v(obs[2][0])  # 2.75 + 0.125 * 8 = 3.75
    seg_env1 = (10 + 0.5 * 0.0) + (20 + 0.5 * 9.0) + (30 + 0.5 * 4.0)  # three one-step segments: 66.5
    assert float(alg.actor_loss) == pytest.approx(-(seg_env0 + seg_env1) / 6)
    alg.abort_horizon()


def test_target_critic_soft_update(one_torch_thread):
    """After an update: target = alpha * target_before + (1 - alpha) * critic_after, parameter by parameter."""
    from helpers.shac import make_runner

    _, runner = make_runner(seed=5)
    alg = runner.alg
    before = [p.clone() for p in alg.target_critic.parameters()]
    runner.learn(1)
    a = float(alg.cfg.target_critic_alpha)
    for pt, p, b in zip(alg.target_critic.parameters(), alg.policy.critic.parameters(), before):
        assert torch.equal(pt, b.mul(a).add(p, alpha=1.0 - a))
        assert not torch.equal(pt, b)
