"""The deployment runtime: ``Controller`` fed named measurements reproduces the env's observation and the policy's
actions and targets step by step (joints mapped by name, its own step counter and last action); the package
imports with numpy, onnxruntime and pyyaml only."""

import os
import subprocess
import sys

import numpy as np
import pytest
import torch

from isaaclab_diffsim.deploy import Controller, export_bundle
from isaaclab_diffsim.deploy.observations import rotate_inverse
from isaaclab_diffsim.rl.shac import ShacRunner
from isaaclab_diffsim.tasks.direct.locomotion.velocity import DiffVelocityEnv
from isaaclab_diffsim.tasks.direct.locomotion.velocity.config.anymal_c.agents.shac_cfg import (
    AnymalCFlatTrotShacRunnerCfg,
)
from isaaclab_diffsim.tasks.direct.locomotion.velocity.config.anymal_c.flat_env_cfg import AnymalCFlatTrotDiffEnvCfg

SOURCE = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "source")


@pytest.fixture(scope="module")
def env_policy_bundle(tmp_path_factory):
    torch.set_num_threads(1)
    torch.manual_seed(0)
    cfg = AnymalCFlatTrotDiffEnvCfg(num_envs=2, asset_source="urdf", episode_length_s=2.0)
    cfg.observations.enable_corruption = False
    env = DiffVelocityEnv(cfg)
    agent = AnymalCFlatTrotShacRunnerCfg()
    agent.policy.actor_hidden_dims, agent.policy.critic_hidden_dims = [32, 32], [16]
    runner = ShacRunner(env, agent, log_dir=None, device="cpu")
    runner.alg.obs_normalizer.update(torch.randn(256, env.num_obs, dtype=torch.float64) * 3.0 + 1.0)
    policy = runner.get_inference_policy("cpu")
    out = tmp_path_factory.mktemp("bundle")
    export_bundle(env, policy, str(out), env.cfg.to_dict(), "shac")
    return env, policy, out


def measurements(env, order, use_quat):
    q, qd = env.q.detach().numpy().astype(np.float64), env.qd.detach().numpy().astype(np.float64)
    names = list(env.layout.joint_names)
    perm = [names.index(n) for n in order]
    m = {
        "base_lin_vel": rotate_inverse(q[:, 3:7], qd[:, 0:3]),
        "base_ang_vel": rotate_inverse(q[:, 3:7], qd[:, 3:6]),
        "joint_pos": q[:, 7:][:, perm],
        "joint_vel": qd[:, 6:][:, perm],
        "command": env.commands.detach().numpy(),
    }
    if use_quat:
        m["base_quat_xyzw"] = q[:, 3:7]
    else:
        m["projected_gravity"] = rotate_inverse(q[:, 3:7], np.tile([0.0, 0.0, -1.0], (len(q), 1)))
    return m


@pytest.mark.parametrize("use_quat", [False, True])
def test_controller_matches_the_env_step_by_step(env_policy_bundle, use_quat):
    env, policy, bundle = env_policy_bundle
    order = list(reversed(env.layout.joint_names))  # the robot's own joint order, mapped by name
    ctrl = Controller(str(bundle), joint_order=order, num_robots=env.num_envs)
    obs = env.reset(seed=3)
    ctrl.reset()
    back = [order.index(n) for n in env.layout.joint_names]
    for k in range(6):
        targets = ctrl.step(measurements(env, order, use_quat))
        assert ctrl.step_count.tolist() == [k + 1] * env.num_envs
        np.testing.assert_allclose(ctrl.last_obs, obs[:, :48].numpy(), atol=2e-5)
        with torch.no_grad():
            actions = policy(obs)
            env_targets = env.default_leg + env.cfg.action_scale * actions + env.trajectory_generator_offsets()
        np.testing.assert_allclose(ctrl.last_action, actions.numpy(), atol=2e-5)
        np.testing.assert_allclose(targets[:, back], env_targets.numpy(), atol=2e-5)
        obs, *_ = env.step(torch.from_numpy(ctrl.last_action))
    ctrl.reset([0])
    assert ctrl.step_count.tolist() == [0, 6] and not ctrl.last_action[0].any() and ctrl.last_action[1].any()


def test_single_robot_dict_measurements_and_errors(env_policy_bundle):
    env, _, bundle = env_policy_bundle
    ctrl = Controller(str(bundle))
    names = ctrl.joint_names
    m = {k: v[0] for k, v in measurements(env, names, False).items()}
    ref = ctrl.step(dict(m))
    ctrl.reset()
    by_name = ctrl.step(
        {**m, "joint_pos": dict(zip(names, m["joint_pos"])), "joint_vel": dict(zip(names, m["joint_vel"]))}
    )
    assert ref.shape == (12,) and list(by_name) == names
    np.testing.assert_allclose([by_name[n] for n in names], ref, atol=1e-6)
    with pytest.raises(KeyError, match="joints missing \\['LF_HAA'\\]"):
        ctrl.step({**m, "joint_pos": dict(list(zip(names, m["joint_pos"]))[1:])})
    with pytest.raises(KeyError, match="projected_gravity or base_quat_xyzw"):
        ctrl.step({k: v for k, v in m.items() if k != "projected_gravity"})
    with pytest.raises(ValueError, match="not a permutation"):
        Controller(str(bundle), joint_order=names[:-1])


BLOCKER = """
import sys
class Block:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("torch", "isaaclab", "warp", "newton"):
            raise ImportError(f"blocked: {name}")
sys.meta_path.insert(0, Block())
import isaaclab_diffsim.deploy as d
c = d.Controller(sys.argv[1])
import numpy as np
m = {"base_lin_vel": np.zeros(3), "base_ang_vel": np.zeros(3), "projected_gravity": np.array([0.0, 0.0, -1.0]),
     "joint_pos": np.array(c.default_joint_pos), "joint_vel": np.zeros(12), "command": np.zeros(3)}
print(c.step(m).shape, sorted(k for k in sys.modules if k.split(".")[0] in ("torch", "isaaclab", "warp")))
try:
    d.export_bundle
except ImportError as err:
    print("lazy:", err)
"""


def test_deploy_imports_without_torch_isaaclab_and_warp(env_policy_bundle):
    _, _, bundle = env_policy_bundle
    env = {**os.environ, "PYTHONPATH": os.path.join(SOURCE, "isaaclab_diffsim")}
    proc = subprocess.run(
        [sys.executable, "-c", BLOCKER, str(bundle)], capture_output=True, text=True, env=env, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    assert "(12,) []" in proc.stdout and "lazy: blocked: torch" in proc.stdout
