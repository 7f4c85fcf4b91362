"""The differentiable task's startup randomisation on ``asset_source="isaaclab"`` runs Isaac Lab's own event functions
(``randomize_rigid_body_material``, ``randomize_rigid_body_mass`` with ``recompute_inertia``,
``randomize_rigid_body_com``) on the scene's Articulation, and their effects reach the solver the env steps:

- mass, by statics: a robot standing in hard contact presses on the ground with (52.13 kg + added mass) g;
- inertia: scaled by the mass ratio, as for a uniform-density body;
- friction, by sliding: a robot thrown over the ground slides with |f_t| = mu f_n and decelerates at mu g (the
  solver's mu is the mean of the foot's and the ground's);
- CoM, by the moment balance: standing still, the centre of pressure lies under the whole-body centre of mass,
  which the base's CoM offset moves by m_base / M times the offset.

Isaac Lab's simulation context is a singleton: each test builds one scene and closes it.
"""

import pytest
import torch
import warp as wp

from isaaclab_diffsim.envs.rotations import quat_rotate
from isaaclab_diffsim.tasks.direct.locomotion.velocity import DiffVelocityEnv, DiffVelocityEnvCfg

G = 9.81
ANYMAL_C_MASS = 52.13
N = 2


def make_env(source, friction=0.8, mass_add=0.0, com_x=0.0, **fields):
    cfg = DiffVelocityEnvCfg(num_envs=N, asset_source=source, **fields)
    cfg.solver_cfg.contact_model = "hard"
    cfg.events.foot_friction_range = (friction, friction)
    cfg.events.base_mass_add_range = (mass_add, mass_add)
    cfg.events.base_com_range = {"x": (com_x, com_x), "y": (0.0, 0.0), "z": (0.0, 0.0)}
    cfg.events.reset_base_velocity = 0.0
    cfg.events.reset_joint_scale_range = (1.0, 1.0)
    cfg.events.push_velocity = 0.0
    cfg.commands.lin_vel_x = cfg.commands.lin_vel_y = cfg.commands.ang_vel_z = (0.0, 0.0)
    return DiffVelocityEnv(cfg)


def settle(env, steps=100):
    env.reset()
    with torch.no_grad():
        for _ in range(steps):
            env.step(torch.zeros(N, 12))


def world_mass_and_com(env):
    """Total mass per world and the whole-body centre of mass (N, 3) from the model and the current body poses."""
    m = wp.to_torch(env.model.body_mass).view(N, -1)
    com_b = wp.to_torch(env.model.body_com).view(N, -1, 3)
    pose = env.body_q.view(N, -1, 7)
    com_w = pose[..., :3] + quat_rotate(pose[..., 3:7].reshape(-1, 4), com_b.reshape(-1, 3)).view(N, -1, 3)
    total = m.sum(1)
    return total, (m[..., None] * com_w).sum(1) / total[:, None]


def contact_forces(env):
    """(N, 4, 3) contact force [N] (normal, t1, t2) of each foot (legs in ``layout.foot_names`` order) over the last
    substep; the solver lists a world's contact candidates in shape order."""
    shapes = torch.as_tensor(env.layout.foot_shapes[0])
    rank = torch.argsort(torch.argsort(shapes))
    return env.sim.last_contact_impulses().view(N, 4, 3)[:, rank] / env.cfg.sim_dt


def normal_forces(env):
    return contact_forces(env)[..., 0]


def test_mass_and_friction_events_reach_the_solver():
    ref = make_env("usd")  # the same USD through our builder: the base's mass and inertia before the events
    base = torch.as_tensor(ref.layout.base_body).long()
    m0 = wp.to_torch(ref.model.body_mass)[base].clone()
    i0 = wp.to_torch(ref.model.body_inertia)[base].clone()
    env = make_env("isaaclab", friction=0.3, mass_add=6.0, kp=1000.0, kd=20.0)  # stiff legs: slides like a table
    try:
        base = torch.as_tensor(env.layout.base_body).long()
        m = wp.to_torch(env.model.body_mass)[base]
        torch.testing.assert_close(m, m0 + 6.0)
        torch.testing.assert_close(wp.to_torch(env.model.body_inertia)[base], i0 * ((m0 + 6.0) / m0)[:, None, None])
        feet = torch.as_tensor(env.layout.foot_shapes).reshape(-1).long()
        assert torch.all(wp.to_torch(env.model.shape_material_mu)[feet] == 0.3)

        # statics: the feet carry the robot's weight, with the added mass
        settle(env)
        total, _ = world_mass_and_com(env)
        torch.testing.assert_close(total, torch.full((N,), ANYMAL_C_MASS + 6.0), atol=0.05, rtol=0)
        print(f"statics: normal force {normal_forces(env).sum(1).tolist()} N, M g {(total * G).tolist()} N")
        torch.testing.assert_close(normal_forces(env).sum(1), total * G, rtol=0.01, atol=0)

        # sliding: thrown forward at 3 m/s (joints at rest), the feet slide with |f_t| = mu f_n, where the solver's mu
        # is the mean of the foot's (0.3, from the event) and the ground's (1.0); the robot pitches and bounces, but
        # over 0.2 s the centre of mass loses mu g T of its speed (momentum balance: the mean normal force is the
        # weight), to within 10 %
        mu_ground = float(wp.to_torch(env.model.shape_material_mu)[-1])
        mu = 0.5 * (0.3 + mu_ground)
        qd = env.qd.clone()
        qd[:, 0:6] = 0.0
        forward = quat_rotate(env.q[:, 3:7], torch.tensor([[1.0, 0.0, 0.0]]).expand(N, 3))[:, :2]
        direction = forward / forward.norm(dim=1, keepdim=True)
        qd[:, 0:2] = 3.0 * direction  # along the robot's heading
        coms, forces, dt, steps = [], [], env.cfg.sim_dt, 41
        targets = torch.cat([env.q.new_zeros(N, 7), env.default_leg.expand(N, 12)], 1)
        q = env.q
        with torch.no_grad():
            for _ in range(steps):
                out = env.sim.step(q, qd, targets, substeps=1)
                q, qd = out.joint_q, out.joint_qd
                env.body_q = out.body_q
                coms.append(world_mass_and_com(env)[1])
                forces.append(contact_forces(env))
        f = torch.stack(forces)  # (steps, N, 4, 3)
        ft, fn = f[..., 1:].norm(dim=-1), f[..., 0]
        assert torch.all(ft <= mu * fn * (1 + 1e-4) + 1e-3)  # inside the friction cone
        touching = fn > 1.0
        edge = ((ft - mu * fn).abs() <= 1e-3 * fn + 1e-3) & touching
        assert edge.sum() >= 0.8 * touching.sum(), (edge.sum(), touching.sum())  # sliding: on its edge
        x = torch.stack(coms)[:, :, :2]
        v = ((x[1:] - x[:-1]) / dt * direction).sum(-1)  # (steps - 1, N) speed along the throw
        assert torch.all(v[-1] > 1.5)  # still sliding at the end
        decel = (v[0] - v[-1]) / ((steps - 2) * dt)
        print(
            f"sliding: deceleration {decel.tolist()} m/s^2, mu g {mu * G:.3f}, sliding share "
            f"{float(edge.sum() / touching.sum()):.2f}"
        )
        torch.testing.assert_close(decel, torch.full((N,), mu * G), rtol=0.1, atol=0)
        weight_share = fn[1:].sum(-1).mean(0) / (total * G)  # mean normal force over the weight
        torch.testing.assert_close(weight_share, torch.ones(N), rtol=0.1, atol=0)
    finally:
        env.close()


def test_com_event_reaches_the_solver():
    """Standing still, the centre of pressure of the foot forces equals the whole-body CoM (moment balance); the
    base's +5 cm CoM offset moves that CoM by about 25 mm, ten times the tolerance."""
    env = make_env("isaaclab", com_x=0.05)
    try:
        settle(env)
        total, com = world_mass_and_com(env)
        f = normal_forces(env)
        pose = env.body_q[env.foot_bodies.reshape(-1)]
        feet = (pose[:, :3] + quat_rotate(pose[:, 3:7], env.foot_centers)).view(N, 4, 3)
        cop = (f[..., None] * feet).sum(1) / f.sum(1)[:, None]
        print(f"moment balance: |CoP - CoM| {(cop - com)[:, :2].norm(dim=1).tolist()} m")
        torch.testing.assert_close(cop[:, :2], com[:, :2], atol=2.5e-3, rtol=0)
        # the same robot without the offset: its CoM lies m_base * R_base (0.05, 0, 0) / M away
        base = torch.as_tensor(env.layout.base_body).long()
        m_base = wp.to_torch(env.model.body_mass)[base]
        shift = quat_rotate(env.body_q[base, 3:7], torch.tensor([[0.05, 0.0, 0.0]]).expand(N, 3))
        moved = (m_base / total)[:, None] * shift
        assert torch.all(moved[:, :2].norm(dim=1) > 0.02)
        assert torch.all((cop[:, :2] - (com - moved)[:, :2]).norm(dim=1) > 0.02)
    finally:
        env.close()


@pytest.mark.parametrize(
    "field, value, message",
    [
        ("base_com_range", {"w": (0.0, 0.0)}, "takes the keys x, y, z"),
        ("base_com_range", {"x": (0.1, -0.1)}, r"base_com_range.x must be \(low, high\)"),
    ],
)
def test_bad_event_ranges_are_refused(field, value, message):
    cfg = DiffVelocityEnvCfg(num_envs=1)
    setattr(cfg.events, field, value)
    with pytest.raises(ValueError, match=message):
        cfg.validate_values()


def test_builder_models_apply_the_same_startup_randomisation():
    """Without an Isaac Lab Articulation (``asset_source="urdf"``) the env applies the same three randomisations
    itself: foot friction, base mass plus inertia scaled by the mass ratio, base CoM offset."""
    ref, env = make_env("urdf"), make_env("urdf", friction=0.4, mass_add=4.0, com_x=0.03)
    base = torch.as_tensor(env.layout.base_body).long()
    m0, m = (wp.to_torch(e.model.body_mass)[base] for e in (ref, env))
    i0, i = (wp.to_torch(e.model.body_inertia)[base] for e in (ref, env))
    c0, c = (wp.to_torch(e.model.body_com)[base] for e in (ref, env))
    torch.testing.assert_close(m, m0 + 4.0)
    torch.testing.assert_close(i, i0 * (m / m0)[:, None, None])
    torch.testing.assert_close(wp.to_torch(env.model.body_inv_mass)[base], 1.0 / m)
    torch.testing.assert_close(wp.to_torch(env.model.body_inv_inertia)[base], torch.linalg.inv(i))
    torch.testing.assert_close(c - c0, torch.tensor([[0.03, 0.0, 0.0]]).expand(N, 3))
    feet = torch.as_tensor(env.layout.foot_shapes).reshape(-1).long()
    assert torch.all(wp.to_torch(env.model.shape_material_mu)[feet] == 0.4)


def test_reset_events_write_the_state_the_solver_steps():
    """Resets on ``asset_source="isaaclab"`` run Isaac Lab's ``reset_root_state_uniform`` and
    ``reset_joints_by_scale`` on the Articulation; the env steps the state they wrote: legs at the scaled default
    pose, base above the env origin with a yaw-only orientation and velocities within the range, other envs
    untouched by a partial reset, the same state for the same seed."""
    cfg = DiffVelocityEnvCfg(num_envs=4, asset_source="isaaclab")
    cfg.events.reset_joint_scale_range = (0.7, 0.7)
    cfg.events.reset_base_velocity = 0.3
    env = DiffVelocityEnv(cfg)
    try:
        env.reset(seed=5)
        q0, qd0 = env.q.clone(), env.qd.clone()
        torch.testing.assert_close(env.q[:, 7:], 0.7 * env.default_leg.expand(4, 12))
        torch.testing.assert_close(env.q[:, 0:3], torch.tensor([[0.0, 0.0, 0.6]]).expand(4, 3), atol=1e-6, rtol=0)
        assert env.q[:, 3:5].abs().max() < 1e-6 and torch.all(env.q[:, 5:7].abs().sum(1) > 0)  # yaw only
        assert torch.all(env.qd[:, :6].abs() <= 0.3 + 1e-6) and env.qd[:, :6].abs().max() > 0.1
        assert torch.all(env.qd[:, 6:] == 0.0)
        with torch.no_grad():
            env.step(torch.zeros(4, 12))
        assert torch.all(env.q[:, 2] < 0.6)  # the solver stepped that state (the robots drop onto their feet)
        moved = env.q.clone()
        env._reset_idx(torch.tensor([False, True, False, True]))
        assert torch.equal(env.q[0], moved[0]) and torch.equal(env.q[2], moved[2])
        torch.testing.assert_close(env.q[[1, 3], 7:], 0.7 * env.default_leg.expand(2, 12))
        env.reset(seed=5)
        assert torch.equal(env.q, q0) and torch.equal(env.qd, qd0)
    finally:
        env.close()


def test_push_event_reaches_the_solver():
    """Pushes on ``asset_source="isaaclab"`` run Isaac Lab's ``push_by_setting_velocity`` on the Articulation: a pushed
    robot's base velocity jumps by a change within +-push_velocity in x and y only, an unpushed robot's does not, the
    solver steps the pushed state (the base moves the way it was pushed), and the gradient flows through the push."""
    cfg = DiffVelocityEnvCfg(num_envs=N, asset_source="isaaclab")
    cfg.solver_cfg.contact_model = "hard"
    cfg.events.reset_base_velocity = 0.0
    cfg.events.reset_joint_scale_range = (1.0, 1.0)
    cfg.events.push_velocity = 1.0
    cfg.commands.lin_vel_x = cfg.commands.lin_vel_y = cfg.commands.ang_vel_z = (0.0, 0.0)
    env = DiffVelocityEnv(cfg)
    try:
        settle(env, 60)
        env.push_time[:] = torch.tensor([0.0, 100.0])  # env 0 is pushed at the next step, env 1 is not
        qd_before = env.qd.clone()
        kick = env._resample_and_sample_pushes(torch.zeros(N, dtype=torch.bool))
        assert kick is not None and torch.all(kick[1] == 0.0) and torch.all(kick[0, 2:] == 0.0)
        assert torch.all(kick[0, :2].abs() <= 1.0) and kick[0, :2].abs().max() > 0.05
        assert env.push_time[0] >= cfg.events.push_interval_s[0]  # the next push is scheduled
        qd = qd_before.clone().requires_grad_(True)
        env.qd = qd + kick
        x0 = env.q[:, 0:2].clone()
        env.step(torch.zeros(N, 12))
        moved = env.q[:, 0:2] - x0
        # the base moves the way it was pushed: displacement over one control step along the kick, within friction loss
        assert torch.dot(moved[0], kick[0, :2]) > 0.5 * env.step_dt * kick[0, :2].norm() ** 2
        assert moved[1].norm() < 0.1 * moved[0].norm()
        env.q[0, 0].backward()
        assert qd.grad is not None and qd.grad[0, 0] > 0.0  # d x / d vx through the pushed state
    finally:
        env.close()


def test_push_is_the_sampled_change_whatever_isaaclab_state_holds():
    """The kick of a push is the sampled velocity change itself, not a difference of velocities read from Isaac
    Lab's physics state: that state is not the env's (the env steps its own q, qd; a snapshot or checkpoint restores
    only those), so a difference taken there would round differently after every restore and replays and resumed
    runs would leave each other in the last bits. Two pushes drawn from the same seed over different stale
    velocities in Isaac Lab's state are bitwise equal, zero in every dof but the base's x and y velocity."""
    from isaaclab_newton.physics import NewtonManager

    cfg = DiffVelocityEnvCfg(num_envs=N, asset_source="isaaclab")
    cfg.events.push_velocity = 1.0
    env = DiffVelocityEnv(cfg)
    try:
        env.events._draw_seed = lambda: 1234
        joint_qd = wp.to_torch(NewtonManager.get_state_0().joint_qd, requires_grad=False)
        pushed = torch.tensor([True, False])
        kicks = []
        # stale velocities of either sign with bits below float32's spacing where velocity + push crosses a power
        # of two: a difference (v + dv) - v read there is dv rounded at that coarser spacing
        for v in (0.3001234, 0.7654321, 1.3579135):
            for sign in (1.0, -1.0):
                joint_qd.fill_(sign * v)
                kicks.append(env.events.apply_push(pushed, 1.0))
        assert all(torch.equal(kicks[0], k) for k in kicks[1:])
        assert torch.all(kicks[0][1] == 0.0) and torch.all(kicks[0][0, 2:] == 0.0)
        assert 0.0 < kicks[0][0, :2].abs().max() <= 1.0
    finally:
        env.close()


def test_replay_from_a_restored_state_is_bitwise_with_pushes():
    """An env put back to a state it held (``set_state`` and the RNG states, as a SHAC snapshot or checkpoint does)
    steps bit for bit as it did from there, pushes included, whatever Isaac Lab's physics state was left holding."""
    from isaaclab_diffsim.rl.shac.state import detached, rng_states, set_rng_states

    cfg = DiffVelocityEnvCfg(num_envs=N, asset_source="isaaclab")
    cfg.events.push_velocity = 1.0
    cfg.events.push_interval_s = (0.02, 0.06)  # a push every 1-3 control steps
    env = DiffVelocityEnv(cfg)
    try:
        settle(env, 20)
        state, rng = detached(env.get_state()), rng_states()
        runs = []
        for _ in range(2):  # the second replay starts with Isaac Lab's state where the first left it
            env.set_state(detached(state))
            set_rng_states(rng)
            with torch.no_grad():
                runs.append([env.step(torch.full((N, 12), 0.1))[0].clone() for _ in range(8)])
        assert all(torch.equal(a, b) for a, b in zip(*runs))
    finally:
        env.close()
