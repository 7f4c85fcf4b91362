"""The actuator a SHAC policy trained with travels in its LEAPP pipeline and reaches the deployment scene's config."""

import pytest

pytest.importorskip("leapp")

from helpers.leapp_export import export_env_and_agent  # noqa: E402
from isaaclab.actuators import DCMotorCfg  # noqa: E402

from isaaclab_diffsim.assets.anymal_c_cfg import ANYMAL_C_DIFFSIM_CFG  # noqa: E402
from isaaclab_diffsim.deploy.leapp_pipeline.actuator import deploy_actuators, read_actuator  # noqa: E402
from isaaclab_diffsim.deploy.leapp_pipeline.shac_export import export_leapp  # noqa: E402

TASK = "DiffSim-Velocity-Flat-AnymalC-Direct"


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """(env, pipeline YAML) of a tiny linear policy of the differentiable task."""
    import torch

    torch.set_num_threads(1)
    env = export_env_and_agent(TASK)[0]
    policy = torch.nn.Linear(env.num_obs, 12)
    torch.nn.init.zeros_(policy.weight)
    out = str(tmp_path_factory.mktemp("leapp"))
    return env, export_leapp(env, policy, out, TASK, env.cfg.to_dict(), "shac", steps=2)


@pytest.mark.integration
def test_pipeline_carries_the_trained_actuator(exported):
    env, pipeline = exported
    actuator = read_actuator(pipeline)
    assert actuator["model"] == "dc_motor"
    assert actuator["joint_names"] == list(env.layout.joint_names)
    assert actuator["stiffness"] == pytest.approx(env.kp_leg.tolist())
    assert actuator["damping"] == pytest.approx(env.kd_leg.tolist())
    assert actuator["actuator_effort_limit"] == pytest.approx(env.effort_limit.tolist())
    assert actuator["saturation_effort"] == pytest.approx(env.cfg.solver_cfg.actuator_saturation)


@pytest.mark.integration
def test_deploy_config_runs_the_pipelines_actuator_and_flags_override_it(exported):
    env, pipeline = exported
    scene = ANYMAL_C_DIFFSIM_CFG.actuators
    assert scene["legs"].stiffness != {".*": float(env.kp_leg[0])}  # the scene's ANYdrive is not what trained
    actuators, notes = deploy_actuators(scene, pipeline)
    legs = actuators["legs"]
    assert isinstance(legs, DCMotorCfg) and legs.joint_names_expr == scene["legs"].joint_names_expr
    assert legs.stiffness == pytest.approx(float(env.kp_leg[0])) and legs.damping == pytest.approx(float(env.kd_leg[0]))
    assert legs.actuator_velocity_limit == pytest.approx(float(env.velocity_limit[0]))
    assert legs.saturation_effort == pytest.approx(env.cfg.solver_cfg.actuator_saturation)
    assert len(notes) == 1 and "pipeline's dc_motor" in notes[0]

    actuators, notes = deploy_actuators(scene, pipeline, kp=33.0)
    assert actuators["legs"].stiffness == 33.0 and actuators["legs"].damping == pytest.approx(float(env.kd_leg[0]))
    assert "--kp 33.0 overrides the stiffness of the pipeline's actuator" in notes[-1]
    assert scene["legs"].stiffness == ANYMAL_C_DIFFSIM_CFG.actuators["legs"].stiffness  # the task's cfg untouched
