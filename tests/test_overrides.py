"""Isaac Lab-style overrides for train.py / play.py: resolved by Isaac Lab's hydra helper, unknown keys and values
of the wrong type refused with the override named."""

import pytest

from isaaclab_diffsim.utils.cli import check_overrides, resolve_task_cfgs

TASK = "DiffSim-Velocity-Flat-AnymalC-Direct"


def test_overrides_reach_both_configs_with_their_types():
    env, agent = resolve_task_cfgs(TASK, "shac_cfg_entry_point",
                                   ["env.kp=60", "agent.horizon=8", "env.commands.lin_vel_x=(0.0,1.0)",
                                    "env.solver_cfg.contact_model=hard", "agent.algorithm.gamma=0.95",
                                    "agent.policy.actor_hidden_dims=[16]"])  # fmt: skip
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
