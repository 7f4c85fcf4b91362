"""Each robot's differentiable velocity task: it builds, its feet carry its weight at rest, and d(reward)/d(action)
through the physics matches finite differences."""

import gymnasium as gym
import pytest
import torch
from helpers.finite_difference import assert_action_gradient_matches_fd
from robot_statics import resting_env

import isaaclab_diffsim.tasks  # noqa: F401  (registers the tasks)
from isaaclab_diffsim.assets.robots import ROBOTS

pytestmark = pytest.mark.usefixtures("one_torch_thread")

TASKS = {
    "warp_quadruped": "DiffSim-Velocity-Flat-WarpQuadruped-Direct",
    "go2": "DiffSim-Velocity-Flat-Go2-Direct",
    "anymal_b": "DiffSim-Velocity-Flat-AnymalB-Direct",
}


@pytest.mark.parametrize("name", sorted(TASKS))
def test_registered_task_builds_and_steps(name):
    for task in (TASKS[name], TASKS[name] + "-Play"):
        env = gym.make(task, num_envs=2).unwrapped
        assert env.cfg.robot.name == name and env.layout.foot_names == tuple(ROBOTS[name].legs)
        obs = env.reset(seed=0)
        assert obs.shape == (2, 12 + 3 * 12 + 2)  # the trot clock's (sin, cos) appended
        obs, reward, *_ = env.step(torch.zeros(2, 12))
        assert torch.isfinite(obs).all() and reward.shape == (2,)


@pytest.mark.parametrize("name", sorted(ROBOTS))
def test_feet_carry_the_weight_at_rest_in_hard_contact(name):
    env = resting_env(name, "hard")
    env.reset(seed=0)
    mass = float(env.model.body_mass.numpy()[: env.layout.bodies_per_world].sum())
    heights, forces = [], []
    with torch.no_grad():
        for _ in range(100):  # 2 s
            env.step(torch.zeros(1, 12))
            heights.append(float(env.q[0, 2]))
            forces.append(float(env.sim.last_contact_impulses()[:, 0].sum()) / env.cfg.sim_dt)
    last_h, last_f = torch.tensor(heights[-25:]), torch.tensor(forces[-25:])
    assert not bool(env.reset_terminated.any())
    assert float(last_f.mean()) == pytest.approx(mass * 9.81, rel=0.02)
    assert float(last_h.max() - last_h.min()) < 5e-3  # steady over the last 0.5 s
    assert env.cfg.min_base_height < float(last_h.mean()) < env.cfg.init_base_height


@pytest.mark.parametrize("name", sorted(ROBOTS))
def test_reward_gradient_matches_finite_differences(name):
    env = resting_env(name, "smoothed")
    env.cfg.rewards.feet_air_time = 0.0  # contact timing: no gradient
    env.reset(seed=1)
    with torch.no_grad():
        for _ in range(10):
            env.step(torch.zeros(1, 12))
    env.commands[:] = torch.tensor([0.5, 0.0, 0.0])
    start = env.get_state()

    def reward(a):
        env.set_state(start)
        env.detach()
        env.step(0.5 * a)
        return env.step(a)[1].sum()  # two steps: the second's reward sees the first action's motion

    a0 = torch.full((1, 12), 0.1)
    # a front hip and knee, a hind hip
    assert_action_gradient_matches_fd(reward, a0, (1, 2, 7), min_fd=1e-5, abs_tol=2e-5)
