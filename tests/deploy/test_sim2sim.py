"""Sim-to-sim: the MuJoCo ANYmal C built from the project's URDF (mass, joints, standing), a bundle's episode in
MuJoCo, and the script's errors for unknown variants and missing bundles."""

import importlib.util
import math
from pathlib import Path

import numpy as np
import pytest
import torch

from isaaclab_diffsim.deploy import export_bundle, open_bundle
from isaaclab_diffsim.deploy.sim2sim import build_mujoco_anymal, parse_variant, urdf_link_mass
from isaaclab_diffsim.deploy.sim2sim.actuator import DcMotor
from isaaclab_diffsim.deploy.sim2sim.mujoco_loop import MujocoRunner
from isaaclab_diffsim.rl.shac import ShacRunner
from isaaclab_diffsim.tasks.direct.locomotion.velocity import DiffVelocityEnv
from isaaclab_diffsim.tasks.direct.locomotion.velocity.config.anymal_c.agents.shac_cfg import (
    AnymalCFlatTrotShacRunnerCfg,
)
from isaaclab_diffsim.tasks.direct.locomotion.velocity.config.anymal_c.flat_env_cfg import AnymalCFlatTrotDiffEnvCfg

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "deploy" / "sim2sim.py"
G = 9.81


def make_env(gait: bool = True, **fields):
    cfg = AnymalCFlatTrotDiffEnvCfg(num_envs=1, asset_source="urdf", episode_length_s=2.0)
    cfg.observations.enable_corruption = False
    cfg.solver_cfg.contact_model = "hard"
    ev = cfg.events
    ev.base_mass_add_range, ev.base_com_range = (0.0, 0.0), {"x": (0.0, 0.0), "y": (0.0, 0.0), "z": (0.0, 0.0)}
    ev.reset_joint_scale_range, ev.reset_base_velocity, ev.push_velocity = (1.0, 1.0), 0.0, 0.0
    if not gait:
        cfg.gait.period_s, cfg.gait.joint_swing_scale = 0.0, 0.0
    for k, v in fields.items():
        setattr(cfg, k, v)
    return DiffVelocityEnv(cfg)


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    """A bundle of a random-weight SHAC policy."""
    torch.set_num_threads(1)
    torch.manual_seed(0)
    env = make_env()
    agent = AnymalCFlatTrotShacRunnerCfg()
    agent.policy.actor_hidden_dims, agent.policy.critic_hidden_dims = [32, 32], [16]
    runner = ShacRunner(env, agent, log_dir=None, device="cpu")
    out = tmp_path_factory.mktemp("bundle")
    export_bundle(env, runner.get_inference_policy("cpu"), str(out), env.cfg.to_dict(), "shac")
    return out


def hard_contact_standing_height() -> float:
    """Base height of our hard-contact model after 2 s at the default-pose targets (no gait, zero actions)."""
    env = make_env(gait=False, episode_length_s=5.0)  # no time-out reset at 2 s
    env.reset()
    with torch.no_grad():
        for _ in range(int(round(2.0 / env.step_dt))):
            env.step(torch.zeros(1, 12))
    return float(env.q[0, 2])


def test_mujoco_model_mass_joints_and_standing(bundle):
    import mujoco

    io, _ = open_bundle(str(bundle))
    robot_io = io["articulations"]["robot"]
    names = robot_io["joint_names"]
    robot = build_mujoco_anymal(names, friction=0.9)
    m = robot.model
    assert math.isclose(m.body_mass.sum(), urdf_link_mass(), rel_tol=1e-9)
    assert math.isclose(urdf_link_mass(), 52.13485, rel_tol=1e-6)  # ANYmal C of example-robot-data
    assert len(names) == 12 and m.nu == 0 and m.nv == 18
    by_adr = {int(m.jnt_qposadr[j]): mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_JOINT, j) for j in range(m.njnt)}
    assert [by_adr[int(a)] for a in robot.qpos_adr] == names

    d = mujoco.MjData(m)
    default = np.asarray(robot_io["default_joint_pos"])
    d.qpos[2], d.qpos[3] = 0.6, 1.0
    d.qpos[robot.qpos_adr] = default
    motor = DcMotor(robot_io)
    for _ in range(int(round(2.0 / m.opt.timestep))):
        d.qfrc_applied[robot.dof_adr] = motor.torque(default, d.qpos[robot.qpos_adr], d.qvel[robot.dof_adr])
        mujoco.mj_step(m, d)
    force = np.zeros(6)
    normal = 0.0
    for i in range(d.ncon):
        c = d.contact[i]
        assert robot.foot_geoms.count(c.geom1) + robot.foot_geoms.count(c.geom2) == 1, "only feet touch the ground"
        mujoco.mj_contactForce(m, d, i, force)
        normal += force[0]
    assert abs(normal - m.body_mass.sum() * G) < 0.1 * m.body_mass.sum() * G
    ours = hard_contact_standing_height()
    assert abs(d.qpos[2] - ours) < 0.05, (d.qpos[2], ours)


def test_feet_only_mujoco_model_collides_the_feet_alone(bundle):
    """A robot sunk to 0.15 m in the default pose: base, thighs or shanks touch the plane in the full model; with
    ``feet_only`` every contact is a foot's, and no foot contact of the full model is lost."""
    import mujoco

    io, _ = open_bundle(str(bundle))
    robot_io = io["articulations"]["robot"]
    contacts = {}
    for feet_only in (False, True):
        robot = build_mujoco_anymal(robot_io["joint_names"], friction=0.9, feet_only=feet_only)
        d = mujoco.MjData(robot.model)
        d.qpos[2], d.qpos[3] = 0.15, 1.0
        d.qpos[robot.qpos_adr] = robot_io["default_joint_pos"]
        mujoco.mj_forward(robot.model, d)
        touching = {int(g) for c in d.contact[: d.ncon] for g in (c.geom1, c.geom2)}
        contacts[feet_only] = ({g for g in touching if robot.model.geom_bodyid[g] != 0}, set(robot.foot_geoms))
    full, feet = contacts[False]
    assert full - feet, "the sunk robot's legs or base touch the plane in the full model"
    only, feet = contacts[True]
    assert only and only <= feet and (full & feet) == only


def test_random_bundle_episode_in_mujoco_is_finite(bundle):
    io, session = open_bundle(str(bundle))
    runner = MujocoRunner(io, session)
    for variant in ("nominal", "latency2", "push1.0", "payload5", "friction0.4"):
        ep = runner.episode((0.5, 0.0, 0.0), parse_variant(variant), episode_s=0.3, seed=0)
        values = [ep.tracking_error, ep.joint_power, ep.roll_rms, ep.pitch_rms]
        assert 1 <= ep.length <= 15 and all(np.isfinite(values)), (variant, ep)


def load_script():
    spec = importlib.util.spec_from_file_location("sim2sim_script", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_unknown_variant_and_missing_bundle_are_clear_errors(bundle, tmp_path, capsys):
    with pytest.raises(ValueError, match="unknown variant 'gravity2'"):
        parse_variant("gravity2")
    script = load_script()
    with pytest.raises(SystemExit):
        script.main([str(bundle), "--sim", "mujoco", "--variants", "nominal,ice"])
    assert "unknown variant 'ice'" in capsys.readouterr().err
    with pytest.raises(SystemExit, match="no such bundle folder"):
        script.main([str(tmp_path / "nope"), "--sim", "mujoco"])
    with pytest.raises(SystemExit, match="holds no io.yaml"):
        script.main([str(tmp_path), "--sim", "mujoco"])


def test_script_writes_json(bundle, tmp_path):
    import json

    out = tmp_path / "r.json"
    script = load_script()
    script.main([str(bundle), "--sim", "mujoco", "--variants", "nominal", "--episodes", "1", "--episode_s", "0.2"])
    script.main(
        [str(bundle), "--sim", "mujoco", "--variants", "push0.5", "--episodes", "2", "--episode_s", "0.2"]
        + ["--out", str(out)]
    )
    data = json.loads(out.read_text())
    assert data["sim"] == "mujoco" and len(data["variants"]["push0.5"]["per_episode"]) == 2


def test_new_variants_run_in_both_simulators(bundle, tmp_path):
    """motor strength, observation noise and a fixed command in MuJoCo and in diffsim; every metric finite."""
    import json

    script = load_script()
    for sim in ("mujoco", "diffsim"):
        out = tmp_path / f"{sim}.json"
        argv = [str(bundle), "--sim", sim, "--variants", "nominal,motor0.8,noise,cmd1.0,latency1", "--episodes", "2"]
        script.main(argv + ["--episode_s", "0.2", "--out", str(out)])
        variants = json.loads(out.read_text())["variants"]
        for name, s in variants.items():
            values = [v for k, v in s.items() if k != "per_episode"]
            assert all(np.isfinite(values)) and s["episodes"] == 2, (sim, name, s)
        assert [e["command_vx"] for e in variants["cmd1.0"]["per_episode"]] == [1.0, 1.0]
        assert variants["noise"]["tracking_error"] != variants["nominal"]["tracking_error"]


def test_trace_writes_commanded_and_achieved_velocity(bundle, tmp_path):
    import json

    trace = tmp_path / "trace.json"
    script = load_script()
    argv = [str(bundle), "--sim", "mujoco", "--episodes", "1", "--episode_s", "0.1", "--trace", str(trace)]
    script.main(argv + ["--trace_levels", "0", "0.5", "--trace_step_s", "0.1"])
    data = json.loads(trace.read_text())
    assert data["cmd_vx"][:5] == [0.0] * 5 and data["cmd_vx"][5:] == [0.5] * (len(data["cmd_vx"]) - 5)
    assert len(data["t"]) == len(data["vx"]) and np.isclose(data["t"][0], 0.02)
    if importlib.util.find_spec("matplotlib") is not None:
        assert (tmp_path / "trace.png").stat().st_size > 1000
