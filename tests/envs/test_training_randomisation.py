"""Training randomisation of the differentiable task: ground friction, motor strength and action latency."""

import pytest
import torch
import warp as wp
from helpers.finite_difference import assert_action_gradient_matches_fd

from isaaclab_diffsim.tasks.direct.locomotion.velocity import DiffVelocityEnv, DiffVelocityEnvCfg
from isaaclab_diffsim.tasks.direct.locomotion.velocity.config.anymal_c.flat_env_cfg import (
    AnymalCFlatDiffEnvCfg,
    AnymalCFlatDiffEnvCfg_PLAY,
)

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def make_env(num_envs=3, **events) -> DiffVelocityEnv:
    cfg = DiffVelocityEnvCfg(num_envs=num_envs)
    cfg.events.push_velocity = 0.0
    cfg.observations.enable_corruption = False
    for k, v in events.items():
        setattr(cfg.events, k, v)
    return DiffVelocityEnv(cfg)


def leg_dofs(env, array) -> torch.Tensor:
    return wp.to_torch(array, requires_grad=False).view(env.num_envs, env.layout.dofs_per_world)[:, 6:]


def test_motor_strength_scales_gains_and_effort_limit_per_env():
    nominal = make_env()
    env = make_env(motor_strength_range=(0.8, 1.2))
    s = env.motor_strength
    assert s.shape == (3, 1) and bool(((s >= 0.8) & (s < 1.2)).all()) and len(set(s.flatten().tolist())) == 3
    for name in ("joint_target_ke", "joint_target_kd", "joint_effort_limit"):
        want = leg_dofs(nominal, getattr(nominal.model, name)) * s
        assert torch.allclose(leg_dofs(env, getattr(env.model, name)), want), name
    # the torque the reward penalises is the scaled drive's, clipped at the scaled effort limit
    q, qd = env.q.clone(), env.qd.clone()
    qd[:, 6:] = 0.0
    targets = env.default_leg + torch.full((3, 12), 0.01)
    tau, tau0 = env._torques(q, qd, targets), nominal._torques(q, qd, targets)
    assert torch.allclose(tau, s * tau0, atol=1e-5)
    far = env.default_leg + torch.full((3, 12), 10.0)
    assert torch.allclose(env._torques(q, qd, far), s * env.effort_limit, atol=1e-4)


def test_ground_friction_gives_the_mean_rule_effective_coefficient():
    env = make_env(ground_friction=0.3, foot_friction_range=(0.3, 2.1))
    mu = wp.to_torch(env.model.shape_material_mu, requires_grad=False)
    ground = torch.as_tensor(env.model.shape_world.numpy() < 0)
    assert bool(ground.any()) and torch.allclose(mu[ground], torch.tensor(0.3))
    feet = mu[torch.as_tensor(env.layout.foot_shapes).long()]
    effective = 0.5 * (feet + 0.3)
    assert bool(((effective >= 0.3) & (effective <= 1.2)).all())
    assert make_env().model.shape_material_mu.numpy()[ground.numpy()].tolist() == [1.0]


@pytest.mark.parametrize("delay", [1, 2])
def test_action_delay_sends_the_action_of_delay_steps_ago(delay):
    env = make_env(action_delay_range=(delay, delay))
    env.reset(seed=0)
    actions = [torch.full((3, 12), 0.1 * (i + 1)) for i in range(4)]
    with torch.no_grad():
        for i, a in enumerate(actions):
            env.step(a)
            acting = actions[i - delay] if i >= delay else torch.zeros(3, 12)
            assert torch.allclose(env._targets_leg, env.default_leg + 0.5 * acting)
            assert torch.equal(env.last_actions, a)  # the observation's last action is the policy's


def test_action_delay_is_drawn_per_reset_within_its_range():
    env = make_env(num_envs=64, action_delay_range=(0, 2))
    env.reset(seed=3)
    assert set(env.action_delay.tolist()) == {0, 1, 2}
    state = env.get_state()
    assert state["action_queue"].shape == (64, 2, 12)
    env.set_state(state)


def test_delayed_action_gradient_matches_finite_differences():
    env = make_env(num_envs=2, action_delay_range=(1, 1))
    env.cfg.solver_cfg.contact_model = "smoothed"
    env.reset(seed=1)
    with torch.no_grad():
        env.step(torch.full((2, 12), 0.2))
    start = env.get_state()
    a0 = torch.full((2, 12), -0.1)

    def ret(a):
        env.set_state(start)
        env.detach()
        return env.step(a)[1].sum() + env.step(torch.zeros(2, 12))[1].sum()

    env.set_state(start)
    env.detach()
    b = a0.clone().requires_grad_(True)
    (first_step,) = torch.autograd.grad(env.step(b)[1].sum(), b)
    # acting one step late, the action reaches the first step's reward through the action rate alone
    rate = 2.0 * env.cfg.rewards.action_rate_l2 * (a0 - start["last_actions"]) * env.step_dt
    assert torch.allclose(first_step, rate, rtol=1e-4, atol=1e-9)
    assert_action_gradient_matches_fd(ret, a0, (1, 2, 7), min_fd=1e-5)


def test_registered_task_randomises_and_play_evaluates_at_nominal_values():
    train, play = AnymalCFlatDiffEnvCfg(), AnymalCFlatDiffEnvCfg_PLAY()
    assert (train.events.ground_friction, train.events.foot_friction_range) == (0.3, (0.3, 2.1))
    assert train.events.motor_strength_range == (0.8, 1.2) and train.events.action_delay_range == (0, 1)
    assert (train.events.push_velocity, train.events.push_interval_s) == (1.5, (2.0, 4.0))
    ev = play.events
    assert (ev.ground_friction, ev.foot_friction_range, ev.motor_strength_range, ev.action_delay_range) == (
        None,
        (0.8, 0.8),
        (1.0, 1.0),
        (0, 0),
    )
    assert ev.base_mass_add_range == (-5.0, 5.0) and ev.push_velocity == 0.0


@pytest.mark.parametrize(
    "field, value",
    [
        ("action_delay_range", (2, 1)),
        ("action_delay_range", (0.5, 1)),
        ("action_delay_range", (-1, 1)),
        ("motor_strength_range", (0.0, 1.0)),
        ("motor_strength_range", (1.2, 0.8)),
        ("ground_friction", -0.1),
    ],
)
def test_bad_randomisation_values_are_refused(field, value):
    cfg = DiffVelocityEnvCfg(num_envs=1)
    setattr(cfg.events, field, value)
    with pytest.raises(ValueError, match=f"events.{field}"):
        cfg.validate_values()
