"""The ANYmal C USD asset and Isaac Lab's manager-based flat velocity task (DiffSim-Velocity-Flat-AnymalC) on
the DiffSim backend: the asset matches the URDF model, the task builds and steps in each contact model, foot
forces seen by Isaac Lab's ContactSensor carry the weight, Isaac Lab's friction and mass events change what the
solver simulates, and an rsl_rl PPO policy trained on the task exports to ONNX that matches torch."""

import importlib.metadata
import json
import math

import gymnasium as gym
import newton
import numpy as np
import pytest
import torch
import warp as wp
from helpers.manager_envs import deterministic_start

pytest.importorskip("isaaclab_tasks")

from isaaclab.envs import ManagerBasedRLEnv  # noqa: E402
from isaaclab_tasks.utils.hydra import resolve_presets  # noqa: E402
from pxr import Usd  # noqa: E402

import isaaclab_diffsim.tasks  # noqa: E402, F401  (registers the task ids)
from isaaclab_diffsim.assets import ANYMAL_C_DEFAULT_JOINT_POS, add_anymal_c  # noqa: E402
from isaaclab_diffsim.assets.anymal_c_usd import BODY_NAMES, anymal_c_usd_path  # noqa: E402
from isaaclab_diffsim.tasks.locomotion.velocity.config.anymal_c.flat_env_cfg import (  # noqa: E402
    AnymalCFlatDiffSimEnvCfg,
)

GRAVITY = 9.81


def _foot_sphere_positions(builder: newton.ModelBuilder) -> np.ndarray:
    """World positions (sorted by leg name) of the foot spheres after forward kinematics."""
    model = builder.finalize(device="cpu")
    state = model.state()
    newton.eval_fk(model, model.joint_q, model.joint_qd, state)
    body_q = state.body_q.numpy()
    out = {}
    shape_body, shape_type = model.shape_body.numpy(), model.shape_type.numpy()
    shape_transform = model.shape_transform.numpy()
    for s in range(model.shape_count):
        if shape_type[s] != int(newton.GeoType.SPHERE) or shape_body[s] < 0:
            continue
        body_tf = wp.transform(*body_q[shape_body[s]])
        shape_tf = wp.transform(*shape_transform[s])
        leg = model.body_label[shape_body[s]].rsplit("/", 1)[-1][:2]  # LF_FOOT (USD) or LF_SHANK (URDF, merged)
        assert leg not in out
        out[leg] = np.array(wp.transform_multiply(body_tf, shape_tf).p)
    return np.stack([out[k] for k in sorted(out)])


def _set_default_pose(builder: newton.ModelBuilder) -> None:
    for j, label in enumerate(builder.joint_label):
        name = label.rsplit("/", 1)[-1]
        if name in ANYMAL_C_DEFAULT_JOINT_POS:
            builder.joint_q[builder.joint_q_start[j]] = ANYMAL_C_DEFAULT_JOINT_POS[name]


def test_usd_asset_matches_urdf_model(tmp_path):
    path = anymal_c_usd_path(cache_dir=tmp_path)
    usd = newton.ModelBuilder()
    usd.add_usd(Usd.Stage.Open(str(path)), load_visual_shapes=False)
    urdf = newton.ModelBuilder()
    add_anymal_c(urdf)
    assert sorted(label.rsplit("/", 1)[-1] for label in usd.body_label) == sorted(BODY_NAMES)
    assert sum(usd.body_mass) == pytest.approx(sum(urdf.body_mass), abs=1e-4)  # 52.13 kg as shipped
    assert sum(usd.body_mass) == pytest.approx(52.135, abs=1e-3)
    kinds = [newton.JointType(int(t)) for t in usd.joint_type]
    assert kinds.count(newton.JointType.REVOLUTE) == 12 and kinds.count(newton.JointType.FIXED) == 4
    assert kinds.count(newton.JointType.FREE) == 1  # the converter's world joint was removed
    # the re-anchored joint frames give the same kinematics as Newton's URDF import, at the standing pose
    for b in (usd, urdf):
        _set_default_pose(b)
    feet_usd, feet_urdf = _foot_sphere_positions(usd), _foot_sphere_positions(urdf)
    feet_usd -= feet_usd.mean(0)
    feet_urdf -= feet_urdf.mean(0)
    np.testing.assert_allclose(feet_usd, feet_urdf, atol=1e-4)


def test_usd_cache_is_reused_and_rebuilt_when_corrupt(tmp_path):
    path = anymal_c_usd_path(cache_dir=tmp_path)
    stamp = path.stat().st_mtime_ns
    assert anymal_c_usd_path(cache_dir=tmp_path) == path and path.stat().st_mtime_ns == stamp  # reused
    path.write_text("#usda 1.0\n(\n this is not usd")  # corrupt layer
    assert anymal_c_usd_path(cache_dir=tmp_path) == path
    assert Usd.Stage.Open(str(path)) is not None
    manifest = path.parent / "manifest.json"
    data = json.loads(manifest.read_text())
    data["fingerprint"]["urdf_sha256"] = "0" * 64  # built from another URDF
    manifest.write_text(json.dumps(data))
    anymal_c_usd_path(cache_dir=tmp_path)
    assert json.loads(manifest.read_text())["fingerprint"]["urdf_sha256"] != "0" * 64


def test_task_is_registered_with_rsl_rl_cfg():
    spec = gym.spec("DiffSim-Velocity-Flat-AnymalC")
    assert spec.entry_point == "isaaclab.envs:ManagerBasedRLEnv"
    assert {"env_cfg_entry_point", "rsl_rl_cfg_entry_point"} <= set(spec.kwargs)


def _make_env(physics: str = "diffsim_smoothed", num_envs: int = 4, **events) -> ManagerBasedRLEnv:
    cfg = AnymalCFlatDiffSimEnvCfg()
    cfg.scene.num_envs = num_envs
    cfg.sim.device = "cpu"
    cfg = resolve_presets(cfg, (physics,))  # what ``physics=<name>`` does on Isaac Lab's command line
    deterministic_start(cfg)
    for name, params in events.items():
        getattr(cfg.events, name).params.update(params)
    return ManagerBasedRLEnv(cfg)


def _rollout(env: ManagerBasedRLEnv, steps: int):
    obs, _ = env.reset()
    for _ in range(steps):
        obs, rew, term, trunc, _ = env.step(torch.zeros(env.num_envs, env.action_manager.total_action_dim))
    return obs, rew, term


@pytest.mark.parametrize("physics", ["diffsim_smoothed", "diffsim_hard", "diffsim_soft"])
def test_task_steps_in_each_contact_model(physics):
    env = _make_env(physics)
    try:
        assert env.sim.physics_manager.__name__ == "NewtonDiffSimManager"
        obs, rew, term = _rollout(env, 10)
        assert obs["policy"].shape == (4, 48) and torch.isfinite(obs["policy"]).all()
        assert rew.shape == (4,) and torch.isfinite(rew).all()
    finally:
        env.close()


def _feet_normal_force_and_weight(env: ManagerBasedRLEnv):
    sensor, robot = env.scene["contact_forces"], env.scene["robot"]
    feet = [i for i, name in enumerate(sensor.body_names) if name.endswith("FOOT")]
    fz = sensor.data.net_forces_w.torch[:, feet, 2].sum(1)
    return fz, robot.data.body_mass.torch.sum(1) * GRAVITY


@pytest.mark.parametrize("physics", ["diffsim_smoothed", "diffsim_hard"])
def test_standing_feet_carry_the_weight_and_mass_event_reaches_solver(physics):
    """Standing with zero actions for 2 s: the feet's normal forces (ContactSensor) sum to the weight within 2%.
    Isaac Lab's ``add_base_mass`` event set to +5 kg raises them by 49.05 N (the solver simulates the new mass).
    (Under the DC motors at kp 40 the robot slowly crouches; +20 kg makes it sink below the 0.3 m termination.)"""
    env = _make_env(physics)
    try:
        _rollout(env, 100)
        fz, weight = _feet_normal_force_and_weight(env)
        torch.testing.assert_close(fz, weight, rtol=0.02, atol=0.0)
        torch.testing.assert_close(weight, torch.full_like(weight, 52.135 * GRAVITY), rtol=1e-4, atol=0.0)
    finally:
        env.close()
    heavy = _make_env(
        physics, add_base_mass={"mass_distribution_params": (5.0, 5.0), "operation": "add", "distribution": "uniform"}
    )
    try:
        _rollout(heavy, 100)
        fz_heavy, weight_heavy = _feet_normal_force_and_weight(heavy)
        torch.testing.assert_close(weight_heavy, weight + 5.0 * GRAVITY, rtol=1e-4, atol=0.0)
        torch.testing.assert_close(fz_heavy, weight_heavy, rtol=0.02, atol=0.0)
    finally:
        heavy.close()


def test_soft_preset_stands_like_hard():
    """``physics=diffsim_soft`` with Isaac Lab's ANYdrive gains (kp 40, kd 5), 60 zero-action steps: the feet carry
    the weight within 10% and the base height is within 5 cm of hard contact's."""
    height, load = {}, {}
    for physics in ("diffsim_hard", "diffsim_soft"):
        env = _make_env(physics)
        try:
            _rollout(env, 60)
            fz, weight = _feet_normal_force_and_weight(env)
            load[physics] = (fz / weight).cpu().numpy()
            height[physics] = env.scene["robot"].data.root_pos_w.torch[:, 2].cpu().numpy()
        finally:
            env.close()
    np.testing.assert_allclose(load["diffsim_soft"], 1.0, atol=0.1)
    np.testing.assert_allclose(height["diffsim_soft"], height["diffsim_hard"], atol=0.05)


def test_friction_event_changes_sliding():
    """Reset at 1.5 m/s forward with zero actions: with low foot friction (Isaac Lab's material event writes it into
    the model's shape friction, which the solver averages with the ground's 1.0) the feet brake less, so after
    0.2 s the base is faster. Later the low-friction legs splay and the robot falls (a reset), hence the short run."""
    from isaaclab_newton.physics import NewtonManager

    slide = {"velocity_range": {"x": (1.5, 1.5)}}
    speed = {}
    for mu in (0.8, 0.05):
        env = _make_env(
            "diffsim_smoothed",
            num_envs=2,
            reset_base=slide,
            physics_material={"static_friction_range": (mu, mu), "dynamic_friction_range": (mu, mu)},
        )
        try:
            env.reset()
            model = NewtonManager.backend.model
            feet = [s for s in range(model.shape_count) if model.shape_label[s].endswith("_FOOT/sphere")]
            np.testing.assert_allclose(model.shape_material_mu.numpy()[feet], mu, rtol=1e-6)
            for _ in range(10):
                _, _, term, _, _ = env.step(torch.zeros(env.num_envs, env.action_manager.total_action_dim))
                assert not term.any()
            speed[mu] = env.scene["robot"].data.root_lin_vel_w.torch[:, 0].mean().item()
        finally:
            env.close()
    assert speed[0.05] > speed[0.8] + 0.05, speed


def test_com_and_push_events_reach_solver():
    """Isaac Lab's ``randomize_rigid_body_com`` (the task's ``base_com`` term, here with a fixed +10 cm in x) writes
    the base's centre of mass into the model the solver reads, and the standing motion changes (the base settles
    lower); ``push_by_setting_velocity`` (called as its interval mode would) sets a base velocity that the solver
    then integrates."""
    from isaaclab.envs.mdp.events import randomize_rigid_body_com
    from isaaclab.managers import EventTermCfg, SceneEntityCfg
    from isaaclab_newton.physics import NewtonManager
    from isaaclab_tasks.core.velocity.mdp import push_by_setting_velocity

    base_pos = {}
    for dx in (0.0, 0.1):
        env = _make_env("diffsim_smoothed", num_envs=2)
        try:
            _rollout(env, 1)
            model = NewtonManager.backend.model
            base = env.scene["robot"].body_names.index("base")
            com_before = model.body_com.numpy().reshape(env.num_envs, -1, 3)[:, base].copy()
            term_cfg = EventTermCfg(
                func=randomize_rigid_body_com,
                mode="startup",
                params={
                    "asset_cfg": SceneEntityCfg("robot", body_names="base"),
                    "com_range": {"x": (dx, dx), "y": (0.0, 0.0), "z": (0.0, 0.0)},
                },
            )
            term_cfg.params["asset_cfg"].resolve(env.scene)
            randomize_rigid_body_com(term_cfg, env)(env, None, **term_cfg.params)
            com_after = model.body_com.numpy().reshape(env.num_envs, -1, 3)[:, base]
            np.testing.assert_allclose(com_after - com_before, [[dx, 0.0, 0.0]] * env.num_envs, atol=1e-6)
            for _ in range(50):
                env.step(torch.zeros(env.num_envs, env.action_manager.total_action_dim))
            robot = env.scene["robot"]
            base_pos[dx] = robot.data.root_pos_w.torch.clone()
            vx_before = robot.data.root_lin_vel_w.torch[:, 0].clone()
            push_by_setting_velocity(env, torch.arange(env.num_envs), {"x": (1.0, 1.0)}, SceneEntityCfg("robot"))
            env.step(torch.zeros(env.num_envs, env.action_manager.total_action_dim))
            vx_after = robot.data.root_lin_vel_w.torch[:, 0]
            assert (vx_after - vx_before > 0.5).all(), (vx_before, vx_after)
        finally:
            env.close()
    assert (base_pos[0.1] - base_pos[0.0]).norm(dim=1).min() > 0.005, base_pos


def test_joint_parameter_event_reaches_solver():
    """Isaac Lab's ``randomize_joint_parameters`` writes joint friction (and, with it, viscous friction = passive
    damping) into the model the solver reads. Standing with zero actions the robot slowly crouches under its
    position drives; with 1000 N m of joint friction on every leg joint (far above the 80 N m drives) the joints
    hold to the friction creep rate (v_s atanh(load / friction), under 1e-4 rad/s)."""
    from isaaclab.envs.mdp.events import randomize_joint_parameters
    from isaaclab.managers import EventTermCfg, SceneEntityCfg
    from isaaclab_newton.physics import NewtonManager

    moved = {}
    for friction in (0.0, 1000.0):
        env = _make_env("diffsim_smoothed", num_envs=2)
        try:
            _rollout(env, 1)
            term_cfg = EventTermCfg(
                func=randomize_joint_parameters,
                mode="startup",
                params={
                    "asset_cfg": SceneEntityCfg("robot", joint_names=".*"),
                    "friction_distribution_params": (friction, friction),
                    "operation": "abs",
                    "distribution": "uniform",
                },
            )
            term_cfg.params["asset_cfg"].resolve(env.scene)
            randomize_joint_parameters(term_cfg, env)(env, None, **term_cfg.params)
            model = NewtonManager.backend.model
            legs = model.joint_target_mode.numpy() != 0
            np.testing.assert_allclose(model.joint_friction.numpy()[legs], friction)
            np.testing.assert_allclose(model.joint_damping.numpy()[legs], friction)
            robot = env.scene["robot"]
            q0 = robot.data.joint_pos.torch.clone()
            for _ in range(50):
                env.step(torch.zeros(env.num_envs, env.action_manager.total_action_dim))
            moved[friction] = (robot.data.joint_pos.torch - q0).abs().max().item()
        finally:
            env.close()
    assert moved[0.0] > 1e-3 and moved[1000.0] < 1e-4, moved


def test_base_contact_termination_with_base_collider():
    """Isaac Lab's ``base_contact`` (illegal contact) termination reads the ContactSensor: with the base box added
    to the DiffSim colliders (``env.sim.physics.solver_cfg.collider_shapes_expr``), a robot dropped upside down
    ends its episode by base contact; with the default foot-only colliders the base cannot touch the ground."""
    fired = {}
    for expr in (".*_FOOT/sphere|.*/base/box", None):
        cfg = AnymalCFlatDiffSimEnvCfg()
        cfg.scene.num_envs, cfg.sim.device, cfg.seed = 2, "cpu", 0
        cfg = resolve_presets(cfg, ("diffsim_hard",))
        if expr is not None:
            cfg.sim.physics.solver_cfg.collider_shapes_expr = expr
        cfg.events.push_robot = None
        cfg.events.reset_base.params["pose_range"] = {"roll": (math.pi, math.pi)}
        cfg.events.reset_base.params["velocity_range"] = {}
        cfg.terminations.base_too_low = None
        env = ManagerBasedRLEnv(cfg)
        try:
            env.reset()
            fired[expr] = False
            for _ in range(40):
                env.step(torch.zeros(env.num_envs, env.action_manager.total_action_dim))
                if env.termination_manager.get_term("base_contact").any():
                    fired[expr] = True
                    break
        finally:
            env.close()
    assert fired == {".*_FOOT/sphere|.*/base/box": True, None: False}, fired


def test_rsl_rl_ppo_trains_and_exports_onnx(tmp_path):
    """Isaac Lab's path: gym.make, RslRlVecEnvWrapper, rsl_rl OnPolicyRunner for 1 iteration on CPU, then the
    runner's ONNX/TorchScript export (what ``isaaclab play`` does); onnxruntime matches the torch policy."""
    ort = pytest.importorskip("onnxruntime")
    from isaaclab.utils import to_dict
    from isaaclab_rl.rsl_rl import RslRlVecEnvWrapper, handle_deprecated_rsl_rl_cfg
    from rsl_rl.runners import OnPolicyRunner

    from isaaclab_diffsim.tasks.task_cfgs import load_task_cfgs

    env_cfg, agent_cfg = load_task_cfgs("DiffSim-Velocity-Flat-AnymalC", "rsl_rl_cfg_entry_point")
    env_cfg = resolve_presets(env_cfg)  # no ``physics=``: the default preset (smoothed contact)
    assert env_cfg.sim.physics.solver_cfg.contact_model == "smoothed"
    env_cfg.scene.num_envs = 4
    env_cfg.sim.device = "cpu"
    agent_cfg.device = env_cfg.sim.device
    agent_cfg.num_steps_per_env = 4
    agent_cfg = handle_deprecated_rsl_rl_cfg(agent_cfg, importlib.metadata.version("rsl-rl-lib"))
    env = RslRlVecEnvWrapper(gym.make("DiffSim-Velocity-Flat-AnymalC", cfg=env_cfg))
    try:
        runner = OnPolicyRunner(env, to_dict(agent_cfg), log_dir=str(tmp_path), device="cpu")
        runner.logger.git_status_repos = []
        runner.learn(num_learning_iterations=1)
        runner.export_policy_to_onnx(path=str(tmp_path / "exported"), filename="policy.onnx")
        runner.export_policy_to_jit(path=str(tmp_path / "exported"), filename="policy.pt")
        policy = runner.get_inference_policy(device="cpu")
        obs = env.get_observations()
        with torch.inference_mode():
            expected = policy(obs).numpy()
        sess = ort.InferenceSession(str(tmp_path / "exported" / "policy.onnx"), providers=["CPUExecutionProvider"])
        feeds = {}
        for inp in sess.get_inputs():
            feeds[inp.name] = obs["policy"].numpy().astype(np.float32)
        got = np.concatenate([sess.run(None, {k: v[i : i + 1] for k, v in feeds.items()})[0] for i in range(4)])
        np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5)
        jit = torch.jit.load(str(tmp_path / "exported" / "policy.pt"))
        with torch.inference_mode():
            np.testing.assert_allclose(jit(obs["policy"]).numpy(), expected, rtol=1e-4, atol=1e-5)
    finally:
        env.close()
