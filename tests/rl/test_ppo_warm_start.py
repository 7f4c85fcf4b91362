"""rsl_rl PPO continued from a SHAC checkpoint (``agent.warm_start``): the started PPO policy acts, values and
explores as the SHAC one; its squashed-Gaussian likelihood is the Gaussian density of the pre-squash sample; the
fine-tuned checkpoint loads and exports with the task's registered agent cfg; bad checkpoints are refused."""

import math

import pytest
import torch
from tensordict import TensorDict

from isaaclab_diffsim.rl.checkpoints import CheckpointError
from isaaclab_diffsim.rl.ppo_runner import load_ppo_runner, make_ppo_runner
from isaaclab_diffsim.rl.shac import ShacRunner
from isaaclab_diffsim.rl.shac_shaped_models import SquashedGaussianDistribution
from isaaclab_diffsim.tasks.direct.locomotion.velocity import DiffVelocityEnv, DiffVelocityEnvCfg
from isaaclab_diffsim.tasks.direct.locomotion.velocity.config.anymal_c.agents.rsl_rl_ppo_cfg import (
    AnymalCFlatDiffPPORunnerCfg,
)
from isaaclab_diffsim.tasks.direct.locomotion.velocity.config.anymal_c.agents.shac_cfg import (
    AnymalCFlatShacRunnerCfg,
)

NUM_ENVS = 6

pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture(scope="module")
def env():
    torch.manual_seed(0)
    return DiffVelocityEnv(DiffVelocityEnvCfg(num_envs=NUM_ENVS, device="cpu"))


def _shac_checkpoint(env, path, **policy) -> ShacRunner:
    """A SHAC runner whose normaliser and log-std have moved off their initial values, saved to ``path``."""
    cfg = AnymalCFlatShacRunnerCfg()
    cfg.device = "cpu"
    for k, v in policy.items():
        setattr(cfg.policy, k, v)
    torch.manual_seed(3)
    runner = ShacRunner(env, cfg, log_dir=None, device="cpu")
    obs = env.get_observations()
    runner.alg.obs_normalizer.update(3.0 * obs + 1.0 + torch.randn_like(obs))
    with torch.no_grad():
        runner.alg.policy.log_std.copy_(torch.linspace(-2.0, -0.5, 12))
    runner.save(str(path))
    return runner


def _ppo_cfg(warm_start=None):
    cfg = AnymalCFlatDiffPPORunnerCfg()
    cfg.device = "cpu"
    cfg.num_steps_per_env = 4
    cfg.max_iterations = 1
    cfg.warm_start = warm_start
    return cfg


def test_started_ppo_acts_values_and_explores_as_shac(env, tmp_path):
    shac = _shac_checkpoint(env, tmp_path / "shac.pt")
    runner = make_ppo_runner(env, _ppo_cfg(str(tmp_path / "shac.pt")), log_dir=None, device="cpu")
    obs = env.get_observations() * 2.0 + 0.5  # off the statistics' centre
    with torch.no_grad():
        ppo_actions = runner.act_policy()(obs)
        shac_actions = shac.get_inference_policy()(obs)
        value = runner.alg.critic(TensorDict({"policy": obs}, batch_size=[NUM_ENVS])).squeeze(-1)
        shac_value = shac.alg.policy.evaluate(shac.alg.obs_normalizer(obs))
    assert torch.allclose(ppo_actions, shac_actions, atol=1e-6)
    assert ppo_actions.abs().max() < 1.0  # squashed
    assert torch.allclose(value, shac_value, atol=1e-5)
    runner.alg.actor.distribution.update(torch.zeros(1, 12))
    assert torch.allclose(runner.alg.actor.distribution.std, shac.alg.policy.std)


def test_squashed_likelihood_is_the_gaussian_density_of_the_pre_squash_sample():
    dist = SquashedGaussianDistribution(3, init_std=0.5, std_type="log")
    mean = torch.tensor([[0.3, -1.2, 2.0]])
    dist.update(mean)
    pre = torch.tensor([[0.1, -0.7, 2.5]])
    expected = sum(
        -0.5 * ((u - m) / 0.5) ** 2 - math.log(0.5) - 0.5 * math.log(2 * math.pi)
        for u, m in zip(pre[0].tolist(), mean[0].tolist())
    )
    assert dist.log_prob(torch.tanh(pre)).item() == pytest.approx(expected, rel=1e-5)
    torch.manual_seed(0)
    sample = dist.sample()
    assert sample.abs().max() < 1.0
    assert torch.equal(dist.deterministic_output(mean), torch.tanh(mean))


@pytest.mark.integration
def test_fine_tuned_checkpoint_loads_and_exports_with_the_registered_cfg(env, tmp_path):
    _shac_checkpoint(env, tmp_path / "shac.pt")
    runner = make_ppo_runner(env, _ppo_cfg(str(tmp_path / "shac.pt")), log_dir=str(tmp_path / "ppo"), device="cpu")
    runner.learn()
    assert runner.completed_iterations == 1
    params = torch.cat([p.detach().flatten() for p in runner.alg.actor.parameters()])
    assert torch.isfinite(params).all()
    path = str(tmp_path / "ppo" / "model_final.pt")
    runner.save(path)
    obs = env.get_observations()
    with torch.no_grad():
        trained = runner.act_policy()(obs)
        loaded = load_ppo_runner(env, _ppo_cfg(), path, device="cpu")  # registered cfg: rsl_rl's plain MLPs
        exported = loaded.deploy_actor()(obs)
    assert torch.allclose(loaded.act_policy()(obs), trained, atol=1e-6)
    assert torch.allclose(exported, trained, atol=1e-6)  # the TorchScript actor ends in tanh


def test_bad_warm_starts_are_refused(env, tmp_path):
    _shac_checkpoint(env, tmp_path / "plain.pt", layer_norm=False)
    with pytest.raises(CheckpointError, match="layer_norm=False"):
        make_ppo_runner(env, _ppo_cfg(str(tmp_path / "plain.pt")), log_dir=None, device="cpu")
    _shac_checkpoint(env, tmp_path / "shac.pt")
    state = torch.load(tmp_path / "shac.pt", weights_only=True)
    for key in ("actor.0.weight", "critic.0.weight"):  # one observation more than this task's 48
        w = state["model_state_dict"][key]
        state["model_state_dict"][key] = torch.cat([w, torch.zeros(w.shape[0], 1)], dim=1)
    torch.save(state, tmp_path / "wider.pt")
    with pytest.raises(CheckpointError, match="maps 49 observations to 12 actions; this task's PPO maps 48 to 12"):
        make_ppo_runner(env, _ppo_cfg(str(tmp_path / "wider.pt")), log_dir=None, device="cpu")
    torch.save({"model_state_dict": {}}, tmp_path / "other.pt")
    with pytest.raises(CheckpointError, match="not a SHAC checkpoint"):
        make_ppo_runner(env, _ppo_cfg(str(tmp_path / "other.pt")), log_dir=None, device="cpu")
