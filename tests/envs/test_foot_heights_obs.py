"""The ``foot_heights`` observation: each foot's height above the ground below it, after the height scan; the body
poses it reads after a reset and a restored state; its action gradient; the simulator's forward kinematics."""

import pytest
import torch
from helpers.finite_difference import assert_action_gradient_matches_fd

from isaaclab_diffsim.tasks.direct.locomotion.velocity import DiffVelocityEnv, DiffVelocityEnvCfg
from isaaclab_diffsim.terrains import DiffFootHeightsCfg

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def make_env(num_envs: int = 2, **fields) -> DiffVelocityEnv:
    cfg = DiffVelocityEnvCfg(num_envs=num_envs, foot_heights=DiffFootHeightsCfg(clip=0.3, scale=5.0))
    cfg.events.push_velocity = 0.0
    cfg.observations.enable_corruption = False
    for k, v in fields.items():
        setattr(cfg, k, v)
    return DiffVelocityEnv(cfg)


def test_forward_kinematics_gives_the_poses_a_step_returns():
    env = make_env()
    env.reset(seed=0)
    with torch.no_grad():
        out = env.sim.step(env.q, env.qd, torch.full_like(env.q, 0.2))
    torch.testing.assert_close(env.sim.forward_kinematics(out.joint_q), out.body_q, rtol=0, atol=1e-6)
    with pytest.raises(ValueError, match="joint_q has 3 entries"):
        env.sim.forward_kinematics(torch.zeros(3))


def test_foot_heights_follow_the_height_scan_clipped_and_scaled():
    env = make_env()
    assert env.num_obs == 48 + 4 and env.foot_height_columns == slice(48, 52)
    env.reset(seed=0)
    with torch.no_grad():
        obs = env.step(torch.zeros(2, 12))[0]
    want = env.foot_heights(env.body_q).clamp(-0.3, 0.3) * 5.0
    torch.testing.assert_close(obs[:, 48:52], want, rtol=0, atol=0)
    env.foot_heights = lambda body_q: torch.tensor([[0.5, -0.5, 0.1, 0.0]] * 2)  # clipped at +-0.3 m
    torch.testing.assert_close(env._observed_foot_heights()[0], torch.tensor([1.5, -1.5, 0.5, 0.0]))


def test_reset_envs_observe_the_feet_of_their_new_state():
    env = make_env(episode_length_s=0.1)  # 5 steps: both envs reset within the loop
    env.reset(seed=1)
    with torch.no_grad():
        for _ in range(5):
            obs, _, terminated, truncated, _ = env.step(torch.full((2, 12), 0.5))
    assert bool((terminated | truncated).all())
    fk = env.sim.forward_kinematics(env.q)
    want = env.foot_heights(fk).clamp(-0.3, 0.3) * 5.0
    torch.testing.assert_close(obs[:, 48:52], want, rtol=0, atol=1e-6)
    assert float(env.foot_heights(fk).max()) < 0.1  # a fresh start stands: no foot far above the ground


def test_a_restored_state_observes_its_own_feet():
    env = make_env()
    env.reset(seed=2)
    with torch.no_grad():
        env.step(torch.full((2, 12), 0.4))
    state = env.get_state()
    state["obs"] = None  # recomputed from the state, with the state's body poses
    with torch.no_grad():
        for _ in range(3):
            env.step(torch.full((2, 12), -0.4))
    env.set_state(state)
    torch.testing.assert_close(env.obs[:, 48:52], state_obs_feet(env), rtol=0, atol=1e-6)


def state_obs_feet(env) -> torch.Tensor:
    return env.foot_heights(env.sim.forward_kinematics(env.q)).clamp(-0.3, 0.3) * 5.0


def test_foot_heights_gradient_in_the_base_height_is_the_scale():
    env = make_env()
    env.reset(seed=0)
    body_q = env.body_q.detach().clone().requires_grad_(True)
    env.body_q = body_q
    (g,) = torch.autograd.grad(env._observed_foot_heights().sum(), body_q)
    feet = env.foot_bodies.reshape(-1)
    assert torch.allclose(g[feet, 2], torch.full((8,), 5.0))  # d(h)/d(z) = 1 on a plane, times the scale
    others = torch.ones(len(g), dtype=torch.bool)
    others[feet] = False
    assert torch.equal(g[others], torch.zeros_like(g[others]))


def test_foot_heights_action_gradient_matches_finite_differences():
    env = make_env()
    env.cfg.solver_cfg.contact_model = "smoothed"
    env.reset(seed=1)
    with torch.no_grad():
        env.step(torch.full((2, 12), 0.3))
    start = env.get_state()
    a0 = torch.zeros(2, 12)
    a0[:, 1::3], a0[:, 2::3] = 0.6, -0.6  # the feet lift off
    weights = torch.tensor([1.0, -0.5, 0.7, 0.3])

    def objective(a):
        env.set_state(start)
        env.detach()
        return (env.step(a)[0][:, 48:52] * weights).sum()

    assert_action_gradient_matches_fd(objective, a0, (1, 2, 4, 5), min_fd=1e-5)


@pytest.mark.parametrize("field, value", [("clip", 0.0), ("scale", -1.0)])
def test_foot_heights_that_cannot_work_are_refused_naming_the_field(field, value):
    cfg = DiffVelocityEnvCfg(num_envs=1, foot_heights=DiffFootHeightsCfg())
    setattr(cfg.foot_heights, field, value)
    with pytest.raises(ValueError, match=f"foot_heights.{field}"):
        cfg.validate_values()


def test_a_leapp_trace_of_foot_heights_is_refused():
    from isaaclab_diffsim.tasks.direct.locomotion.velocity.leapp_trace import traced_observations

    env = make_env()
    env.reset(seed=0)
    with pytest.raises(NotImplementedError, match="cfg.foot_heights"):
        traced_observations(env, env.q, env.qd, env.last_actions)
