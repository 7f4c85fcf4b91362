"""Rollout recordings (USD) and the Kit extension's Kit-free logic on a recording."""

import math
import os
import sys

import numpy as np
import pytest
import torch
from pxr import Usd, UsdGeom

from isaaclab_diffsim.recording import SCHEMA, RolloutRecorder, record_differentiated_rollout
from isaaclab_diffsim.tasks.direct.locomotion.velocity import DiffVelocityEnv, DiffVelocityEnvCfg

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "exts", "isaaclab_diffsim_viewer"))
from isaaclab_diffsim_viewer import Overlays, Recording, heat_color  # noqa: E402


def smoothed_cfg(num_envs: int) -> DiffVelocityEnvCfg:
    cfg = DiffVelocityEnvCfg(num_envs=num_envs)
    cfg.solver_cfg.contact_model, cfg.solver_cfg.kappa = "smoothed", 300.0
    return cfg


NUM_ENVS, RECORD_ENVS, STEPS = 4, 3, 12


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    """A smoothed-contact rollout of 4 robots (3 recorded), dropped from 0.6 m so the feet land during it; per step
    the solver's own impulses, distances and the base positions, read independently of the recorder."""
    path = str(tmp_path_factory.mktemp("rec") / "rollout.usda")
    env = DiffVelocityEnv(smoothed_cfg(NUM_ENVS))
    env.reset()
    rec = RolloutRecorder(env, path, record_envs=RECORD_ENVS)
    gen = torch.Generator().manual_seed(0)
    impulses, distances, base = [], [], []
    with torch.no_grad():
        for _ in range(STEPS):
            env.step(0.3 * torch.randn(NUM_ENVS, 12, generator=gen))
            rec.add_step()
            impulses.append(env.sim.last_contact_impulses().view(NUM_ENVS, 4, 3).numpy().copy())
            distances.append(env.sim.solver.last_contact_distances().numpy().reshape(NUM_ENVS, 4).copy())
            base.append(env.joint_q_w()[:, :3].numpy().copy())
    rec.save()
    return {
        "path": path,
        "env": env,
        "impulses": np.array(impulses),
        "distances": np.array(distances),
        "base": np.array(base),
    }


def test_prim_per_robot_and_time_samples(recorded):
    stage = Usd.Stage.Open(recorded["path"])
    assert stage.GetStartTimeCode() == 0 and stage.GetEndTimeCode() == STEPS - 1
    assert stage.GetTimeCodesPerSecond() == pytest.approx(50.0)
    envs = stage.GetPrimAtPath(SCHEMA["envs_path"])
    assert [c.GetName() for c in envs.GetChildren()] == [f"env_{i}" for i in range(RECORD_ENVS)]
    env = recorded["env"]
    for i in range(RECORD_ENVS):
        robot = stage.GetPrimAtPath(f"{SCHEMA['envs_path']}/env_{i}/Robot")
        assert robot.IsValid()
        base = UsdGeom.Xformable(robot.GetChild("base"))
        translate = base.GetOrderedXformOps()[0].GetAttr()
        assert len(translate.GetTimeSamples()) == STEPS
        for t in (0, STEPS - 1):  # world positions: the env's base position moved to its env origin
            np.testing.assert_allclose(np.array(translate.Get(t)), recorded["base"][t, i], atol=1e-5)
        np.testing.assert_allclose(
            np.array(robot.GetAttribute(SCHEMA["origin_attr"]).Get()), env.env_origins[i].numpy(), atol=1e-6
        )
        # geometry comes from the prototypes through references: a mesh or primitive under every body
        assert any(p.IsA(UsdGeom.Gprim) for p in Usd.PrimRange(robot))
    origins = {
        tuple(stage.GetPrimAtPath(f"/World/envs/env_{i}/Robot").GetAttribute(SCHEMA["origin_attr"]).Get())
        for i in range(RECORD_ENVS)
    }
    assert len(origins) == RECORD_ENVS  # robots at distinct env origins, not on top of each other


def test_foot_primvars_equal_solver_contacts(recorded):
    """Recorded force = the solver's impulse / dt (normal along +z, |f| = |impulse| / dt), distance = the solver's
    signed distance, weight = 1 / (1 + exp(kappa d)) within the margin; some feet must actually touch down."""
    stage = Usd.Stage.Open(recorded["path"])
    dt = recorded["env"].cfg.sim_dt
    imp, dist = recorded["impulses"], recorded["distances"]
    assert (imp[..., 0] > 1e-3).any(), "no foot touched the ground: the comparison would be vacuous"
    for i in range(RECORD_ENVS):
        for k, leg in enumerate(("LF", "RF", "LH", "RH")):
            foot = stage.GetPrimAtPath(f"/World/envs/env_{i}/Feet/{leg}")
            force_attr = foot.GetAttribute(SCHEMA["force_attr"])
            assert len(force_attr.GetTimeSamples()) == STEPS
            for t in range(STEPS):
                f = np.array(force_attr.Get(t))
                np.testing.assert_allclose(f[2], imp[t, i, k, 0] / dt, rtol=1e-5, atol=1e-3)
                np.testing.assert_allclose(np.linalg.norm(f), np.linalg.norm(imp[t, i, k]) / dt, rtol=1e-5, atol=1e-3)
                d = foot.GetAttribute(SCHEMA["distance_attr"]).Get(t)
                assert d == pytest.approx(dist[t, i, k], abs=1e-7)
                w = foot.GetAttribute(SCHEMA["weight_attr"]).Get(t)
                expected = 1.0 / (1.0 + math.exp(300.0 * d)) if d <= 0.02 else 0.0
                assert w == pytest.approx(expected, rel=1e-5, abs=1e-7)


def test_gradient_magnitudes_match_finite_differences(tmp_path):
    """|dJ/da_t| recorded for a differentiated horizon (J: sum of rewards): the directional derivative along the
    recorded gradient's direction, by central differences on the action of step 0 of env 0, equals its norm."""
    cfg = smoothed_cfg(2)
    cfg.rewards.feet_air_time = 0.0  # contact timing has no gradient
    env = DiffVelocityEnv(cfg)
    env.reset()
    torch.manual_seed(0)
    policy = torch.nn.Linear(48, 12)
    for p in policy.parameters():
        p.requires_grad_(False)
    with torch.no_grad():
        for _ in range(3):  # settle onto the ground
            env.step(torch.zeros(2, 12))
    start = env.get_state()
    rec = RolloutRecorder(env, str(tmp_path / "grad.usda"), record_envs=2)
    norms = record_differentiated_rollout(env, policy, rec, steps=4, horizon=4)
    assert norms.shape == (4, 2) and np.isfinite(norms).all() and (norms[0] > 0).all()

    # the gradient's direction for env 0, step 0, then J(a_0 + eps * u) by re-running the closed loop
    env.set_state(start)
    a0 = policy(env.get_observations()).detach().requires_grad_(True)
    with torch.enable_grad():
        obs, rew, *_ = env.step(a0)
        total = rew.sum()
        for _ in range(3):
            obs, rew, *_ = env.step(policy(obs))
            total = total + rew.sum()
        g = torch.autograd.grad(total, a0)[0]
    assert float(g[0].norm()) == pytest.approx(norms[0, 0], rel=1e-4)
    u = g[0] / g[0].norm()

    def objective(eps):
        env.set_state(start)
        with torch.no_grad():
            a = policy(env.get_observations())
            a[0] += eps * u
            obs, rew, *_ = env.step(a)
            total = rew.sum()
            for _ in range(3):
                obs, rew, *_ = env.step(policy(obs))
                total = total + rew.sum()
        return float(total)

    eps = 1e-2
    fd = (objective(eps) - objective(-eps)) / (2 * eps)
    assert fd == pytest.approx(norms[0, 0], rel=0.05)
    stage = Usd.Stage.Open(rec.save())
    attr = stage.GetPrimAtPath("/World/envs/env_1/Robot").GetAttribute(SCHEMA["grad_attr"])
    np.testing.assert_allclose([attr.Get(t) for t in range(4)], norms[:, 1], rtol=1e-6)


def test_extension_logic_on_a_recording(recorded):
    rec = Recording(recorded["path"])
    assert rec.num_envs == RECORD_ENVS and rec.frames == STEPS and rec.legs == ["LF", "RF", "LH", "RH"]
    s = rec.foot_series(1, "RH")
    dt = recorded["env"].cfg.sim_dt
    np.testing.assert_allclose(s.force[:, 2], recorded["impulses"][:, 1, 3, 0] / dt, rtol=1e-5, atol=1e-3)
    np.testing.assert_allclose(s.distance, recorded["distances"][:, 1, 3], atol=1e-7)
    np.testing.assert_allclose(s.time, np.arange(STEPS) * 0.02)
    assert rec.frame_of_time(0.05) == 2 and rec.frame_of_time(99.0) == STEPS - 1
    plot = rec.plot_series(1, "RH")
    assert set(plot) == {"distance [m]", "weight", "force [N]"}
    values, lo, hi = plot["force [N]"]
    assert len(values) == STEPS and lo <= min(values) and hi >= max(values)
    assert rec.grad_series(0) is None  # not differentiated

    ov = Overlays(rec)
    stage = rec.stage
    foot = stage.GetPrimAtPath(rec.foot_path(0, "LF"))
    ov.set_forces(False)
    assert UsdGeom.Imageable(foot).ComputeVisibility() == UsdGeom.Tokens.invisible
    ov.set_forces(True)
    assert UsdGeom.Imageable(foot).ComputeVisibility() == UsdGeom.Tokens.inherited
    ov.set_weights(True)
    marker = UsdGeom.Sphere(stage.GetPrimAtPath(rec.foot_path(2, "LH") + "_weight"))
    w = rec.foot_series(2, "LH").weight
    for t in (0, STEPS - 1):
        assert marker.GetRadiusAttr().Get(t) == pytest.approx(0.01 + 0.04 * w[t], rel=1e-6)
    ov.set_weights(False)
    assert not stage.GetPrimAtPath(rec.foot_path(2, "LH") + "_weight")
    with pytest.raises(ValueError):
        ov.set_grad_heat(True)  # no gradients in this recording
    # nothing was written into the file: the overlays live in the session layer
    assert not Usd.Stage.Open(recorded["path"]).GetPrimAtPath(rec.foot_path(2, "LH") + "_weight")
    with pytest.raises(ValueError):
        Recording(Usd.Stage.CreateInMemory())


def test_gradient_heat_colours(tmp_path):
    env = DiffVelocityEnv(DiffVelocityEnvCfg(num_envs=2))
    env.reset()
    rec = RolloutRecorder(env, str(tmp_path / "heat.usda"), record_envs=2)
    with torch.no_grad():
        for _ in range(3):
            env.step(torch.zeros(2, 12))
            rec.add_step()
    rec.set_grad_norms(0, np.array([[1.0, 10.0], [100.0, 1e3], [1e4, 1e5]]))
    r = Recording(rec.save())
    ov = Overlays(r)
    colors = ov.grad_heat_colors()
    assert colors[1][2] == heat_color(1.0) and colors[0][0] == heat_color(0.0)  # 4 decades below the largest
    ov.set_grad_heat(True)
    attr = UsdGeom.PrimvarsAPI(r.stage.GetPrimAtPath(r.robot_path(1))).GetPrimvar("displayColor").GetAttr()
    assert tuple(attr.Get(2)[0]) == pytest.approx(heat_color(1.0))
    ov.set_grad_heat(False)
    assert not attr.GetTimeSamples()  # back to the recorded constant colour
    assert heat_color(-1.0) == heat_color(0.0) and heat_color(2.0) == heat_color(1.0)


def test_shac_records_one_horizon_every_n_iterations(tmp_path):
    """``record_interval=2``: iterations 0 and 2 of 3 leave a recording of their horizon, with one frame per step and
    the per-step |dL/da_t| of the actor loss's backward (finite, not all zero)."""
    from isaaclab_diffsim.rl.shac import ShacRunner, ShacRunnerCfg

    torch.manual_seed(0)
    env = DiffVelocityEnv(smoothed_cfg(2))
    cfg = ShacRunnerCfg(horizon=3, max_iterations=3, save_interval=100, record_interval=2, record_envs=2)
    cfg.policy.actor_hidden_dims = [16]
    cfg.policy.critic_hidden_dims = [16]
    cfg.algorithm.critic_iterations = 1
    runner = ShacRunner(env, cfg, log_dir=str(tmp_path), device="cpu")
    runner.learn()
    assert sorted(os.listdir(tmp_path / "recordings")) == ["horizon_0.usd", "horizon_2.usd"]
    rec = Recording(str(tmp_path / "recordings" / "horizon_2.usd"))
    assert rec.frames == 3 and rec.num_envs == 2
    g = np.stack([rec.grad_series(i) for i in range(2)])
    assert g.shape == (2, 3) and np.isfinite(g).all() and (g > 0).any()


@pytest.mark.slow
def test_isaaclab_newton_gl_visualizer_follows_the_differentiable_env():
    """play.py's --viz/--video path: Isaac Lab's newton_gl visualizer (headless, EGL) on the Isaac Lab-built
    differentiable env draws its state: frames differ once the robots have moved, and match the state, not a stale
    copy (a frame rendered twice without a step is the same)."""
    from isaaclab.app.settings_manager import get_settings_manager

    from isaaclab_diffsim.recording.isaaclab_viz import IsaacLabVisualizers, request_visualizers

    request_visualizers(["newton_gl"])
    env = None
    try:
        env = DiffVelocityEnv(DiffVelocityEnvCfg(num_envs=2, asset_source="isaaclab"))
        env.reset()
        viz = IsaacLabVisualizers(env)
        viz.step()
        first = viz.frame().astype(np.float64)
        assert first.ndim == 3 and first.shape[2] == 3 and first.std() > 1.0  # not a blank image
        with torch.no_grad():
            for _ in range(25):
                env.step(torch.full((2, 12), 0.5))
        viz.step()
        moved = viz.frame().astype(np.float64)
        assert np.abs(moved - first).mean() > 0.05
        np.testing.assert_array_equal(viz.frame(), moved)
    finally:
        if env is not None:
            env.close()
        settings = get_settings_manager()
        settings.set("/isaaclab/visualizer/types", "")
        settings.set("/isaaclab/visualizer/explicit", False)
        settings.set("/isaaclab/visualizer/disable_all", False)
    with pytest.raises(ValueError):
        request_visualizers(["kit3d"])
