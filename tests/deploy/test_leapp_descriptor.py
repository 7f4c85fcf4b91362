"""One descriptor: a LEAPP export carries the io spec in its own YAML; the Controller, open_bundle and
check_env_matches read it there, and the LEAPP export's controller gives the ONNX bundle's actions."""

from pathlib import Path

import numpy as np
import pytest
import torch
import yaml

pytest.importorskip("leapp")

from helpers.leapp_export import export_env_and_agent  # noqa: E402

from isaaclab_diffsim.deploy import BundleMismatchError, Controller, OnnxBundlePolicy, export_bundle  # noqa: E402
from isaaclab_diffsim.deploy.descriptor import LEAPP, load_spec, read_descriptor  # noqa: E402
from isaaclab_diffsim.deploy.leapp_descriptor import SPEC_KEY, leapp_spec  # noqa: E402
from isaaclab_diffsim.deploy.leapp_pipeline.shac_export import export_leapp  # noqa: E402
from isaaclab_diffsim.deploy.onnx_policy import open_bundle  # noqa: E402
from isaaclab_diffsim.rl.shac import ShacRunner  # noqa: E402

TASK = "DiffSim-Velocity-Flat-AnymalC-Trot-Direct"
"""The trot task: gait clock and trajectory generator inside both controllers."""
ACTION_ATOL = 1e-5
"""Actions and targets: LEAPP's graph (gravity from the quaternion in ONNX) against the bundle's (in numpy)."""


@pytest.fixture(scope="module")
def exports(tmp_path_factory):
    """(env, bundle folder, LEAPP YAML) of one random SHAC policy with a non-trivial normaliser."""
    torch.set_num_threads(1)
    env, agent = export_env_and_agent(TASK)
    torch.manual_seed(0)
    agent.device = "cpu"
    agent.policy.actor_hidden_dims, agent.policy.critic_hidden_dims = [32, 32], [16]
    runner = ShacRunner(env, agent, log_dir=None, device="cpu")
    runner.alg.obs_normalizer.update(torch.randn(256, env.num_obs, dtype=torch.float64) * 3.0 + 1.0)
    policy = runner.get_inference_policy("cpu")
    out = tmp_path_factory.mktemp("exports")
    export_bundle(env, policy, str(out / "bundle"), env.cfg.to_dict(), "shac")
    pipeline = export_leapp(env, policy, str(out / "leapp"), TASK, env.cfg.to_dict(), "shac")
    return env, out / "bundle", pipeline


def measurements(rng, default, num_robots):
    """Random robot measurements around the default pose, the orientation as a quaternion only."""
    quat = rng.normal(size=(num_robots, 4)) * [0.1, 0.1, 0.3, 1.0]
    return {
        "base_quat_xyzw": quat / np.linalg.norm(quat, axis=1, keepdims=True),
        "base_lin_vel": rng.normal(size=(num_robots, 3)) * 0.5,
        "base_ang_vel": rng.normal(size=(num_robots, 3)) * 0.5,
        "joint_pos": default + rng.normal(size=(num_robots, 12)) * 0.2,
        "joint_vel": rng.normal(size=(num_robots, 12)),
        "command": rng.uniform(-1.0, 1.0, size=(num_robots, 3)),
    }


def test_leapp_yaml_carries_the_bundles_spec(exports):
    env, bundle, pipeline = exports
    spec = load_spec(pipeline)
    assert spec == leapp_spec(load_spec(str(bundle)))
    assert load_spec(str(Path(pipeline).parent)) == spec  # the export folder reads the same
    assert not (Path(pipeline).parent / "io.yaml").exists()
    assert "files" not in spec["controller"] and spec["controller"]["algorithm"] == "shac"
    assert spec["articulations"]["robot"]["joint_names"] == list(env.layout.joint_names)
    assert spec["gait"]["period_s"] == env.cfg.gait.period_s > 0
    assert spec["training"]["asset_source"] == "urdf"


def test_leapps_loader_keeps_the_spec(exports):
    from leapp import InferenceManager
    from safetensors.numpy import load_file

    _, _, pipeline = exports
    inference = InferenceManager(pipeline)
    configs = inference.pipeline["configs"]
    assert configs[SPEC_KEY] == load_spec(pipeline) and configs["frequency"] == pytest.approx(50.0)
    # the feedback state starts where Controller.reset starts it: zero actions, step 0
    initial = load_file(str(Path(pipeline).with_name(inference.pipeline["initial_values"])))
    assert initial and all(not v.any() for v in initial.values())


@pytest.mark.parametrize("num_robots", [1, 2])
def test_controller_from_leapp_export_gives_the_bundles_actions(exports, num_robots):
    env, bundle, pipeline = exports
    from_bundle = Controller(str(bundle), num_robots=num_robots)
    from_leapp = Controller(pipeline, num_robots=num_robots)
    assert from_leapp.leapp and not from_bundle.leapp
    rng = np.random.default_rng(3)
    default = env.default_leg.numpy()
    worst = 0.0
    for step in range(25):  # past a quarter gait period: the trajectory generator's swing is in the targets
        meas = measurements(rng, default, num_robots)
        targets_b, targets_l = from_bundle.step(meas), from_leapp.step(meas)
        np.testing.assert_allclose(from_leapp.last_obs, from_bundle.last_obs, atol=0)
        worst = max(worst, float(np.abs(from_leapp.last_action - from_bundle.last_action).max()))
        worst = max(worst, float(np.abs(targets_l - targets_b).max()))
        if step == 12:
            from_bundle.reset(0), from_leapp.reset(0)
    print(f"max |LEAPP - bundle| action or target over 25 steps: {worst:.3g}")
    assert worst < ACTION_ATOL
    assert np.abs(from_bundle.last_action).max() > 0.05  # a policy that acts: the comparison is not of zeros
    with pytest.raises(KeyError, match="base_quat_xyzw"):
        meas = measurements(rng, default, num_robots)
        meas["projected_gravity"] = np.tile([0.0, 0.0, -1.0], (num_robots, 1))
        del meas["base_quat_xyzw"]
        from_leapp.step(meas)


def test_leapp_yaml_without_the_spec_is_refused(exports, tmp_path):
    _, _, pipeline = exports
    desc = yaml.safe_load(open(pipeline))
    del desc["pipeline"]["configs"][SPEC_KEY]
    stripped = tmp_path / "stripped.yaml"
    stripped.write_text(yaml.safe_dump(desc))
    with pytest.raises(BundleMismatchError) as err:
        Controller(str(stripped))
    message = str(err.value)
    assert "\n" not in message and f"pipeline.configs.{SPEC_KEY}" in message and str(stripped) in message


def test_check_env_matches_reads_the_leapp_spec(exports, tmp_path):
    env, _, pipeline = exports
    io, _ = open_bundle(pipeline, env)
    assert read_descriptor(pipeline).kind == LEAPP and io == load_spec(pipeline)
    with pytest.raises(BundleMismatchError, match="bundle's ONNX controller"):
        OnnxBundlePolicy(pipeline, env)
    desc = yaml.safe_load(open(pipeline))
    desc["pipeline"]["configs"][SPEC_KEY]["actions"]["joint_pos"]["scale"] = 0.25
    changed = tmp_path / f"{TASK}.yaml"
    changed.write_text(yaml.safe_dump(desc))
    with pytest.raises(BundleMismatchError, match="action scale differs: bundle 0.25"):
        open_bundle(str(changed), env)
