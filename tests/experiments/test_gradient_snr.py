"""gradient_snr: per-env factors of a first-layer gradient against autograd, the unbiased signal against the explicit
pairwise products, and the batch-size predictions against a Monte Carlo draw."""

import itertools
import math

import pytest
import torch

from isaaclab_diffsim.experiments.gradient_snr import (
    GradientSignal,
    LayerGradientCapture,
    combine_horizons,
    envs_share,
    horizon_moments,
    largest_envs,
    per_env_moments,
    per_weight_moments,
    weight_envs_needed,
)

T, N, D, H = 4, 5, 6, 3  # steps, envs, inputs, first-layer units


def rollout(layer: torch.nn.Linear, head: torch.nn.Linear, x0: torch.Tensor) -> torch.Tensor:
    """A recurrent toy horizon: each step's input depends on the previous step's output, so a step's output
    gradient holds what later steps make of it, as in a SHAC horizon. Returns the per-env losses (N,)."""
    x, loss = x0, torch.zeros(x0.shape[0], dtype=x0.dtype)
    for _ in range(T):
        h = torch.tanh(layer(x))
        a = head(h)
        loss = loss + (a - 0.3).square().sum(-1)
        x = torch.cat([x[:, 2:], torch.sin(a[:, :2])], 1)
    return loss


@pytest.fixture
def nets():
    torch.manual_seed(0)
    return torch.nn.Linear(D, H).double(), torch.nn.Linear(H, 2).double(), torch.randn(N, D, dtype=torch.float64)


def per_env_gradients(layer, head, x0) -> torch.Tensor:
    """Each env's own loss gradient on the layer's weight by separate backward passes: (N, H, D)."""
    out = []
    for n in range(N):
        (g,) = torch.autograd.grad(rollout(layer, head, x0[n : n + 1]).sum(), [layer.weight])
        out.append(g)
    return torch.stack(out)


def test_factors_give_autograd_gradient_and_per_env_norms(nets):
    layer, head, x0 = nets
    with LayerGradientCapture(layer) as cap:
        loss = rollout(layer, head, x0).mean()
        (grad,) = torch.autograd.grad(loss, [layer.weight])
    x, delta = cap.factors()
    assert x.shape == (T, N, D) and delta.shape == (T, N, H)
    cols = slice(1, 4)
    total, sq = per_env_moments(x, delta, cols)
    torch.testing.assert_close(total, grad[:, cols], rtol=1e-12, atol=1e-14)
    # the batch's loss is the envs' mean: each env's own gradient is N times its share
    g = per_env_gradients(layer, head, x0)[..., cols]
    torch.testing.assert_close(N * N * sq, g.square().sum(dim=(1, 2)), rtol=1e-10, atol=1e-14)


def test_signal_is_the_mean_pairwise_product(nets):
    layer, head, x0 = nets
    with LayerGradientCapture(layer) as cap:
        torch.autograd.grad(rollout(layer, head, x0).mean(), [layer.weight])
    signal, second = horizon_moments(*cap.factors(), slice(0, D))
    g = per_env_gradients(layer, head, x0).reshape(N, -1)
    pairs = [float(g[i] @ g[j]) for i, j in itertools.permutations(range(N), 2)]
    assert signal == pytest.approx(sum(pairs) / len(pairs), rel=1e-10)
    assert second == pytest.approx(float(g.square().sum()) / N, rel=1e-10)


def test_calls_without_grad_are_not_recorded(nets):
    layer, head, x0 = nets
    with LayerGradientCapture(layer) as cap:
        with torch.no_grad():
            layer(x0)
        with pytest.raises(ValueError, match="not called with grad enabled"):
            cap.factors()
    layer(x0)  # the hook is gone after the context
    assert cap.inputs == []


def test_predictions_match_a_monte_carlo_draw():
    """Per-env gradients mu + sigma * eps: the estimate recovers |mu|^2 and the noise, and the predicted cosine of two
    independent batch means matches the drawn one."""
    torch.manual_seed(1)
    dim, mu_scale, sigma = 50, 0.2, 1.0
    mu = torch.full((dim,), mu_scale, dtype=torch.float64)
    moments = []
    for _ in range(40):
        g = mu + sigma * torch.randn(400, dim, dtype=torch.float64)
        # factors of g as one step with a unit output gradient: G_n = N * delta_n x_n^T, delta_n = 1 / N
        moments.append(
            horizon_moments(g.unsqueeze(0), torch.full((1, 400, 1), 1 / 400, dtype=torch.float64), slice(None))
        )
    sig = combine_horizons(moments)
    true_signal, true_noise = dim * mu_scale**2, dim * sigma**2
    assert sig.signal == pytest.approx(true_signal, abs=4 * sig.signal_sem)
    assert sig.noise == pytest.approx(true_noise, rel=0.02)
    m = 64
    cos = []
    for _ in range(400):
        a, b = (
            (mu + sigma * torch.randn(m, dim, dtype=torch.float64)).mean(0),
            (mu + sigma * torch.randn(m, dim, dtype=torch.float64)).mean(0),
        )
        cos.append(float(a @ b / (a.norm() * b.norm())))
    expected = GradientSignal(true_signal, true_signal + true_noise).cosine(m)
    assert sum(cos) / len(cos) == pytest.approx(expected, abs=0.03)


def test_envs_for_cosine_inverts_cosine():
    s = GradientSignal(signal=0.02, second_moment=1.02)
    for c in (0.1, 0.5, 0.9):
        assert s.cosine(s.envs_for_cosine(c)) == pytest.approx(c)
    assert s.envs_for_cosine(0.5) == pytest.approx(50.0)
    assert GradientSignal(-1e-3, 1.0).envs_for_cosine() == math.inf
    assert GradientSignal(-1e-3, 1.0).cosine(4096) == 0.0


def test_bad_input_is_refused(nets):
    layer, head, x0 = nets
    with pytest.raises(TypeError, match="torch.nn.Linear"):
        LayerGradientCapture(torch.nn.Tanh())
    with pytest.raises(ValueError, match="at least 2 envs"):
        horizon_moments(torch.zeros(1, 1, D), torch.zeros(1, 1, H), slice(None))
    with pytest.raises(ValueError, match="cosine must be in"):
        GradientSignal(1.0, 2.0).envs_for_cosine(1.0)
    with pytest.raises(ValueError, match="no horizons"):
        combine_horizons([])


def test_per_weight_moments_against_per_env_gradients(nets):
    """Per weight: the explicit per-env gradients' pairwise products and squares; summed over the weights, the
    vector moments of horizon_moments; the sign-flipped estimate near zero where the mean dominates."""
    layer, head, x0 = nets
    with LayerGradientCapture(layer) as cap:
        torch.autograd.grad(rollout(layer, head, x0).mean(), [layer.weight])
    x, delta = cap.factors()
    cols = slice(2, 5)
    signal, second, null = per_weight_moments(x, delta, cols, chunk=2, generator=torch.Generator().manual_seed(0))
    g = per_env_gradients(layer, head, x0)[..., cols]
    pairs = (g.sum(0).square() - g.square().sum(0)) / (N * (N - 1))
    torch.testing.assert_close(signal, pairs, rtol=1e-10, atol=1e-14)
    torch.testing.assert_close(second, g.square().mean(0), rtol=1e-10, atol=1e-14)
    vec_signal, vec_second = horizon_moments(x, delta, cols)
    assert float(signal.sum()) == pytest.approx(vec_signal, rel=1e-10)
    assert float(second.sum()) == pytest.approx(vec_second, rel=1e-10)
    # a constant per-env gradient: all signal, and the sign-flipped estimate is small against it
    ones = torch.ones(1, 400, 2, dtype=torch.float64)
    s, m2, n0 = per_weight_moments(ones, torch.full((1, 400, 1), 1 / 400, dtype=torch.float64), slice(None))
    torch.testing.assert_close(s, m2)
    assert float(n0.abs().max()) < 0.05 * float(s.min())
    assert torch.isinf(weight_envs_needed(n0.clamp_max(0.0), m2)).all()
    torch.testing.assert_close(weight_envs_needed(torch.tensor([0.5]), torch.tensor([2.0])), torch.tensor([3.0]))


def test_largest_envs_and_a_subset_of_the_loss_envs(nets):
    """The envs with the largest own gradients and their share; a subset's moments from the batch loss's factors
    equal those of the subset's own gradients."""
    layer, head, x0 = nets
    with LayerGradientCapture(layer) as cap:
        torch.autograd.grad(rollout(layer, head, x0).mean(), [layer.weight])
    x, delta = cap.factors()
    g = per_env_gradients(layer, head, x0).reshape(N, -1)
    sq = g.square().sum(1)
    top, share = largest_envs(x, delta, 0.3)  # ceil(0.3 * 5) = 2 envs
    assert sorted(top.tolist()) == sorted(sq.topk(2).indices.tolist())
    assert share == pytest.approx(float(sq[top].sum() / sq.sum()), rel=1e-10)
    keep = [n for n in range(N) if n not in top.tolist()]
    signal, second = horizon_moments(x[:, keep], delta[:, keep], slice(None), loss_envs=N)
    kept = g[keep]
    pairs = [float(kept[i] @ kept[j]) for i, j in itertools.permutations(range(len(keep)), 2)]
    assert signal == pytest.approx(sum(pairs) / len(pairs), rel=1e-10)
    assert second == pytest.approx(float(kept.square().sum()) / len(keep), rel=1e-10)
    with pytest.raises(ValueError, match="fraction must be in"):
        largest_envs(x, delta, 1.0)
    mask = torch.zeros(N, dtype=torch.bool)
    mask[top] = True
    assert envs_share(x, delta, mask) == pytest.approx(share, rel=1e-10)
    assert envs_share(x, delta, torch.ones(N, dtype=torch.bool)) == pytest.approx(1.0, rel=1e-12)
