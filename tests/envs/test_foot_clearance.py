"""Phase-free reward terms of the differentiable task: Isaac Lab's Spot foot clearance, joint deviation, foot lift,
hanging feet."""

import pytest
import torch
from helpers.finite_difference import assert_action_gradient_matches_fd

from isaaclab_diffsim.envs.rotations import quat_rotate
from isaaclab_diffsim.tasks.direct.locomotion.velocity import DiffVelocityEnv, DiffVelocityEnvCfg

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def make_env(**rewards) -> DiffVelocityEnv:
    cfg = DiffVelocityEnvCfg(num_envs=2)
    cfg.events.push_velocity = 0.0
    cfg.observations.enable_corruption = False
    cfg.rewards.feet_air_time = 0.0
    for k, v in rewards.items():
        setattr(cfg.rewards, k, v)
    return DiffVelocityEnv(cfg)


def foot_centres(env) -> torch.Tensor:
    pose = env.body_q[env.foot_bodies.reshape(-1)]
    return (pose[:, :3] + quat_rotate(pose[:, 3:7], env.foot_centers)).view(env.num_envs, 4, 3)


def test_foot_clearance_and_joint_deviation_match_their_formulas():
    env = make_env(foot_clearance=0.5, joint_deviation_l1=-0.1)
    env.reset(seed=0)
    actions = torch.full((2, 12), 0.4)
    with torch.no_grad():
        env.step(actions)
        before = foot_centres(env).clone()
        _, _, _, _, _ = env.step(-actions)
        after = foot_centres(env)
        terms = env._rewards(env.q, env.qd, env._base(), env._prev_qd_leg, env.actions, env._targets_leg, env.body_q)[1]
    speed = (after[..., :2] - before[..., :2]).norm(dim=-1) / env.step_dt
    assert float(speed.max()) > 0.05  # the feet moved
    height = after[..., 2] - env.foot_radius
    error = ((height - 0.1) ** 2 * torch.tanh(2.0 * speed)).sum(1)
    # _rewards was called again after the step: its own previous foot positions are now `after` (speed 0)
    assert torch.allclose(terms["foot_clearance"], torch.full((2,), 0.5 * env.step_dt), atol=1e-6)
    want = 0.5 * torch.exp(-error / 0.05) * env.step_dt
    assert env.episode_sums["foot_clearance"].shape == (2,)
    deviation = -0.1 * (env.q[:, 7:] - env.default_leg).abs().sum(1) * env.step_dt
    assert torch.allclose(terms["joint_deviation_l1"], deviation, atol=1e-6)
    # the step's own term, recomputed from the feet before and after it
    env2 = make_env(foot_clearance=0.5, joint_deviation_l1=-0.1)
    env2.reset(seed=0)
    with torch.no_grad():
        env2.step(actions)
        logged_before = env2.episode_sums["foot_clearance"].clone()
        env2.step(-actions)
    assert torch.allclose(env2.episode_sums["foot_clearance"] - logged_before, want, atol=1e-6)


def test_foot_clearance_gradient_matches_finite_differences():
    env = make_env(foot_clearance=0.5)
    for name in env.cfg.rewards.__dict__:  # the clearance term alone
        if name not in (
            "foot_clearance",
            "foot_clearance_height",
            "foot_clearance_std",
            "foot_clearance_tanh_mult",
            "tracking_std",
            "feet_air_time_threshold",
        ):
            setattr(env.cfg.rewards, name, 0.0)
    env.cfg.solver_cfg.contact_model = "smoothed"
    env.reset(seed=1)
    with torch.no_grad():
        env.step(torch.full((2, 12), 0.3))
    start = env.get_state()
    a0 = torch.full((2, 12), -0.2, dtype=torch.float64).float()

    def reward(a):
        env.set_state(start)
        env.detach()
        return env.step(a)[1].sum()

    # the clearance term moves with these actions (about 3e-5 per unit)
    assert_action_gradient_matches_fd(reward, a0, (1, 2, 7), min_fd=5e-6)


def only_term(env, keep: tuple[str, ...]) -> None:
    for name in env.cfg.rewards.__dict__:
        if name not in (*keep, "tracking_std", "feet_air_time_threshold"):
            setattr(env.cfg.rewards, name, 0.0)


def test_foot_lift_matches_its_formula_and_needs_a_command():
    env = make_env(foot_lift=0.5)
    env.reset(seed=0)
    with torch.no_grad():
        env.step(torch.full((2, 12), 0.4))
        env.commands[0, :2] = torch.tensor([0.6, 0.0])
        env.commands[1, :2] = torch.tensor([0.05, 0.0])  # below 0.1 m/s: no foot-lift reward
        terms = env._rewards(env.q, env.qd, env._base(), env._prev_qd_leg, env.actions, env._targets_leg, env.body_q)[1]
    heights = foot_centres(env)[..., 2] - env.foot_radius
    lifted = heights.clamp(0.0, 0.08).sum(1).clamp(max=0.16) / 0.16
    assert torch.allclose(terms["foot_lift"][0], 0.5 * lifted[0] * env.step_dt, atol=1e-7)
    assert float(terms["foot_lift"][1]) == 0.0
    # two feet 0.1 m up and two on the ground pay the full weight; a third lifted foot adds nothing
    h = torch.tensor([[0.1, 0.0, 0.0, 0.1], [0.1, 0.1, 0.1, 0.0]])
    env.foot_heights = lambda body_q: h
    with torch.no_grad():
        env.commands[1, :2] = torch.tensor([0.6, 0.0])
        assert torch.allclose(env._foot_lift(env.body_q), torch.ones(2))


def test_foot_lift_gradient_matches_finite_differences():
    env = make_env(foot_lift=1.0)
    only_term(env, ("foot_lift", "foot_lift_height"))
    env.cfg.solver_cfg.contact_model = "smoothed"
    env.reset(seed=1)
    with torch.no_grad():
        env.step(torch.full((2, 12), 0.3))
        env.commands[:, 0] = 0.8
    start = env.get_state()
    a0 = torch.zeros(2, 12)
    a0[:, 1::3] = 0.6  # thighs forward and knees folded (LF, RF, LH, RH joints in haa, hfe, kfe order): feet lift
    a0[:, 2::3] = -0.6

    def reward(a):
        env.set_state(start)
        env.detach()
        return env.step(a)[1].sum()

    assert_action_gradient_matches_fd(reward, a0, (1, 2, 4), min_fd=1e-5)


def test_foot_lift_counts_a_foot_only_within_its_air_time_limit():
    env = make_env(foot_lift=1.0, foot_lift_max_air_s=0.3)
    env.reset(seed=0)
    h = torch.tensor([[0.1, 0.0, 0.0, 0.1], [0.1, 0.0, 0.0, 0.1]])
    env.foot_heights = lambda body_q: h
    env.commands[:, :2] = torch.tensor([0.6, 0.0])
    env.feet_air_time = torch.tensor([[0.1, 0.0, 0.0, 0.2], [0.1, 0.0, 0.0, 0.5]])  # env 1's RH foot: up too long
    assert torch.allclose(env._foot_lift(env.body_q), torch.tensor([1.0, 0.5]))


def test_hanging_foot_height_charges_feet_up_too_long_above_the_ground_below():
    env = make_env(hanging_foot_height=-1.0, hanging_foot_air_s=0.4)
    env.reset(seed=0)
    h = torch.tensor([[0.2, 0.0, -0.05, 0.1], [0.2, 0.3, 0.0, 0.1]])
    env.foot_heights = lambda body_q: h
    env.feet_air_time = torch.tensor([[0.5, 0.0, 0.6, 0.3], [0.1, 0.41, 0.0, 0.39]])
    assert torch.allclose(env._hanging_foot_height(env.body_q), torch.tensor([0.25, 0.3]))


def test_hanging_foot_height_is_measured_from_the_terrain_below():
    env = make_env(hanging_foot_height=-1.0, hanging_foot_air_s=0.0)
    env.reset(seed=0)
    with torch.no_grad():
        env.step(torch.zeros(2, 12))
    env.feet_air_time = torch.ones(2, 4)
    env.height_above_ground = lambda pos: pos[..., 2] - 0.03  # a ground 3 cm up under every foot
    want = (foot_centres(env)[..., 2] - env.foot_radius - 0.03).abs().sum(1)
    assert torch.allclose(env._hanging_foot_height(env.body_q), want, atol=1e-6)


def test_hanging_foot_height_gradient_matches_finite_differences():
    env = make_env(hanging_foot_height=-1.0, hanging_foot_air_s=0.0)
    only_term(env, ("hanging_foot_height", "hanging_foot_air_s"))
    env.cfg.solver_cfg.contact_model = "smoothed"
    env.reset(seed=1)
    with torch.no_grad():
        env.step(torch.full((2, 12), 0.3))
    env.feet_air_time = torch.ones(2, 4)  # every foot not in contact after the step counts
    start = env.get_state()
    a0 = torch.zeros(2, 12)
    a0[:, 1::3] = 0.6  # thighs forward and knees folded: the feet lift off
    a0[:, 2::3] = -0.6

    def reward(a):
        env.set_state(start)
        env.detach()
        return env.step(a)[1].sum()

    with torch.no_grad():
        reward(a0)
    assert bool((env.feet_air_time > 0).any()), "no foot in the air: the term has nothing to charge"
    assert_action_gradient_matches_fd(reward, a0, (4, 5, 8), min_fd=1e-5)  # env 0: RF and LH are up


def test_refuses_a_negative_hanging_foot_air_time():
    cfg = DiffVelocityEnvCfg(num_envs=1)
    cfg.rewards.hanging_foot_air_s = -0.1
    with pytest.raises(ValueError, match="rewards.hanging_foot_air_s"):
        cfg.validate_values()
