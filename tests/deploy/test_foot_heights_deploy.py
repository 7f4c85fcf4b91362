"""The ``foot_heights`` observation in the deployment path: the bundle's term and block, the controller's
measurement, and MuJoCo's ray-cast foot heights against ours."""

import gymnasium as gym
import numpy as np
import pytest
import torch
import yaml
from helpers.env_measurements import env_measurements

import isaaclab_diffsim.tasks  # noqa: F401  (registers the tasks)
from isaaclab_diffsim.deploy import Controller, export_bundle
from isaaclab_diffsim.deploy.io_spec import BundleMismatchError, foot_heights_fields
from isaaclab_diffsim.deploy.sim2sim import build_mujoco_anymal
from isaaclab_diffsim.deploy.sim2sim.mujoco_ground import MujocoGround
from isaaclab_diffsim.rl.shac import ShacRunner
from isaaclab_diffsim.tasks.direct.locomotion.velocity.config.anymal_c.agents.shac_cfg import (
    AnymalCFlatTrotShacRunnerCfg,
)
from isaaclab_diffsim.tasks.direct.locomotion.velocity.config.anymal_c.rough_env_cfg import AnymalCRoughDiffEnvCfg
from isaaclab_diffsim.terrains import DiffFootHeightsCfg

pytestmark = pytest.mark.usefixtures("one_torch_thread")

TASK = "DiffSim-Velocity-Rough-AnymalC-Direct"


@pytest.fixture(scope="module")
def rough_feet(tmp_path_factory):
    """(env, bundle folder, io.yaml) of the rough task with foot heights on a 3 x 6 terrain (one env, no noise) and
    a random-weight bundle of it."""
    cfg = AnymalCRoughDiffEnvCfg(num_envs=1, asset_source="urdf", seed=3)
    gen = cfg.terrain.generator
    gen.num_rows, gen.num_cols, gen.border_width = 3, 6, 2.0
    cfg.observations.enable_corruption = False
    cfg.foot_heights = DiffFootHeightsCfg(clip=0.5, scale=4.0)
    env = gym.make(TASK, cfg=cfg).unwrapped
    torch.manual_seed(0)
    agent = AnymalCFlatTrotShacRunnerCfg()
    agent.policy.actor_hidden_dims, agent.policy.critic_hidden_dims = [32, 32], [16]
    runner = ShacRunner(env, agent, log_dir=None, device="cpu")
    out = tmp_path_factory.mktemp("feet_bundle")
    export_bundle(env, runner.get_inference_policy("cpu"), str(out), env.cfg.to_dict(), "shac")
    yield env, out, yaml.safe_load((out / "io.yaml").read_text())
    env.close()


def test_bundle_declares_the_foot_heights_term_and_block(rough_feet):
    env, _, io = rough_feet
    terms = [(t["name"], t["shape"][0], t["scale"]) for t in io["observations"]["policy"]]
    assert terms[-2:] == [("height_scan", 187, 1.0), ("foot_heights", 4, 4.0)]  # after the scan
    assert io["controller"]["inputs"][0]["shape"][1] == env.num_obs == 48 + 187 + 4
    block = io["foot_heights"]
    assert (block["feet"], block["clip"], block["scale"]) == (["LF", "RF", "LH", "RH"], 0.5, 4.0)
    assert block["foot_radius"] == pytest.approx(env.foot_radius)


def test_a_foot_heights_block_that_cannot_work_is_refused(rough_feet):
    io = yaml.safe_load(yaml.safe_dump(rough_feet[2]))
    io["foot_heights"]["feet"] = ["LF", "RF"]
    with pytest.raises(BundleMismatchError, match="names 2 feet"):
        foot_heights_fields(io)
    del io["foot_heights"]
    with pytest.raises(BundleMismatchError, match="lacks"):
        foot_heights_fields(io)


def test_controller_builds_the_env_observation_from_the_foot_heights_measurement(rough_feet):
    env, bundle, _ = rough_feet
    env.reset(seed=3)
    with torch.no_grad():
        env.step(torch.full((1, 12), 0.8))  # feet off the ground
    ctrl = Controller(str(bundle))
    ctrl.reset()
    ctrl.last_action = env.last_actions.detach().numpy().astype(np.float32)
    meas = env_measurements(env)
    obs = ctrl.observation(meas)
    ref = env._get_observations().detach().numpy()
    assert obs.shape == ref.shape and np.abs(obs - ref).max() < 1e-5
    assert np.abs(ref[0, -4:]).max() > 0.0
    with pytest.raises(ValueError, match="'foot_heights' has shape"):
        ctrl.observation({**meas, "foot_heights": np.zeros(3)})
    del meas["foot_heights"]
    with pytest.raises(KeyError, match="foot_heights"):
        ctrl.observation(meas)


def test_mujoco_foot_heights_equal_ours_on_flat_ground(rough_feet):
    """MuJoCo's ray-cast foot heights, its robot posed as ours on a plane, equal ours above a flat ground."""
    import mujoco

    env, _, io = rough_feet
    joint_names = io["articulations"]["robot"]["joint_names"]
    robot = build_mujoco_anymal(joint_names, 0.9)
    d = mujoco.MjData(robot.model)
    ground = MujocoGround(robot.model, robot.ground_top)
    saved = env.heightmap
    env.heightmap = None  # our env's flat ground
    try:
        rng = np.random.default_rng(4)
        for _ in range(4):
            q = env.q.detach().clone()
            q[0, 0:3] = torch.tensor([*rng.uniform(-3, 3, 2), rng.uniform(0.5, 0.8)])
            q[0, 7:] = q[0, 7:] + torch.as_tensor(rng.uniform(-0.4, 0.4, 12), dtype=torch.float32)
            ours = env.foot_heights(env.sim.forward_kinematics(q)).numpy()[0]
            d.qpos[0:3] = q[0, 0:3].double().numpy()
            x, y, z, w = q[0, 3:7].double().numpy()
            d.qpos[3:7] = [w, x, y, z]
            d.qpos[robot.qpos_adr] = q[0, 7:].double().numpy()
            mujoco.mj_forward(robot.model, d)
            radius = float(robot.model.geom_size[robot.foot_geoms[0], 0])
            mj = ground.foot_heights(d, robot.foot_geoms, radius)
            assert np.abs(mj - ours).max() < 2e-3, (mj, ours)
            assert np.ptp(ours) > 0.01  # the legs were moved apart
    finally:
        env.heightmap = saved
