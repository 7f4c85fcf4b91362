"""Isaac Lab-style overrides for train.py / play.py: resolved by Isaac Lab's hydra helper, unknown keys and values
of the wrong type refused with the override named."""

import pytest

from isaaclab_diffsim.tasks.task_cfgs import check_overrides, resolve_task_cfgs

TASK = "DiffSim-Velocity-Flat-AnymalC-Direct"


def test_overrides_reach_both_configs_with_their_types():
    env, agent = resolve_task_cfgs(
        TASK,
        "shac_cfg_entry_point",
        [
            "env.kp=60",
            "agent.horizon=8",
            "env.commands.lin_vel_x=(0.0,1.0)",
            "env.solver_cfg.contact_model=hard",
            "agent.algorithm.gamma=0.95",
            "agent.policy.actor_hidden_dims=[16]",
        ],
    )
    assert env.kp == 60.0 and isinstance(env.kp, float)
    assert agent.horizon == 8 and agent.algorithm.gamma == 0.95 and list(agent.policy.actor_hidden_dims) == [16]
    assert tuple(env.commands.lin_vel_x) == (0.0, 1.0) and env.solver_cfg.contact_model == "hard"
    fresh, _ = resolve_task_cfgs(TASK, "shac_cfg_entry_point", [])
    assert fresh.kp == 80.0  # overrides do not leak into the registry


@pytest.mark.parametrize(
    "override,message",
    [
        ("env.kpp=3", "has no field 'kpp'; did you mean env.kp"),
        ("env.commands.lin_vel=(0.0,1.0)", "env.commands (.*) has no field 'lin_vel'"),
        ("agent.horizon=abc", "agent.horizon expects int like 12, got 'abc'"),
        ("agent.horizon=2.5", "agent.horizon expects int"),
        ("env.kp=fast", "env.kp expects float"),
        ("env.commands.lin_vel_x=(0.0,1.0,2.0)", "expects tuple like"),
        ("env.commands=3", "is a config section"),
        ("agent.policy.actor_hidden_dims=[16.5,'a']", "expects list"),
        ("robot.kp=3", "key must start with one of"),
        ("env.kp", "not of the form key=value"),
    ],
)
def test_bad_override_is_refused_naming_it(override, message):
    with pytest.raises(SystemExit, match=message):
        resolve_task_cfgs(TASK, "shac_cfg_entry_point", [override])


def test_isaaclab_selectors_pass_the_check():
    assert check_overrides(["physics=diffsim_hard", "presets=foo"], env=object()) == []


def test_optional_field_takes_none_from_its_annotation():
    # the registered agent sets max_actor_grad_norm to 100.0: the field's annotation (float | None) decides
    _, agent = resolve_task_cfgs(
        TASK, "shac_cfg_entry_point", ["agent.algorithm.max_actor_grad_norm=None", "agent.capture_grad_norm=null"]
    )
    assert agent.algorithm.max_actor_grad_norm is None and agent.capture_grad_norm is None
    with pytest.raises(SystemExit, match="agent.algorithm.max_actor_grad_norm expects float or None like 100.0"):
        resolve_task_cfgs(TASK, "shac_cfg_entry_point", ["agent.algorithm.max_actor_grad_norm=abc"])
    with pytest.raises(SystemExit, match="agent.horizon expects int like 12, got None"):
        resolve_task_cfgs(TASK, "shac_cfg_entry_point", ["agent.horizon=None"])


def test_overrides_of_configs_built_in_code():
    from isaaclab_diffsim.tasks.direct.locomotion.velocity import DiffVelocityEnvCfg
    from isaaclab_diffsim.tasks.task_cfgs import apply_overrides

    cfg = DiffVelocityEnvCfg()
    apply_overrides(
        ["env.kp=60", "env.solver_cfg.friction_velocity=0.01", "env.events.base_com_range.x=(0.0,0.1)"], env=cfg
    )
    assert cfg.kp == 60.0 and isinstance(cfg.kp, float) and cfg.solver_cfg.friction_velocity == 0.01
    assert cfg.events.base_com_range["x"] == (0.0, 0.1)
    for override, message in [
        ("env.solver_cfg.kapa=1", "did you mean env.solver_cfg.kappa"),
        ("env.events.base_com_range.x=(0.0,0.1,0.2)", "expects tuple like"),
        ("env.events.base_com_range.w=(0.0,0.1)", "has no field 'w'"),
    ]:
        with pytest.raises(SystemExit, match=message):
            apply_overrides([override], env=DiffVelocityEnvCfg())


def test_a_dict_switches_on_a_section_that_is_none():
    from isaaclab_diffsim.terrains import DiffFootHeightsCfg

    rough = "DiffSim-Velocity-Rough-AnymalC-Direct"  # its cfg class re-annotates the field in another module
    env, _ = resolve_task_cfgs(rough, "shac_cfg_entry_point", ['env.foot_heights={"clip": 0.5}'])
    assert isinstance(env.foot_heights, DiffFootHeightsCfg) and (env.foot_heights.clip, env.foot_heights.scale) == (
        0.5,
        DiffFootHeightsCfg().scale,
    )
    env, _ = resolve_task_cfgs(rough, "shac_cfg_entry_point", ["env.foot_heights={}"])
    assert env.foot_heights == DiffFootHeightsCfg()
    with pytest.raises(SystemExit, match=r"env.foot_heights \(DiffFootHeightsCfg\) has no field 'clp'"):
        resolve_task_cfgs(rough, "shac_cfg_entry_point", ['env.foot_heights={"clp": 1}'])
