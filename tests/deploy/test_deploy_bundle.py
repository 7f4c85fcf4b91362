"""The deployment bundle: ONNX and TorchScript controllers equal the torch pipeline (normaliser, actor, action
scale, default pose, gait generator); the onnxruntime loop reproduces the torch evaluation; mismatched bundles are
refused naming the mismatch; ``gym.make(task_id)`` builds the registered config."""

import gymnasium as gym
import numpy as np
import onnxruntime as ort
import pytest
import torch
import yaml

from isaaclab_diffsim.deploy import BundleMismatchError, OnnxBundlePolicy, export_bundle
from isaaclab_diffsim.rl.evaluation import evaluate
from isaaclab_diffsim.rl.shac import ShacRunner
from isaaclab_diffsim.tasks.direct.locomotion.velocity import DiffVelocityEnv
from isaaclab_diffsim.tasks.direct.locomotion.velocity.config.anymal_c.agents.shac_cfg import (
    AnymalCFlatTrotShacRunnerCfg,
)
from isaaclab_diffsim.tasks.direct.locomotion.velocity.config.anymal_c.flat_env_cfg import (
    AnymalCFlatDiffEnvCfg,
    AnymalCFlatDiffEnvCfg_PLAY,
    AnymalCFlatTrotDiffEnvCfg,
    AnymalCFlatTrotDiffEnvCfg_PLAY,
)


def make_env(num_envs=4, contact_model=None, **fields):
    cfg = AnymalCFlatTrotDiffEnvCfg(num_envs=num_envs, asset_source="urdf", episode_length_s=0.4)
    cfg.observations.enable_corruption = False  # as in -Play: the deployed loop's observations are noise-free
    if contact_model is not None:
        cfg.solver_cfg.contact_model = contact_model
    for k, v in fields.items():
        setattr(cfg, k, v)
    return DiffVelocityEnv(cfg)


def random_policy(env, seed=0):
    """A SHAC inference policy with random weights and a non-trivial normaliser (mean and std not 0 and 1)."""
    torch.manual_seed(seed)
    agent = AnymalCFlatTrotShacRunnerCfg()
    agent.policy.actor_hidden_dims = [32, 32]
    agent.policy.critic_hidden_dims = [16]
    runner = ShacRunner(env, agent, log_dir=None, device="cpu")
    runner.alg.obs_normalizer.update(torch.randn(256, env.num_obs, dtype=torch.float64) * 3.0 + 1.0)
    return runner.get_inference_policy("cpu")


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    torch.set_num_threads(1)
    env = make_env()
    pol = random_policy(env)
    out = tmp_path_factory.mktemp("bundle")
    export_bundle(env, pol, str(out), env.cfg.to_dict(), "shac")
    return env, pol, out


def torch_pipeline(env, pol, obs_phys, steps):
    """Reference: the env's own gait clock and trajectory generator around the torch policy."""
    env.episode_length_buf = steps.clone()
    with torch.no_grad():
        angle = 2.0 * np.pi * env._gait_phase()
        obs = torch.cat([obs_phys, torch.sin(angle)[:, None], torch.cos(angle)[:, None]], 1)
        a = pol(obs)
        targets = env.default_leg + env.cfg.action_scale * a + env.trajectory_generator_offsets()
    return targets, a


def test_onnx_and_torchscript_equal_the_torch_pipeline(bundle):
    env, pol, out = bundle
    g = torch.Generator().manual_seed(1)
    sess = ort.InferenceSession(str(out / "policy.onnx"), providers=["CPUExecutionProvider"])
    jit = torch.jit.load(str(out / "policy.pt"))
    for _trial in range(3):
        obs = torch.randn(env.num_envs, 48, generator=g)
        steps = torch.randint(0, 400, (env.num_envs,), generator=g)
        ref_t, ref_a = torch_pipeline(env, pol, obs, steps)
        assert ref_t.abs().max() > 0.1 and (ref_t - env.default_leg).abs().max() > 0.05
        step_in = steps.float()[:, None]
        t_onnx, a_onnx = sess.run(["joint_pos_target", "actions"], {"obs": obs.numpy(), "step": step_in.numpy()})
        t_jit, a_jit = jit(obs, step_in)
        np.testing.assert_allclose(t_onnx, ref_t.numpy(), atol=2e-6)
        np.testing.assert_allclose(a_onnx, ref_a.numpy(), atol=2e-6)
        torch.testing.assert_close(t_jit, ref_t, atol=1e-6, rtol=0)
        torch.testing.assert_close(a_jit, ref_a, atol=1e-6, rtol=0)
    # the swing phase of the trajectory generator is in the bundle: at a step where the LF leg swings, the
    # targets differ from default + scale * actions
    lf = [i for i, n in enumerate(env.layout.joint_names) if n.startswith("LF")]
    steps = torch.full((env.num_envs,), 7)  # phase 7 * 0.02 / 0.6 = 0.233: LF (offset 0) in swing
    t_jit, a_jit = jit(torch.zeros(env.num_envs, 48), steps.float()[:, None])
    tg = t_jit - env.default_leg - env.cfg.action_scale * a_jit
    expected = np.sin(2 * np.pi * 7 * 0.02 / 0.6) * env.default_leg[lf]
    torch.testing.assert_close(tg[:, lf], expected.expand(env.num_envs, -1).float(), atol=1e-5, rtol=0)


def test_io_yaml_declares_the_interface(bundle):
    env, _, out = bundle
    io = yaml.safe_load((out / "io.yaml").read_text())
    robot = io["articulations"]["robot"]
    assert robot["joint_names"] == list(env.layout.joint_names)
    assert robot["default_joint_stiffness"] == [80.0] * 12 and robot["default_joint_damping"] == [5.0] * 12
    assert robot["effort_limit"] == pytest.approx([80.0] * 12)
    assert np.allclose(robot["default_joint_pos"], env.default_leg.numpy())
    assert io["scene"] == {"physics_dt": 0.005, "dt": 0.02, "decimation": 4}
    assert io["gait"]["period_s"] == 0.6 and io["gait"]["joint_swing_scale"] == 1.0
    assert io["training"]["contact_model"] == "smoothed" and io["training"]["kappa"] == 200.0
    terms = io["observations"]["policy"]
    assert [t["name"] for t in terms][:3] == ["base_lin_vel", "base_ang_vel", "projected_gravity"]
    assert sum(t["shape"][0] for t in terms) == 48 == io["controller"]["inputs"][0]["shape"][1]
    assert [t["name"] for t in io["observations"]["computed_inside"]] == ["gait_phase"]
    assert io["actions"]["joint_pos"]["scale"] == 0.5


def test_onnx_loop_reproduces_the_torch_evaluation(bundle):
    _, _, out = bundle
    env = make_env(num_envs=3, contact_model="hard")
    pol = random_policy(env)
    export_bundle(env, pol, str(out / "hard"), env.cfg.to_dict(), "shac")
    onnx = OnnxBundlePolicy(str(out / "hard"), env)
    results = []
    for p in (pol, onnx):
        env.reset(seed=7)
        results.append(evaluate(env, p, 3, progress=False))
    ref, got = results
    assert got.lengths.tolist() == ref.lengths.tolist() and got.falls.tolist() == ref.falls.tolist()
    np.testing.assert_allclose(got.returns, ref.returns, atol=1e-3, rtol=0)
    np.testing.assert_allclose(got.tracking_errors, ref.tracking_errors, atol=1e-3, rtol=0)
    assert onnx.max_obs_error < 1e-5 and onnx.max_target_error < 1e-5


def test_mismatched_bundles_are_refused(bundle):
    _, _, out = bundle
    usd = make_env(num_envs=1, asset_source="usd")  # legs LF, LH, RF, RH; the bundle's urdf env has LF, RF, LH, RH
    order = r"joint order differs: bundle \['LF_HAA', 'LF_HFE', 'LF_KFE', 'RF_HAA'"
    with pytest.raises(BundleMismatchError, match=order):
        OnnxBundlePolicy(str(out), usd)
    no_gait = make_env(num_envs=1)
    no_gait.cfg.gait.period_s = no_gait.cfg.gait.joint_swing_scale = 0.0
    no_gait.num_obs = 48  # what an env built with the gait clock off has
    with pytest.raises(BundleMismatchError, match="observation size differs: the bundle's policy takes 50 entries"):
        OnnxBundlePolicy(str(out), no_gait)
    io = yaml.safe_load((out / "io.yaml").read_text())
    io["observations"]["policy"][5]["shape"] = [11]
    bad = out / "bad"
    bad.mkdir()
    (bad / "io.yaml").write_text(yaml.safe_dump(io))
    with pytest.raises(BundleMismatchError, match="observation term 'joint_vel_rel' has size 11 in the bundle, 12"):
        OnnxBundlePolicy(str(bad), make_env(num_envs=1))


def test_gym_make_without_cfg_builds_the_registered_config():
    import isaaclab_diffsim.tasks  # noqa: F401

    env = gym.make("DiffSim-Velocity-Flat-AnymalC-Direct", num_envs=2, asset_source="urdf").unwrapped
    assert type(env.cfg) is AnymalCFlatDiffEnvCfg
    assert env.cfg.kp == 80.0 and env.cfg.solver_cfg.kappa == 200.0 and env.num_obs == 48
    assert env.cfg.gait.period_s == 0.0 and env.cfg.gait.joint_swing_scale == 0.0  # no clock, no generator
    assert env.cfg.rewards.track_lin_vel_xy_l2 == -1.0 and env.cfg.commands.rel_standing_envs == 0.4
    assert env.cfg.solver_cfg.contact_model == "smoothed" and env.cfg.num_envs == 2
    play = gym.make("DiffSim-Velocity-Flat-AnymalC-Direct-Play", num_envs=2, asset_source="urdf").unwrapped
    assert type(play.cfg) is AnymalCFlatDiffEnvCfg_PLAY
    assert play.cfg.solver_cfg.contact_model == "hard" and play.cfg.events.push_velocity == 0.0
    assert play.cfg.commands.lin_vel_y == (-1.0, 1.0) and play.cfg.commands.rel_standing_envs == 0.0
    assert play.sim.solver.contact_model == "hard"
    trot = gym.make("DiffSim-Velocity-Flat-AnymalC-Trot-Direct", num_envs=2, asset_source="urdf").unwrapped
    assert type(trot.cfg) is AnymalCFlatTrotDiffEnvCfg
    assert trot.cfg.gait.period_s == 0.6 and trot.num_obs == 50 and trot.cfg.commands.lin_vel_y == (0.0, 0.0)
    trot_play = gym.make("DiffSim-Velocity-Flat-AnymalC-Trot-Direct-Play", num_envs=2, asset_source="urdf").unwrapped
    assert type(trot_play.cfg) is AnymalCFlatTrotDiffEnvCfg_PLAY
    assert trot_play.cfg.kp == 80.0 and trot_play.cfg.gait.joint_swing_scale == 1.0


def test_bundle_without_clock_has_no_phase_input_and_no_generator(tmp_path):
    """The default task's bundle: 48 observations, no step input, no gait offsets in io.yaml or the ONNX graph; its
    ONNX loop reproduces the torch policy's evaluation."""
    torch.set_num_threads(1)
    cfg = AnymalCFlatDiffEnvCfg(num_envs=2, asset_source="urdf", episode_length_s=0.4)
    cfg.observations.enable_corruption = False
    cfg.solver_cfg.contact_model = "hard"
    env = DiffVelocityEnv(cfg)
    pol = random_policy(env)
    export_bundle(env, pol, str(tmp_path), env.cfg.to_dict(), "shac")
    io = yaml.safe_load((tmp_path / "io.yaml").read_text())
    assert [i["name"] for i in io["controller"]["inputs"]] == ["obs"]
    assert io["controller"]["inputs"][0]["shape"] == ["N", 48]
    assert io["gait"] == {"period_s": 0.0, "joint_swing_scale": 0.0}
    assert io["observations"]["computed_inside"] == []
    assert "gait" not in io["controller"]["target_formula"]
    session = ort.InferenceSession(str(tmp_path / "policy.onnx"))
    assert [i.name for i in session.get_inputs()] == ["obs"]
    results = []
    for p in (pol, OnnxBundlePolicy(str(tmp_path), env)):
        env.reset(seed=3)
        results.append(evaluate(env, p, 2, progress=False))
    np.testing.assert_allclose(results[1].returns, results[0].returns, rtol=1e-4, atol=1e-4)


def test_env_cfg_without_solver_cfg_is_refused_naming_it():
    """An env cfg from before the solver parameters moved to ``solver_cfg`` cannot say which contact model it was
    trained with: the export refuses it and says why."""
    from isaaclab_diffsim.deploy.io_spec import build_io

    env = make_env(num_envs=1)
    old = env.cfg.to_dict()
    old.pop("solver_cfg")
    with pytest.raises(ValueError, match="no 'solver_cfg'"):
        build_io(env, old, {"algorithm": "shac"})


def _hashes(folder) -> dict:
    import hashlib

    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir())}


def test_failed_export_leaves_the_old_bundle_whole(bundle, tmp_path, monkeypatch):
    import shutil

    import isaaclab_diffsim.deploy.bundle as bundle_module

    env, pol, out = bundle
    target = tmp_path / "exported"
    target.mkdir()
    for name in ("policy.onnx", "policy.pt", "io.yaml"):
        shutil.copy(out / name, target / name)
    before = _hashes(target)

    def full_disk(io, path):
        raise OSError(28, "No space left on device", path)

    monkeypatch.setattr(bundle_module, "write_io", full_disk)
    with pytest.raises(OSError, match="No space left"):
        export_bundle(env, random_policy(env, seed=1), str(target), env.cfg.to_dict(), "shac")
    assert _hashes(target) == before, "a failed export must not touch the old bundle"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["exported"], "the staging folder is removed"
    monkeypatch.undo()
    export_bundle(env, random_policy(env, seed=1), str(target), env.cfg.to_dict(), "shac")
    after = _hashes(target)
    assert set(after) == set(before) and after["policy.onnx"] != before["policy.onnx"], "a good export replaces it"


def test_export_refuses_a_folder_with_other_files(bundle, tmp_path):
    env, pol, _ = bundle
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(FileExistsError, match="holds files other than a bundle"):
        export_bundle(env, pol, str(tmp_path), env.cfg.to_dict(), "shac")
    assert (tmp_path / "notes.txt").read_text() == "mine"
