"""Leg kicks (``events.leg_kick_velocity``): random velocity bumps on one leg per env, inside the autograd graph."""

import pytest
import torch

from isaaclab_diffsim.tasks.direct.locomotion.velocity import DiffVelocityEnv, DiffVelocityEnvCfg

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def make_env(kick: float, num_envs: int = 3) -> DiffVelocityEnv:
    cfg = DiffVelocityEnvCfg(num_envs=num_envs)
    cfg.events.push_velocity = 0.0
    cfg.events.leg_kick_velocity = kick
    cfg.events.leg_kick_interval_s = (0.05, 0.05)
    cfg.observations.enable_corruption = False
    return DiffVelocityEnv(cfg)


def test_a_kick_changes_the_joints_of_one_leg_within_its_bound():
    env = make_env(kick=2.0)
    env.reset(seed=0)
    env.leg_kick_time[:] = env.step_dt  # due at the next interval events
    env.leg_kick_time[2] = 10.0  # not due
    dq = env._leg_kicks()
    assert dq.shape == (3, env.layout.dofs_per_world)
    assert torch.equal(dq[:, :6], torch.zeros(3, 6)), "the base is not kicked"
    legs = env.joint_legs
    for e in range(2):
        kicked = sorted({int(legs[j]) for j in torch.nonzero(dq[e, 6:]).flatten()})
        assert len(kicked) == 1, f"env {e}: joints of {kicked} legs kicked"
        joints = legs == kicked[0]
        assert int(joints.sum()) == 3 and bool((dq[e, 6:][joints].abs() <= 2.0).all())
    assert torch.equal(dq[2], torch.zeros_like(dq[2])), "an env whose kick is not due is unchanged"
    assert float(env.leg_kick_time[0]) == pytest.approx(0.05), "the next kick is drawn from the interval"


def test_the_gradient_flows_through_a_kicked_step():
    """d(joint velocity after the kick)/d(actions) is the unkicked one: the kick is a constant added in the graph."""
    grads = []
    for kick in (0.0, 3.0):
        env = make_env(kick=kick, num_envs=2)
        env.reset(seed=0)
        env.leg_kick_time[:] = 1.0e-6  # every env kicked by the first step's interval events
        actions = torch.zeros(2, 12, requires_grad=True)
        env.step(actions)
        assert env.qd.requires_grad
        (g,) = torch.autograd.grad(env.qd[:, 6:].sum(), actions)
        grads.append(g)
        if kick > 0:
            assert float(env.leg_kick_time.min()) > 0.0, "the kick happened"
    torch.testing.assert_close(grads[1], grads[0], rtol=0, atol=0)


def test_play_settings_turn_kicks_off():
    cfg = DiffVelocityEnvCfg()
    cfg.events.leg_kick_velocity = 1.0
    cfg.use_evaluation_settings()
    assert cfg.events.leg_kick_velocity == 0.0


@pytest.mark.parametrize(
    "field, value",
    [("leg_kick_velocity", -1.0), ("leg_kick_interval_s", (0.0, 1.0)), ("leg_kick_interval_s", (2.0, 1.0))],
)
def test_bad_kick_settings_are_refused(field, value):
    cfg = DiffVelocityEnvCfg()
    setattr(cfg.events, field, value)
    with pytest.raises(ValueError, match=f"events.{field}"):
        cfg.validate_values()
