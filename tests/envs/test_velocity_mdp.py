"""The velocity task's MDP terms alone, on hand-made tensors (no env, no model): each function of
``tasks/direct/locomotion/velocity/mdp/`` against values worked out by hand."""

import math

import pytest
import torch

from isaaclab_diffsim.tasks.direct.locomotion.velocity import mdp
from isaaclab_diffsim.tasks.direct.locomotion.velocity.velocity_env_cfg import DiffCommandsCfg


def test_observation_layout_and_base_frame():
    terms = mdp.observation_terms(12)
    assert mdp.observation_size(12) == 48 and terms["joint_pos"] == slice(12, 24)
    q = torch.zeros(1, 19)
    q[0, 3:7] = torch.tensor([0.0, 0.0, math.sin(math.pi / 4), math.cos(math.pi / 4)])  # yaw 90 deg
    qd = torch.zeros(1, 18)
    qd[0, 0] = 1.0  # world x: the base's -y after the turn
    lin_b, _, proj_g = mdp.base_frame(q, qd)
    assert torch.allclose(lin_b, torch.tensor([[0.0, -1.0, 0.0]]), atol=1e-6)
    assert torch.allclose(proj_g, torch.tensor([[0.0, 0.0, -1.0]]), atol=1e-6)
    assert torch.allclose(mdp.gait_clock(torch.tensor([0.25])), torch.tensor([[1.0, 0.0]]), atol=1e-6)


def test_tracking_rewards():
    commands = torch.tensor([[1.0, 0.0, 0.5]])
    lin_b = torch.tensor([[0.5, 0.0, 0.0]])
    ang_b = torch.tensor([[0.0, 0.0, 0.5]])
    assert torch.allclose(mdp.track_lin_vel_xy_exp(commands, lin_b, 0.5), torch.tensor([math.exp(-1.0)]))
    assert torch.allclose(mdp.track_ang_vel_z_exp(commands, ang_b, 0.5), torch.ones(1))
    assert torch.allclose(mdp.track_lin_vel_xy_l2(commands, lin_b), torch.tensor([0.25]))
    assert torch.allclose(mdp.track_ang_vel_z_l2(commands, ang_b), torch.zeros(1))


def test_huber_tracking_is_quadratic_near_the_command_and_pulls_with_unit_force_far_from_it():
    commands = torch.tensor([[0.3, 0.4, 0.0], [0.0, 0.0, 0.0], [0.01, 0.0, 0.0], [2.0, 0.0, 0.0]], requires_grad=True)
    lin_b = torch.zeros(4, 3)
    value = mdp.track_lin_vel_xy_huber(commands, lin_b, delta=0.1)
    # |e| = 0.5: sqrt(0.25 + 0.01) - 0.1; 0 at the command; |e| = 0.01: about |e|^2 / (2 delta) = 5e-4
    assert torch.allclose(value[:2], torch.tensor([math.sqrt(0.26) - 0.1, 0.0]), atol=1e-7)
    assert value[2].item() == pytest.approx(5e-4, rel=5e-3)
    value.sum().backward()
    grad = commands.grad[:, :2]
    # d/de = e / sqrt(|e|^2 + delta^2): 0.5 / sqrt(0.26) in length at |e| = 0.5, 2 / sqrt(4.01) at |e| = 2
    assert grad[0].norm().item() == pytest.approx(0.5 / math.sqrt(0.26), rel=1e-6)
    assert grad[3, 0].item() == pytest.approx(2.0 / math.sqrt(4.01), rel=1e-6)
    assert torch.equal(grad[1], torch.zeros(2)) and commands.grad[:, 2].abs().max() == 0.0


def test_dc_motor_torques_follow_the_envelope():
    one = torch.ones(1, 1)
    args = dict(kp=one * 100.0, kd=one, strength=one, effort_limit=one * 80.0, velocity_limit=one * 10.0)
    q, target = torch.zeros(1, 1), torch.full((1, 1), 0.5)
    assert mdp.dc_motor_torques(q, q, target, **args, saturation=0.0).item() == pytest.approx(50.0)
    # at 5 rad/s the envelope allows 120 (1 - 0.5) = 60 N m forward
    fast = torch.full((1, 1), 5.0)
    assert mdp.dc_motor_torques(q, fast, target * 2, **args, saturation=120.0).item() == pytest.approx(60.0)
    assert mdp.dc_motor_torques(q, q, target * 4, **args, saturation=0.0).item() == pytest.approx(80.0)


def test_delayed_actions_act_late_and_keep_the_newest():
    queue = torch.tensor([[[1.0], [2.0]], [[1.0], [2.0]]])  # newest first
    actions = torch.tensor([[0.0], [0.0]])
    acting, queue = mdp.delayed_actions(actions, queue, torch.tensor([0, 2]))
    assert acting.flatten().tolist() == [0.0, 2.0]
    assert queue[:, :, 0].tolist() == [[0.0, 1.0], [0.0, 1.0]]


def test_gait_swing_and_trajectory_generator():
    phases = mdp.gait_phases(torch.tensor([[0.25]]), torch.tensor([0.0, 0.5]))
    swing = mdp.swing_profile(phases)
    assert torch.allclose(swing, torch.tensor([[1.0, 0.0]]), atol=1e-6)  # leg 0 mid-swing, leg 1 in stance
    offsets = mdp.trajectory_generator_offsets(swing, torch.tensor([0, 0, 1]), torch.tensor([0.4, -0.8, 0.4]), 0.5)
    assert torch.allclose(offsets, torch.tensor([[0.2, -0.4, 0.0]]), atol=1e-6)
    assert torch.allclose(mdp.gait_phase(torch.tensor([15]), 0.02, 0.6), torch.tensor([0.5]))


def test_feet_air_time_pays_on_touchdown_of_moving_envs():
    air = torch.tensor([[0.6, 0.0], [0.6, 0.0]])
    contact = mdp.feet_contact(torch.tensor([[[0.01, 0, 0], [0.0, 0, 0]]] * 2), sim_dt=0.005)
    first, new_air = mdp.update_air_time(air, contact, 0.02)
    assert first.tolist() == [[True, False]] * 2
    assert torch.allclose(new_air, torch.tensor([[0.0, 0.02]] * 2))
    moving = mdp.moving_command(torch.tensor([[1.0, 0.0, 0.0], [0.0, 0.0, 0.0]]))
    assert torch.allclose(mdp.feet_air_time(air, first, 0.5, moving), torch.tensor([0.1, 0.0]))


def test_foot_terms():
    heights = torch.tensor([[0.1, 0.0, 0.0, 0.0]])
    moving = torch.tensor([True])
    assert mdp.foot_lift(heights, 0.08, torch.zeros(1, 4), 0.0, moving).item() == pytest.approx(0.5)
    assert mdp.foot_lift(heights, 0.08, torch.ones(1, 4), 0.5, moving).item() == 0.0  # held up too long
    still = torch.zeros(1, 4, 3)
    assert mdp.foot_clearance(still, still, heights, torch.tensor([[True]]), 0.02, 0.1, 0.05, 2.0).item() == 1.0
    moved = still.clone()
    moved[0, 1, 0] = 0.02  # foot 1 moved 1 m/s at height 0: error 0.1^2 tanh(2)
    low = mdp.foot_clearance(moved, still, heights, torch.tensor([[False]]), 0.02, 0.1, 0.05, 2.0).item()
    assert low == pytest.approx(math.exp(-(0.01 * math.tanh(2.0) + 2 * 0.01 * math.tanh(1e-4)) / 0.05), rel=1e-6)
    swing = torch.tensor([[1.0, 0.0, 0.0, 0.0]])
    assert mdp.gait_foot_height_l2(heights, swing, 0.08).item() == pytest.approx(0.02**2)
    body_q = torch.tensor([[0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0]])
    centres = mdp.foot_centres(body_q, torch.zeros(1, 1, dtype=torch.long), torch.tensor([[0.0, 0.0, -0.5]]), 1, 1)
    assert torch.allclose(centres, torch.tensor([[[0.0, 0.0, 0.5]]]))
    assert mdp.height_above_ground(centres, lambda xy: xy[..., 0] + 0.2).item() == pytest.approx(0.3)


def test_commands():
    cfg = DiffCommandsCfg(rel_standing_envs=0.5)
    gen = torch.Generator().manual_seed(0)

    def uniform(shape, lo, hi):
        return lo + (hi - lo) * torch.rand(shape, generator=gen)

    sampled, heading, is_heading, is_standing = mdp.sample_velocity_commands(uniform, 64, cfg)
    assert sampled.shape == (64, 3) and heading.shape == (64,) and bool(is_heading.all())
    assert 0 < int(is_standing.sum()) < 64
    assert mdp.standing_commands(sampled, is_standing)[is_standing].abs().sum() == 0.0
    identity = torch.tensor([[0.0, 0.0, 0.0, 1.0]])
    rate = mdp.heading_yaw_rate(identity, torch.tensor([math.pi / 2]), 0.5, (-1.0, 1.0))
    assert rate.item() == pytest.approx(math.pi / 4)
    assert mdp.heading_yaw_rate(identity, torch.tensor([3.0]), 0.5, (-1.0, 1.0)).item() == 1.0  # clipped


def test_terminations_and_leg_kicks():
    failed = mdp.base_failure(
        torch.tensor([0.2, 0.5, 0.5]), torch.tensor([[0, 0, -1.0], [0, 0, -1.0], [0, 0, 0.0]]), 0.3, -0.5
    )
    assert failed.tolist() == [True, False, True]
    tilted = mdp.base_tilted(torch.tensor([[0, 0, -1.0], [0, 0.8, -0.6], [0.9, 0, -0.4]]), -0.5)  # 0, 53, 66 degrees
    assert tilted.tolist() == [False, False, True]
    assert mdp.time_out(torch.tensor([9, 10]), 10).tolist() == [False, True]
    kick = torch.ones(2, 4)
    change = mdp.leg_kick_velocity_change(
        kick, torch.tensor([1, 0]), torch.tensor([0, 0, 1, 1]), torch.tensor([True, False]), 6
    )
    assert change.shape == (2, 10) and change[0, 6:].tolist() == [0.0, 0.0, 1.0, 1.0] and change[1].abs().sum() == 0


def test_stand_still_terms_charge_only_envs_told_to_stand():
    commands = torch.tensor([[0.05, 0.0, 0.05], [0.5, 0.0, 0.0], [0.0, 0.0, 0.3]])
    still = mdp.still_command(commands, 0.1)
    assert still.tolist() == [True, False, False]
    q = torch.tensor([[0.1, -0.2]] * 3)
    assert torch.allclose(mdp.stand_still(q, torch.zeros(2), still), torch.tensor([0.3, 0.0, 0.0]))
    assert torch.allclose(mdp.stand_still_joint_vel(-q, still), torch.tensor([0.3, 0.0, 0.0]))
    heights = torch.tensor([[0.05, -0.01, 0.0, 0.02]] * 3)  # a foot below the ground (penetrating) counts 0
    assert torch.allclose(mdp.stand_still_feet_height(heights, still), torch.tensor([0.07, 0.0, 0.0]))


def test_hanging_foot_height_charges_only_feet_in_the_air_too_long():
    heights = torch.tensor([[0.2, 0.0, -0.05, 0.1], [0.2, 0.3, 0.0, 0.1]])
    air = torch.tensor([[0.5, 0.0, 0.6, 0.3], [0.1, 0.41, 0.0, 0.39]])
    # env 0: LF (0.2 m up for 0.5 s) and LH (5 cm below the ground under it, for 0.6 s); env 1: RF only
    assert torch.allclose(mdp.hanging_foot_height(heights, air, 0.4), torch.tensor([0.25, 0.3]))
    assert torch.allclose(mdp.hanging_foot_height(heights, air, 0.0), torch.tensor([0.35, 0.6]))
