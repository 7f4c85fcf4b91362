"""The sim-to-sim metrics on analytic trajectories: tracking (linear, yaw rate), joint power, roll/pitch, joint
limit excursions, torque smoothness and stance foot slip; the variant names and their errors."""

import math

import numpy as np
import pytest

from isaaclab_diffsim.deploy.sim2sim import parse_variant, parse_variants, summarize
from isaaclab_diffsim.deploy.sim2sim.actuator import DcMotor
from isaaclab_diffsim.deploy.sim2sim.metrics import CONTACT_HEIGHT, STEP_HEIGHT, EpisodeAccumulator, StepSample
from isaaclab_diffsim.deploy.sim2sim.noise import add_noise

DT, RADIUS, J = 0.02, 0.03, 2
LOWER, UPPER = np.array([-1.0, -0.5]), np.array([1.0, 0.5])


def run(steps, cmd=(1.0, 0.0, 0.5), fall_at=None, **fields):
    """One episode of ``steps`` control steps; ``fields`` are functions of the step index k giving that step's
    sample entry for the single episode (defaults: at rest, upright, joints at 0, feet on the ground)."""
    acc = EpisodeAccumulator(np.array([cmd]), LOWER, UPPER, DT, RADIUS)
    default = {
        "lin_vel_b": lambda k: np.zeros(3),
        "ang_vel_b": lambda k: np.zeros(3),
        "proj_g": lambda k: np.array([0.0, 0.0, -1.0]),
        "joint_pos": lambda k: np.zeros(J),
        "joint_vel": lambda k: np.zeros(J),
        "torque": lambda k: np.zeros(J),
        "foot_pos": lambda k: np.tile([0.0, 0.0, RADIUS], (4, 1)),
    }
    base_pos = fields.pop("base_pos", None)
    default.update(fields)
    for k in range(steps):
        acc.add(
            StepSample(
                **{name: f(k)[None] for name, f in default.items()},
                terminated=np.array([k == fall_at]),
                truncated=np.array([k + 1 == steps]),
                base_pos=None if base_pos is None else base_pos(k)[None],
            )
        )
    return acc.episodes()[0]


def test_tracking_power_and_attitude():
    ep = run(10, lin_vel_b=lambda k: np.array([0.7, 0.4, 0.0]), ang_vel_b=lambda k: np.array([0.0, 0.0, 0.2]))
    assert math.isclose(ep.tracking_error, 0.5) and math.isclose(ep.yaw_rate_error, 0.3)
    ep = run(4, torque=lambda k: np.array([10.0, -5.0]), joint_vel=lambda k: np.array([2.0, 4.0]))
    assert math.isclose(ep.joint_power, 40.0)
    tilt = 0.1
    ep = run(4, proj_g=lambda k: np.array([0.0, math.sin(tilt), -math.cos(tilt)]))
    assert math.isclose(ep.roll_rms, tilt, rel_tol=1e-9) and ep.pitch_rms < 1e-12
    ep = run(6, fall_at=2)
    assert ep.fell and ep.length == 3


def test_joint_limit_excursions():
    # joint 1 beyond its upper limit 0.5 by 0.1 k on steps 0..9, within it on 10..19
    ep = run(20, joint_pos=lambda k: np.array([0.0, 0.5 + 0.1 * k if k < 10 else 0.0]))
    assert math.isclose(ep.joint_limit_fraction, 9 / 20)  # step 0 sits on the limit: not beyond
    assert math.isclose(ep.joint_limit_max_rad, 0.9)
    ep = run(4, joint_pos=lambda k: np.array([-1.25, 0.0]))
    assert ep.joint_limit_fraction == 1.0 and math.isclose(ep.joint_limit_max_rad, 0.25)


def test_torque_smoothness():
    # a ramp: every step changes both torques by 3 N m -> rms change 3; a square wave of +-2: change 4
    assert math.isclose(run(10, torque=lambda k: np.array([3.0 * k, -3.0 * k])).torque_change_rms, 3.0)
    assert math.isclose(run(9, torque=lambda k: np.full(J, 2.0 * (-1) ** k)).torque_change_rms, 4.0)
    assert run(1, torque=lambda k: np.full(J, 5.0)).torque_change_rms == 0.0


def test_foot_slip_in_stance_only():
    def feet(k):
        p = np.tile([0.0, 0.0, RADIUS], (4, 1))
        p[0, 0] = 0.01 * k  # LF slides at 0.5 m/s on the ground
        p[1, :2] = 0.05 * k  # RF moves at 3.5 m/s but in the air
        p[1, 2] = RADIUS + 2 * CONTACT_HEIGHT
        return p

    ep = run(11, foot_pos=feet)
    # 4 stance feet, 3 at rest and LF at 0.5 m/s, over steps 1..9 (step 10 ends the episode)
    assert math.isclose(ep.foot_slip_speed, 0.5 / 3, rel_tol=1e-9)


def test_touchdowns_and_drift():
    def feet(k):
        p = np.tile([0.0, 0.0, RADIUS], (4, 1))
        p[0, 2] = RADIUS + (1.5 * STEP_HEIGHT if k % 10 < 5 else 0.0)  # LF: 5 steps up, 5 down, from step 0
        p[1, 2] = RADIUS + (1.5 * CONTACT_HEIGHT if k % 2 else 0.0)  # RF flickers below the step height
        return p

    # 41 steps: LF lands at steps 5, 15, 25, 35 (step 40 ends the episode and is left out); it starts in the air, so
    # its first landing is not a step
    ep = run(41, foot_pos=feet, base_pos=lambda k: np.array([0.01 * k, -0.02 * k, 0.6]))
    assert math.isclose(ep.touchdowns_per_foot_s, 3 / (4 * 41 * DT))
    assert math.isclose(ep.drift_m, math.hypot(0.01 * 39, 0.02 * 39))  # from step 0 to step 39
    still = run(20, base_pos=lambda k: np.array([1.0, 2.0, 0.6]))
    assert still.touchdowns_per_foot_s == 0.0 and still.drift_m == 0.0
    assert run(5).drift_m == 0.0  # no base positions: no drift measure


def test_landing_from_the_spawn_height_is_not_a_touchdown():
    def feet(k):  # every foot 5 cm up for 3 steps, then on the ground for good
        return np.tile([0.0, 0.0, RADIUS + (0.05 if k < 3 else 0.0)], (4, 1))

    assert run(20, foot_pos=feet).touchdowns_per_foot_s == 0.0


def test_summary_means_and_max():
    eps = [run(10, joint_pos=lambda k: np.array([1.1, 0.0])), run(10, joint_pos=lambda k: np.array([1.3, 0.0]))]
    s = summarize(eps, DT)
    assert math.isclose(s["joint_limit_max_rad"], 0.3) and s["joint_limit_fraction"] == 1.0
    assert math.isclose(s["episode_length_s"], 0.2) and s["fall_rate"] == 0.0


def test_variants_parse_and_refuse_clearly():
    assert parse_variant("motor0.8").motor == 0.8 and parse_variant("noise").noise
    assert parse_variant("cmd1.0").command_vx == 1.0 and parse_variant("cmd-0.5").command_vx == -0.5
    assert parse_variant("payload-5").payload == -5.0 and parse_variant("latency2").latency == 2
    for bad, match in (
        ("gravity2", "unknown variant 'gravity2'"),
        ("friction-0.5", "unknown variant"),
        ("motor0", "motor strength scale must be > 0"),
        ("latency1.5", "whole control steps"),
        ("noise2", "unknown variant"),
    ):
        with pytest.raises(ValueError, match=match):
            parse_variant(bad)
    with pytest.raises(ValueError, match="more than once"):
        parse_variants("nominal,noise,nominal")


def test_motor_strength_scales_gains_and_envelope():
    robot = {
        "default_joint_stiffness": [80.0],
        "default_joint_damping": [2.0],
        "effort_limit": [80.0],
        "velocity_limit": [7.5],
        "actuator_saturation": 120.0,
    }
    nominal, weak = DcMotor(robot), DcMotor(robot, 0.8)
    small, big = (np.array([0.1]), np.zeros(1), np.array([1.0])), (np.array([5.0]), np.zeros(1), np.zeros(1))
    assert math.isclose(weak.torque(*small)[0], 0.8 * nominal.torque(*small)[0])
    assert nominal.torque(*big)[0] == 80.0 and math.isclose(weak.torque(*big)[0], 64.0)


def test_noise_is_uniform_in_its_range_and_seeded():
    m = {"joint_vel": np.zeros((1000, 12)), "command": np.ones(3)}
    a = add_noise(m, {"joint_vel": (-1.5, 1.5)}, np.random.default_rng(3))
    b = add_noise(m, {"joint_vel": (-1.5, 1.5)}, np.random.default_rng(3))
    np.testing.assert_array_equal(a["joint_vel"], b["joint_vel"])
    assert -1.5 <= a["joint_vel"].min() < -1.4 and 1.4 < a["joint_vel"].max() <= 1.5
    assert (a["command"] == 1.0).all() and (m["joint_vel"] == 0.0).all()
    with pytest.raises(KeyError, match="base_lin_vel"):
        add_noise(m, {"base_lin_vel": (-0.1, 0.1)}, np.random.default_rng(0))
