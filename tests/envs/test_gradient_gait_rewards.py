"""The reference-free reward terms: quadratic velocity tracking, base-height kernel, uprightness, quadratic
default-pose penalty (their formulas, and their action gradients against finite differences)."""

import math

import pytest
import torch
from helpers.finite_difference import assert_action_gradient_matches_fd

from isaaclab_diffsim.tasks.direct.locomotion.velocity import DiffVelocityEnv, DiffVelocityEnvCfg
from isaaclab_diffsim.tasks.direct.locomotion.velocity.recipes import use_gradient_gait_rewards

pytestmark = pytest.mark.usefixtures("one_torch_thread")

NEW_TERMS = (
    "track_lin_vel_xy_l2",
    "track_ang_vel_z_l2",
    "base_height_exp",
    "upright",
    "joint_deviation_l2",
    "stand_still",
    "stand_still_joint_vel",
)


def make_env(only_new_terms: bool = False) -> DiffVelocityEnv:
    cfg = DiffVelocityEnvCfg(num_envs=2)
    cfg.events.push_velocity = 0.0
    cfg.observations.enable_corruption = False
    use_gradient_gait_rewards(cfg, base_height=0.55)
    if only_new_terms:
        for name in vars(cfg.rewards):
            if name not in (*NEW_TERMS, *DiffVelocityEnv.REWARD_PARAMETERS):
                setattr(cfg.rewards, name, 0.0)
    return DiffVelocityEnv(cfg)


def test_recipe_turns_the_exponential_tracking_and_air_time_off():
    env = make_env()
    r = env.cfg.rewards
    assert (r.track_lin_vel_xy_exp, r.track_ang_vel_z_exp, r.feet_air_time) == (0.0, 0.0, 0.0)
    assert (r.foot_lift, r.foot_lift_max_air_s) == (0.5, 0.3) and "foot_lift" in env.term_names
    assert set(NEW_TERMS) <= set(env.term_names)
    assert not set(env.term_names) & DiffVelocityEnv.REWARD_PARAMETERS


def test_terms_match_their_formulas():
    env = make_env()
    env.reset(seed=0)
    with torch.no_grad():
        env.step(torch.full((2, 12), 0.3))
        env.commands = torch.tensor([[0.7, -0.2, 0.4], [0.0, 0.0, 0.0]])
        terms = env._rewards(env.q, env.qd, env._base(), env._prev_qd_leg, env.actions, env._targets_leg, env.body_q)[1]
    dt = env.step_dt
    lin_b, ang_b, proj_g = env._base()
    # the base's velocity in its own frame, rotated by hand with the quaternion (x, y, z, w)
    x, y, z, w = env.q[:, 3:7].unbind(1)
    rot = torch.stack(
        [
            torch.stack([1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)], -1),
            torch.stack([2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)], -1),
            torch.stack([2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)], -1),
        ],
        -2,
    )
    v_b = torch.einsum("nji,nj->ni", rot, env.qd[:, 0:3])
    w_b = torch.einsum("nji,nj->ni", rot, env.qd[:, 3:6])
    assert float((v_b - lin_b).abs().max()) < 1e-6 and float((w_b - ang_b).abs().max()) < 1e-6
    cmd = env.commands
    want_xy = -1.0 * ((cmd[:, 0] - v_b[:, 0]) ** 2 + (cmd[:, 1] - v_b[:, 1]) ** 2) * dt
    want_yaw = -0.5 * (cmd[:, 2] - w_b[:, 2]) ** 2 * dt
    height = env.q[:, 2]  # flat ground at z = 0
    want_height = torch.exp(-10.0 * (height - 0.55) ** 2) * dt
    want_upright = 0.5 * rot[:, 2, 2] * dt  # the base z axis' world z: cos of the tilt
    want_pose = -0.3 * ((env.q[:, 7:] - env.default_leg) ** 2).sum(1) * dt
    # env 1's command is zero: it alone pays for standing away from the default pose
    want_still = -2.0 * (env.q[:, 7:] - env.default_leg).abs().sum(1) * torch.tensor([0.0, 1.0]) * dt
    want_still_speed = -0.03 * env.qd[:, 6:].abs().sum(1) * torch.tensor([0.0, 1.0]) * dt
    wants = (want_xy, want_yaw, want_height, want_upright, want_pose, want_still, want_still_speed)
    for name, want in zip(NEW_TERMS, wants):
        assert torch.allclose(terms[name], want, atol=1e-7), name
    assert float(want_still[1]) < 0.0 and float(want_still_speed[1]) < 0.0
    assert float(want_pose.abs().min()) > 0 and float(want_xy.abs().min()) > 0  # the terms are not trivially 0


def test_height_kernel_peaks_at_the_target():
    env = make_env()
    env.reset(seed=0)
    with torch.no_grad():
        env.step(torch.zeros(2, 12))
    q = env.q.detach().clone()
    values = []
    for h in (0.45, 0.55, 0.65):
        q[:, 2] = h
        base = env._base_frame(q, env.qd)
        targets = env.default_leg.expand(2, 12)
        terms = env._rewards(q, env.qd, base, env.qd[:, 6:], torch.zeros(2, 12), targets, env.body_q)[1]
        values.append(terms["base_height_exp"][0])
    dt = env.step_dt
    assert math.isclose(float(values[1]), dt, rel_tol=1e-6)
    assert math.isclose(float(values[0]), math.exp(-0.1) * dt, rel_tol=1e-5)
    assert math.isclose(float(values[2]), math.exp(-0.1) * dt, rel_tol=1e-5)


def test_gradient_matches_finite_differences():
    env = make_env(only_new_terms=True)
    env.cfg.rewards.stand_still_joint_vel = -0.1
    env.cfg.rewards.stand_still_feet_height = -10.0
    env.cfg.solver_cfg.contact_model = "smoothed"
    env.reset(seed=1)
    with torch.no_grad():
        env.step(torch.full((2, 12), 0.3))
        env.commands = torch.tensor([[0.8, 0.3, -0.5], [-0.4, 0.0, 0.6]])
    _check_fd(env)
    with torch.no_grad():  # a zero command: stand_still joins the sum
        env.commands = torch.zeros(2, 3)
    _check_fd(env)


def test_huber_tracking_gradient_matches_finite_differences():
    env = make_env(only_new_terms=True)
    env.cfg.rewards.track_lin_vel_xy_l2 = 0.0
    env.cfg.rewards.track_lin_vel_xy_huber = -1.0
    env.cfg.solver_cfg.contact_model = "smoothed"
    env.reset(seed=1)
    with torch.no_grad():
        env.step(torch.full((2, 12), 0.3))
        env.commands = torch.tensor([[0.4, 0.1, 0.0], [-0.3, 0.5, 0.0]])
    assert "track_lin_vel_xy_huber" in env.term_names
    _check_fd(env)


def test_refuses_a_huber_tracking_delta_of_zero():
    cfg = DiffVelocityEnvCfg(num_envs=1)
    cfg.rewards.track_lin_vel_huber_delta = 0.0
    with pytest.raises(ValueError, match="rewards.track_lin_vel_huber_delta"):
        cfg.validate_values()


def _check_fd(env):
    start = env.get_state()
    a0 = torch.full((2, 12), -0.2)

    def reward(a):
        env.set_state(start)
        env.detach()
        return env.step(a)[1].sum()

    assert_action_gradient_matches_fd(reward, a0, (0, 1, 2, 7), min_fd=1e-5)


def test_refuses_a_negative_height_sharpness():
    cfg = DiffVelocityEnvCfg(num_envs=1)
    cfg.rewards.base_height_sharpness = -1.0
    with pytest.raises(ValueError, match="rewards.base_height_sharpness"):
        cfg.validate_values()


def near_zero_command_terms(weight: str, value: float) -> tuple[DiffVelocityEnv, dict]:
    """An env with reward ``weight`` set to ``value``, one step in, then env 0 told (nearly) to stand and env 1 to
    turn: the env and its weighted reward terms."""
    env = make_env()
    setattr(env.cfg.rewards, weight, value)
    env.reset(seed=0)
    with torch.no_grad():
        env.step(torch.full((2, 12), 0.3))
        env.commands = torch.tensor([[0.05, 0.0, 0.05], [0.0, 0.0, 0.5]])  # env 0 near zero; env 1 turns
        terms = env._rewards(env.q, env.qd, env._base(), env._prev_qd_leg, env.actions, env._targets_leg, env.body_q)[1]
    return env, terms


def test_stand_still_joint_speed_counts_only_under_a_zero_command():
    env, terms = near_zero_command_terms("stand_still_joint_vel", -0.1)
    want = -0.1 * env.qd[:, 6:].abs().sum(1) * torch.tensor([1.0, 0.0]) * env.step_dt
    assert torch.allclose(terms["stand_still_joint_vel"], want, atol=1e-7)
    assert float(want[0]) < 0.0


def test_stand_still_feet_height_charges_lifted_feet_under_a_zero_command():
    env, terms = near_zero_command_terms("stand_still_feet_height", -10.0)
    # the feet's lowest points above the plane z = 0, by hand from the foot spheres' centres
    lift = (env.foot_centres(env.body_q)[..., 2] - env.foot_radius).clamp(min=0.0).sum(1)
    want = -10.0 * lift * torch.tensor([1.0, 0.0]) * env.step_dt
    assert torch.allclose(terms["stand_still_feet_height"], want, atol=1e-7)
    assert float(want[0]) < 0.0  # the robot starts above the ground: its feet are lifted
