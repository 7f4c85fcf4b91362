"""The gradient-direction diagnostic: its action gradient against finite differences of the actor loss, the replay
leaving the env where the unperturbed horizon ends, and bad input."""

import gymnasium as gym
import pytest
import torch

from isaaclab_diffsim.diagnostics import MEASURES, gradient_direction
from isaaclab_diffsim.rl.shac import ShacRunner
from isaaclab_diffsim.rl.shac.capture import restore_snapshot, take_snapshot
from isaaclab_diffsim.tasks.task_cfgs import load_task_cfgs

TASK = "DiffSim-Velocity-Flat-AnymalC-Direct"

pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture(scope="module")
def runner():
    """An untrained SHAC runner on 4 envs (URDF model), horizon 4, commanded 0.6 m/s forward."""
    torch.manual_seed(0)
    env_cfg, agent = load_task_cfgs(TASK, "shac_cfg_entry_point")
    env_cfg.num_envs, env_cfg.asset_source = 4, "urdf"
    env_cfg.commands.lin_vel_x, env_cfg.commands.lin_vel_y, env_cfg.commands.ang_vel_z = (0.6, 0.6), (0, 0), (0, 0)
    env_cfg.commands.heading_command, env_cfg.commands.rel_standing_envs = False, 0.0
    agent.horizon = 4
    agent.policy.actor_hidden_dims = agent.policy.critic_hidden_dims = [32, 32]
    env = gym.make(TASK, cfg=env_cfg).unwrapped
    r = ShacRunner(env, agent, log_dir=None, device="cpu")
    yield r
    env.close()


def test_loss_change_matches_the_gradient(runner):
    """Along the steepest descent the replayed loss falls at the rate the action gradient predicts (finite
    differences at a small step), and every measure is reported."""
    result = gradient_direction(runner, eps=1e-3)
    assert result.grad_norm > 0.0 and result.predicted_loss_slope < 0.0
    assert result.loss_slope == pytest.approx(result.predicted_loss_slope, rel=0.1)
    assert set(result.measures) == set(result.slopes) == set(MEASURES)
    assert 0.3 < result.measures["base_height"] < 0.8  # the standing robot's base above the ground


def test_env_left_at_the_unperturbed_horizon_end(runner):
    """After the diagnostic the env is where the same horizon without any shift ends (and its loss is the one
    reported), so consecutive calls follow the policy's own trajectory."""
    snap = take_snapshot(runner)
    result = gradient_direction(runner, eps=0.05)
    after = runner.env.get_state()
    restore_snapshot(runner, snap)
    loss = runner.compute_actor_loss()
    assert loss == result.loss
    reference = runner.env.get_state()
    for key in ("q", "qd"):
        assert torch.equal(after[key], reference[key]), key


def test_refuses_a_non_positive_step(runner):
    with pytest.raises(ValueError, match="eps must be positive"):
        gradient_direction(runner, eps=0.0)
