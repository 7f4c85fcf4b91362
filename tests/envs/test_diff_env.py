"""The differentiable ANYmal C velocity env: shapes, finite differences through a step, reset boundaries."""

import gymnasium as gym
import numpy as np
import pytest
import torch
import warp as wp

import isaaclab_diffsim.tasks  # noqa: F401  (registers the gym ids)
from isaaclab_diffsim.solver import SolverMoreauGS
from isaaclab_diffsim.tasks.direct.locomotion.velocity import DiffEventsCfg, DiffVelocityEnv, DiffVelocityEnvCfg

STATE = ("q", "qd", "last_actions", "commands", "feet_air_time", "episode_length_buf", "command_time", "push_time")


def snapshot(env):
    return {k: getattr(env, k).detach().clone() for k in STATE}


def restore(env, snap):
    for k, v in snap.items():
        setattr(env, k, v.clone())


def make_cfg(contact_model="smoothed", **kw):
    cfg = DiffVelocityEnvCfg(num_envs=4)
    cfg.solver_cfg.contact_model, cfg.solver_cfg.kappa = contact_model, 300.0
    cfg.rewards.feet_air_time = 0.0  # contact timing has no gradient; keep the FD check smooth
    for k, v in kw.items():
        setattr(cfg, k, v)
    return cfg


def make_env(**kw):
    return DiffVelocityEnv(make_cfg(**kw))


def test_gym_make_builds_and_steps():
    cfg = DiffVelocityEnvCfg(num_envs=4)
    env = gym.make("DiffSim-Velocity-Flat-AnymalC-Direct", cfg=cfg).unwrapped
    obs = env.reset()
    assert obs.shape == (4, 48) and torch.isfinite(obs).all()
    with torch.no_grad():
        obs, rew, term, trunc, extras = env.step(torch.zeros(4, 12))
    assert obs.shape == (4, 48) and rew.shape == (4,) and term.shape == (4,) and trunc.shape == (4,)
    assert torch.isfinite(obs).all() and torch.isfinite(rew).all()
    assert extras["terminal_obs"].shape == (4, 48)
    with pytest.raises(ValueError):
        env.step(torch.zeros(3, 12))
    sticky = DiffVelocityEnvCfg(num_envs=2)
    sticky.solver_cfg.contact_model = "sticky"
    with pytest.raises(ValueError):
        DiffVelocityEnv(sticky)


@pytest.mark.parametrize("gait_period, source", [(0.0, "urdf"), (0.4, "urdf"), (0.4, "isaaclab")])
def test_reward_gradient_matches_finite_difference(gait_period, source):
    """d(sum of rewards)/d(actions) through one policy step (4 substeps, smoothed contact, kappa 300); with the gait
    clock on, the foot-height term adds a gradient through the feet's body poses. The Isaac Lab-built model has the
    feet as bodies on fixed joints."""
    cfg = make_cfg(asset_source=source)
    cfg.gait.period_s = gait_period
    env = DiffVelocityEnv(cfg)
    try:
        _check_reward_gradient(env)
    finally:
        env.close()


def _check_reward_gradient(env):
    env.reset()
    with torch.no_grad():  # let the robot land first so the feet are in contact
        for _ in range(25):
            env.step(torch.zeros(4, 12))
    snap = snapshot(env)
    gen = torch.Generator().manual_seed(0)
    a0 = 0.3 * torch.randn(4, 12, generator=gen)

    def loss(a):
        restore(env, snap)
        _, rew, _, _, _ = env.step(a)
        return rew.sum()

    a = a0.clone().requires_grad_(True)
    loss(a).backward()
    grad = a.grad.numpy()
    eps = 1e-2
    for env_i, joint in [(0, 1), (1, 2), (2, 7), (3, 11)]:
        e = torch.zeros_like(a0)
        e[env_i, joint] = eps
        with torch.no_grad():
            fd = (loss(a0 + e) - loss(a0 - e)).item() / (2 * eps)
        assert abs(grad[env_i, joint] - fd) <= 2e-4 + 0.05 * abs(fd), (env_i, joint, grad[env_i, joint], fd)
    assert np.abs(grad).max() > 1e-4


def test_gradients_do_not_cross_a_reset():
    """Envs that time out are reset: their new observation does not depend on earlier actions, while the
    pre-reset (terminal) observation does."""
    grads = {}
    for key in ("obs", "terminal_obs"):
        env = make_env(episode_length_s=0.04)  # 2 policy steps
        env.reset()
        a1 = torch.zeros(4, 12, requires_grad=True)
        env.step(a1)
        obs, _, _, trunc, extras = env.step(torch.zeros(4, 12))
        assert trunc.all()
        out = obs if key == "obs" else extras["terminal_obs"]
        grads[key] = torch.autograd.grad(out.sum(), a1, allow_unused=True)[0]
    assert grads["obs"] is None or torch.count_nonzero(grads["obs"]) == 0
    assert torch.count_nonzero(grads["terminal_obs"]) > 0


def test_hard_mode_matches_solver():
    """Hard contact without gradients: one env step equals 4 direct SolverMoreauGS steps with the same targets."""
    env = make_env(contact_model="hard")
    env.reset()
    with torch.no_grad():
        for _ in range(10):
            env.step(torch.zeros(4, 12))
    q0, qd0 = env.q.clone(), env.qd.clone()
    actions = 0.2 * torch.ones(4, 12)
    with torch.no_grad():
        env.step(actions)
    model = env.model
    solver = SolverMoreauGS(
        model, contact_model="hard", iterations=env.cfg.solver_cfg.iterations, actuator_saturation=120.0
    )
    control = model.control()
    targets = torch.cat([torch.zeros(4, 7), env.default_leg + 0.5 * actions], 1)
    control.joint_target_q.assign(targets.reshape(-1).numpy())
    s0, s1 = model.state(), model.state()
    s0.joint_q.assign(q0.reshape(-1).numpy())
    s0.joint_qd.assign(qd0.reshape(-1).numpy())
    for _ in range(4):
        solver.step(s0, s1, control, None, 0.005)
        s0, s1 = s1, s0
    np.testing.assert_allclose(env.q.reshape(-1).numpy(), s0.joint_q.numpy(), atol=1e-5)
    np.testing.assert_allclose(env.qd.reshape(-1).numpy(), s0.joint_qd.numpy(), atol=1e-4)
    assert wp.to_torch(model.joint_q).shape[0] == 4 * 19


def test_state_roundtrip_is_bit_for_bit():
    env = make_env()
    env.reset()
    with torch.no_grad():
        for _ in range(3):
            env.step(0.1 * torch.ones(4, 12))
        state = env.get_state()
        a = env.step(0.2 * torch.ones(4, 12))
        env.set_state(state)
        b = env.step(0.2 * torch.ones(4, 12))
    for x, y in zip(a[:4], b[:4]):
        assert torch.equal(x, y)


@pytest.mark.parametrize("source", ["usd", "isaaclab"])
def test_usd_asset_source_matches_urdf(source):
    """``asset_source="usd"`` (the file Isaac Lab scenes spawn, our builder) and ``"isaaclab"`` (the model Isaac
    Lab's InteractiveScene and the DiffSim physics manager build from it) simulate the same robot as the URDF: from
    the same start, with the same actions by joint name, 25 hard-contact steps end in the same state (legs
    reordered to Isaac Lab's LF, LH, RF, RH)."""
    # the same startup events in both (Isaac Lab's event functions draw from torch's generator on "isaaclab")
    events = DiffEventsCfg(base_mass_add_range=(2.0, 2.0), base_com_range={"x": (0.01, 0.01)})
    envs = {
        "urdf": make_env(contact_model="hard", events=events),
        "usd": make_env(asset_source=source, contact_model="hard", events=events.copy()),
    }
    try:
        _compare_urdf_usd(envs)
        if source == "isaaclab":
            assert envs["usd"].layout.bodies_per_world == 17  # Isaac Lab's scene keeps the feet as bodies
            _check_one_solver_per_model(envs["usd"])
            with pytest.raises(RuntimeError, match="SimulationContext already exists"):
                make_env(asset_source="isaaclab")  # Isaac Lab's simulation context is a singleton
    finally:
        envs["usd"].close()


def _check_one_solver_per_model(env):
    """The env steps the solver Isaac Lab's physics manager built for the model, and no other SolverMoreauGS on that
    model exists; switching the contact model replaces it in both places."""
    import gc

    from isaaclab_newton.physics import NewtonManager

    def solvers_of_model():
        gc.collect()
        return [o for o in gc.get_objects() if isinstance(o, SolverMoreauGS) and o.model is env.model]

    assert env.sim.solver is NewtonManager._solver and solvers_of_model() == [env.sim.solver]
    env.set_contact_model("smoothed", kappa=250.0)
    assert env.sim.solver is NewtonManager._solver and solvers_of_model() == [env.sim.solver]
    assert env.sim.solver.contact_model == "smoothed" and float(env.sim.solver.kappa) == 250.0
    env.set_contact_model("hard")


def _compare_urdf_usd(envs):
    names = {src: list(env.layout.joint_names) for src, env in envs.items()}
    assert names["usd"] == [f"{leg}_{j}" for leg in ("LF", "LH", "RF", "RH") for j in ("HAA", "HFE", "KFE")]
    perm = [names["urdf"].index(n) for n in names["usd"]]  # usd leg dof i is urdf leg dof perm[i]
    layouts = {src: env.layout for src, env in envs.items()}
    for field in ("default_joint_pos", "stiffness", "damping", "effort_limit", "velocity_limit"):
        by_name = {src: dict(zip(lay.joint_names, getattr(lay, field))) for src, lay in layouts.items()}
        assert by_name["usd"] == pytest.approx(by_name["urdf"]), field
    assert layouts["usd"].foot_names == layouts["urdf"].foot_names == ("LF", "RF", "LH", "RH")
    assert layouts["usd"].foot_radius == pytest.approx(layouts["urdf"].foot_radius)
    torch.testing.assert_close(envs["usd"].default_leg, envs["urdf"].default_leg[perm])
    start = {src: env.reset(seed=0) for src, env in envs.items()}
    envs["usd"].q = envs["urdf"].q.clone()
    envs["usd"].q[:, 7:] = envs["urdf"].q[:, 7 + torch.tensor(perm)]
    envs["usd"].qd = torch.zeros_like(envs["urdf"].qd)
    envs["urdf"].qd = torch.zeros_like(envs["urdf"].qd)
    gen = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for _ in range(25):
            a = 0.3 * torch.randn(4, 12, generator=gen)
            envs["urdf"].step(a)
            envs["usd"].step(a[:, perm])
    assert start["usd"].shape == start["urdf"].shape
    q_urdf, q_usd = envs["urdf"].q, envs["usd"].q
    # the URDF's hatch inertia is dropped by Newton's USD importer (base I_xx +1 %): not bit-equal, but close
    torch.testing.assert_close(q_usd[:, :7], q_urdf[:, :7], atol=5e-3, rtol=0.0)
    torch.testing.assert_close(q_usd[:, 7:], q_urdf[:, 7 + torch.tensor(perm)], atol=2e-2, rtol=0.0)


def test_gait_clock_and_foot_height_reference():
    """Gait clock (``gait.period_s``): the observation ends with (sin, cos) of the phase, and the foot-height term is
    sum_f (h_f - ref_f)^2 with ref = swing_height at a diagonal pair's mid-swing and 0 for the pair in stance. A robot
    standing in hard contact (feet at h = 0) at a quarter period therefore has error 2 * swing_height^2."""
    cfg = DiffVelocityEnvCfg(num_envs=2)
    cfg.solver_cfg.contact_model = "hard"
    cfg.gait.period_s, cfg.gait.swing_height = 0.4, 0.08
    cfg.events.reset_base_velocity = 0.0
    cfg.events.reset_joint_scale_range = (1.0, 1.0)
    env = DiffVelocityEnv(cfg)
    assert env.num_obs == 50 and env.observation_space.shape == (2, 50)
    assert env.scan_columns is None  # no height scan: only the flat terms and the clock
    obs = env.reset()
    assert obs.shape == (2, 50)
    torch.testing.assert_close(obs[:, -2:], torch.tensor([[0.0, 1.0]] * 2))
    with torch.no_grad():
        for _ in range(100):  # land and settle (2 s)
            obs, *_ = env.step(torch.zeros(2, 12))
        env.episode_length_buf.zero_()
        for _ in range(5):  # 5 steps of 20 ms: a quarter of the 0.4 s period
            out = env.sim.step(env.q, env.qd, torch.cat([env.q.new_zeros(2, 7), env.default_leg.expand(2, 12)], 1))
            env.q, env.qd = out.joint_q, out.joint_qd
            env.episode_length_buf += 1
        heights = env.foot_heights(out.body_q)
        # hard contact at the velocity level keeps the few mm the feet penetrated on landing (no position correction)
        assert heights.abs().max() < 5e-3, heights
        obs = env._observations(env.q, env.qd, env.last_actions)
        torch.testing.assert_close(obs[:, -2:], torch.tensor([[1.0, 0.0]] * 2), atol=1e-5, rtol=0)
        # the term takes the phase of the state the step reached (rewards follow the clock's advance)
        err = env._gait_foot_height_error(out.body_q)
    # LF, RH at mid-swing (ref 0.08), RF, LH in stance (ref 0)
    expected = ((heights - torch.tensor([0.08, 0.0, 0.0, 0.08])) ** 2).sum(1)
    torch.testing.assert_close(err, expected)
    torch.testing.assert_close(err, torch.full((2,), 2 * 0.08**2), atol=1e-3, rtol=0)  # 0.0128
    with pytest.raises(ValueError):
        bad = DiffVelocityEnvCfg(num_envs=2)
        bad.gait.phase_offsets = (0.0, 0.5)
        DiffVelocityEnv(bad)


def test_trajectory_generator_offsets_and_foot_lift():
    """``gait.joint_swing_scale``: the targets of a leg in mid-swing are its default angles times (1 + scale), those
    of a leg in stance are unchanged; with zero actions (kp 80, scale 1, hard contact) the robot steps in place: each
    foot rises several cm during its swing and the base neither falls nor drifts."""
    cfg = DiffVelocityEnvCfg(num_envs=2, kp=80.0)
    cfg.solver_cfg.contact_model = "hard"
    cfg.gait.period_s, cfg.gait.joint_swing_scale = 0.4, 1.0
    cfg.events.reset_base_velocity = 0.0
    cfg.events.reset_joint_scale_range = (1.0, 1.0)
    cfg.events.push_velocity = 0.0
    cfg.events.base_com_range = {}  # the base's CoM as modelled: a shifted one loads one diagonal pair more
    env = DiffVelocityEnv(cfg)
    env.reset()
    env.episode_length_buf.fill_(5)  # a quarter of the period: LF, RH at mid-swing, RF, LH in stance
    offsets = env.trajectory_generator_offsets()
    legs = env.joint_legs
    swing = (legs == 0) | (legs == 3)
    torch.testing.assert_close(offsets[:, swing], env.default_leg[swing].expand(2, -1), atol=1e-6, rtol=0)
    torch.testing.assert_close(offsets[:, ~swing], torch.zeros(2, int((~swing).sum())), atol=1e-6, rtol=0)
    env.reset()
    lift, start = torch.zeros(2, 4), None
    original = env._rewards

    def record(*args):
        lift.copy_(torch.maximum(lift, env.foot_heights(args[-1])))
        return original(*args)

    env._rewards = record
    with torch.no_grad():
        for step in range(150):  # 3 s
            if step == 50:
                lift.zero_()
                start = env.q[:, :2].clone()
            _, _, terminated, _, _ = env.step(torch.zeros(2, 12))
            assert not terminated.any()
    assert (lift > 0.04).all(), lift
    assert (env.q[:, :2] - start).norm(dim=1).max() < 0.3
    with pytest.raises(ValueError):
        bad = DiffVelocityEnvCfg(num_envs=2)
        bad.gait.joint_swing_scale = 1.0  # needs a gait period
        DiffVelocityEnv(bad)


def test_termination_penalty_applies_to_failures_only():
    """``rewards.termination_penalty`` adds weight * dt to the reward of envs that fail (here: env 0 starts upside
    down) and nothing to the others; the term is logged like the other reward terms."""
    env = make_env()
    env.reset(seed=0)
    flipped = env.q.clone()
    flipped[0, 3:7] = torch.tensor([1.0, 0.0, 0.0, 0.0])  # 180 degrees about x: gravity points up in the base frame
    env.q = flipped
    snap = snapshot(env)
    rewards = {}
    with torch.no_grad():
        for weight in (0.0, -100.0):
            restore(env, snap)
            env.cfg.rewards.termination_penalty = weight
            _, rewards[weight], terminated, _, extras = env.step(torch.zeros(4, 12))
            assert terminated.tolist() == [True, False, False, False]
    expected = torch.tensor([-100.0 * env.step_dt, 0.0, 0.0, 0.0])
    torch.testing.assert_close(rewards[-100.0] - rewards[0.0], expected, atol=1e-5, rtol=0)
    assert "Episode_Reward/termination_penalty" in extras["episode"]


def test_push_keeps_the_gradient_and_the_observation_is_current():
    """A push adds a constant velocity: the pushed state still depends on earlier actions, and the returned
    observation is that of the pushed state (it used to be computed before the push, under no_grad)."""
    env = make_env()
    env.cfg.observations.enable_corruption = False  # compare the observation with the state's, noise-free
    env.cfg.events.push_interval_s = (0.0, 0.0)  # every env is pushed at every step
    env.push_time.zero_()
    env.reset()
    env.push_time.zero_()
    a1 = torch.zeros(4, 12, requires_grad=True)
    obs, _, _, _, _ = env.step(a1)
    assert env.qd.grad_fn is not None, "the push cut the graph of the velocity"
    grad = torch.autograd.grad(env.qd[:, :2].sum(), a1)[0]
    assert torch.count_nonzero(grad) > 0
    assert torch.allclose(obs, env._observations(env.q, env.qd, env.last_actions))


def test_soft_contact_stands_like_hard():
    """The differentiable task in soft contact with its ANYdrive gains, 60 zero-action steps (1.2 s, before any
    push): the feet's normal impulses carry the weight within 10% and the base height is within 5 cm of hard
    contact's."""
    height = {}
    for contact_model in ("hard", "soft"):
        env = make_env(contact_model=contact_model)
        env.reset()
        with torch.no_grad():
            for _ in range(60):
                env.step(torch.zeros(4, 12))
        height[contact_model] = env.q[:, 2].clone()
        if contact_model == "soft":
            solver = env.sim.solver
            normal = solver.last_contact_impulses().numpy().reshape(4, -1, 3)[..., 0].sum(1) / env.cfg.sim_dt
            weight = env.model.body_mass.numpy().reshape(4, -1).sum(1) * 9.81
            np.testing.assert_allclose(normal / weight, 1.0, atol=0.1)
    torch.testing.assert_close(height["soft"], height["hard"], atol=0.05, rtol=0.0)


def test_penalty_contact_task_from_overrides():
    """The registered task in the explicit penalty model, chosen by overrides (AHAC's setting; the task's 5 ms
    physics step in two 2.5 ms penalty substeps): it steps, stands and passes gradients to the actions."""
    from isaaclab_diffsim.tasks.task_cfgs import resolve_task_cfgs

    overrides = ["env.solver_cfg.contact_model=penalty", "env.solver_cfg.penalty_preset=ahac_anymal"]
    cfg, _ = resolve_task_cfgs("DiffSim-Velocity-Flat-AnymalC-Direct", "shac_cfg_entry_point", overrides)
    cfg.num_envs = 2
    env = gym.make("DiffSim-Velocity-Flat-AnymalC-Direct", cfg=cfg).unwrapped
    try:  # the Isaac Lab scene's simulation context is a singleton: release it for the tests after this one
        solver = env.sim.solver
        assert solver.contact_model == "penalty"
        assert (solver.penalty_ke, solver.penalty_kd, solver.penalty_kf) == (2.0e3, 5.0e2, 1.0e2)
        assert solver.substeps(env.cfg.sim_dt) == 2
        env.reset()
        actions = torch.zeros(5, 2, 12, requires_grad=True)
        total = 0.0
        for t in range(5):
            _, reward, _, _, _ = env.step(actions[t])
            total = total + reward.sum()
        total.backward()
        assert torch.isfinite(env.q).all() and actions.grad.abs().sum() > 0
    finally:
        env.close()
