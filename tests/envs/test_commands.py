"""Velocity commands with Isaac Lab's ``UniformVelocityCommandCfg`` options: heading envs get the yaw rate
clip(stiffness * wrap_to_pi(heading - robot heading)) every step, a differentiable function of the state; standing
envs a zero command; the registered SHAC task keeps forward commands only."""

import math

import pytest
import torch

from isaaclab_diffsim.tasks.direct.locomotion.velocity import DiffVelocityEnv, DiffVelocityEnvCfg
from isaaclab_diffsim.tasks.direct.locomotion.velocity.config.anymal_c.flat_env_cfg import (
    AnymalCFlatDiffEnvCfg,
    AnymalCFlatTrotDiffEnvCfg,
)


def make(num_envs=8, **commands):
    cfg = DiffVelocityEnvCfg(num_envs=num_envs)
    for k, v in commands.items():
        setattr(cfg.commands, k, v)
    return DiffVelocityEnv(cfg)


def expected_yaw_rate(env):
    x, y, z, w = env.q[:, 3:7].unbind(1)
    yaw = torch.atan2(2.0 * (w * z + x * y), 1.0 - 2.0 * (y * y + z * z))  # heading of the base's x axis
    err = torch.remainder(env.heading_target - yaw + math.pi, 2.0 * math.pi) - math.pi
    return torch.clamp(0.5 * err, -1.0, 1.0)


def test_heading_commands_follow_the_robot_and_carry_the_gradient():
    env = make(rel_standing_envs=0.0)
    env.reset(seed=0)
    assert env.is_heading_env.all()
    torch.testing.assert_close(env.commands[:, 2], expected_yaw_rate(env), atol=1e-5, rtol=0)
    assert env.commands[:, 2].abs().max() > 0.1
    a = torch.zeros(8, 12, requires_grad=True)
    obs, *_ = env.step(a)
    torch.testing.assert_close(env.commands[:, 2], expected_yaw_rate(env).detach(), atol=1e-5, rtol=0)
    torch.testing.assert_close(obs[:, 9:12], env.commands)  # the observation's velocity command
    (g,) = torch.autograd.grad(env.commands[:, 2].sum(), a)
    assert torch.count_nonzero(g) > 0


def test_heading_fraction_and_plain_commands():
    env = make(num_envs=64, rel_heading_envs=0.5, rel_standing_envs=0.0)
    env.reset(seed=1)
    frac = env.is_heading_env.float().mean().item()
    assert 0.3 < frac < 0.7
    plain = ~env.is_heading_env
    assert torch.all(env.commands[plain, 2] != expected_yaw_rate(env)[plain])  # sampled, not heading-controlled
    off = make(heading_command=False, rel_standing_envs=0.0)
    off.reset(seed=1)
    assert not off.is_heading_env.any()


def test_standing_envs_get_a_zero_command():
    env = make(num_envs=64, rel_standing_envs=0.25)
    env.reset(seed=2)
    standing = env.is_standing_env
    assert 0.1 < standing.float().mean().item() < 0.4
    assert torch.all(env.commands[standing] == 0.0) and torch.all(env.commands[~standing].abs().sum(1) > 0)
    with torch.no_grad():
        for _ in range(3):
            env.step(torch.zeros(64, 12))
    assert torch.all(env.commands[standing] == 0.0)


def test_registered_tasks_commands_and_bad_fractions_are_refused():
    cfg = AnymalCFlatDiffEnvCfg()  # Isaac Lab's omnidirectional commands, a fifth of the envs standing
    assert cfg.commands.heading_command and cfg.commands.rel_standing_envs == 0.4
    assert cfg.commands.lin_vel_y == (-1.0, 1.0) and cfg.commands.ang_vel_z == (-1.0, 1.0)
    trot = AnymalCFlatTrotDiffEnvCfg()  # forward only: the trot cannot stand or turn
    assert not trot.commands.heading_command and trot.commands.rel_standing_envs == 0.0
    cfg = DiffVelocityEnvCfg()
    cfg.commands.rel_standing_envs = 1.5
    with pytest.raises(ValueError, match="rel_standing_envs must be in"):
        cfg.validate_values()


def test_observation_noise_matches_isaac_labs_ranges_and_keeps_the_gradient():
    """Isaac Lab's flat-MDP noise: |noise| within (0.1, 0.2, 0.05, 0.01, 1.5) on base linear and angular velocity,
    projected gravity, joint positions and velocities, none on commands and actions; reproducible from the env's
    seed and its saved state; additive, so the gradient passes unchanged; off in the -Play config."""
    from isaaclab_diffsim.tasks.direct.locomotion.velocity.config.anymal_c.flat_env_cfg import (
        AnymalCFlatDiffEnvCfg_PLAY,
    )

    env = make(num_envs=64)
    env.reset(seed=3)
    a = torch.zeros(64, 12, requires_grad=True)
    obs, *_ = env.step(a)
    env.cfg.observations.enable_corruption = False
    clean = env._observations(env.q, env.qd, env.last_actions)
    env.cfg.observations.enable_corruption = True
    noise = (obs - clean).detach()
    bounds = [(0, 3, 0.1), (3, 6, 0.2), (6, 9, 0.05), (9, 12, 0.0), (12, 24, 0.01), (24, 36, 1.5), (36, 48, 0.0)]
    for lo, hi, amp in bounds:
        block = noise[:, lo:hi].abs()
        assert block.max() <= amp * (1 + 1e-5) + 1e-6, (lo, hi)
        if amp > 0:
            assert block.max() > 0.8 * amp  # spread over the whole range (64 envs)
    (g,) = torch.autograd.grad(obs[:, 24:36].sum(), env.qd)  # d(noisy joint-velocity term)/d(state): identity
    assert torch.equal(g[:, 6:], torch.ones(64, 12)) and torch.equal(g[:, :6], torch.zeros(64, 6))
    state = env.get_state()
    after = [env.step(torch.zeros(64, 12))[0] for _ in range(2)]
    env.set_state(state)
    again = [env.step(torch.zeros(64, 12))[0] for _ in range(2)]
    assert all(torch.equal(x, y) for x, y in zip(after, again))
    assert not AnymalCFlatDiffEnvCfg_PLAY().observations.enable_corruption
    torch.manual_seed(7)
    expected = torch.rand(3)
    torch.manual_seed(7)
    env.step(torch.zeros(64, 12))  # draws noise: torch's global generator is left where it was
    assert torch.equal(torch.rand(3), expected)
