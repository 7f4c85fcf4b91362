"""Bad configuration values are refused at config time with an error naming the field and the value; bad numbers
met at run time name the quantity, the env ids and the step."""

import math

import pytest
import torch

from isaaclab_diffsim.rl.shac import ShacRunnerCfg
from isaaclab_diffsim.tasks.direct.locomotion.velocity import DiffVelocityEnv, DiffVelocityEnvCfg


@pytest.mark.parametrize(
    "field, value",
    [
        ("kp", 0.0),
        ("kp", -40.0),
        ("kd", -1.0),
        ("action_scale", 0.0),
        ("rewards.tracking_std", 0.0),
        ("solver_cfg.kappa", math.inf),
        ("solver_cfg.kappa", -5.0),
        ("min_base_height", 0.7),
        ("min_base_height", -0.1),
        ("events.base_mass_add_range", (5.0, -5.0)),
        ("commands.lin_vel_x", (1.0, -1.0)),
        ("sim_dt", math.nan),
    ],
)
def test_env_cfg_refuses_bad_values(field, value):
    cfg = DiffVelocityEnvCfg()
    *parents, leaf = field.split(".")
    obj = cfg
    for p in parents:
        obj = getattr(obj, p)
    setattr(obj, leaf, value)
    with pytest.raises(ValueError, match=rf"{leaf}.*{value!r}".replace("(", r"\(").replace(")", r"\)")):
        cfg.validate_values()


def test_mass_range_that_makes_the_base_mass_negative_is_refused():
    cfg = DiffVelocityEnvCfg(num_envs=1)
    cfg.events.base_mass_add_range = (-100.0, 0.0)  # the base is about 20 kg
    with pytest.raises(ValueError, match=r"base_mass_add_range \(-100.0, 0.0\)"):
        DiffVelocityEnv(cfg)


def test_negative_kappa_tensor_is_refused_by_the_bridge():
    env = DiffVelocityEnv(DiffVelocityEnvCfg(num_envs=1))
    env.reset()
    for kappa in (torch.tensor([-1.0]), torch.tensor([math.inf])):
        with pytest.raises(ValueError, match="kappa must be one positive finite value"):
            env.sim.step(env.q, env.qd, None, kappa=kappa)


@pytest.mark.parametrize(
    "field, value",
    [
        ("horizon", 0),
        ("save_interval", 0),
        ("algorithm.actor_learning_rate", 0.0),
        ("algorithm.critic_learning_rate", -1e-3),
        ("algorithm.max_actor_grad_norm", 0.0),
        ("algorithm.gamma", 0.0),
        ("algorithm.gamma", 1.5),
        ("algorithm.lam", 0.0),
        ("algorithm.max_grad_norm", math.inf),
        ("algorithm.critic_iterations", 0),
        ("algorithm.target_critic_alpha", 1.5),
        ("algorithm.schedule", "cosine"),
        ("policy.activation", "swish"),
        ("policy.actor_hidden_dims", []),
        ("logger", "wandb"),
    ],
)
def test_shac_cfg_refuses_bad_values(field, value):
    cfg = ShacRunnerCfg()
    *parents, leaf = field.split(".")
    obj = cfg
    for p in parents:
        obj = getattr(obj, p)
    setattr(obj, leaf, value)
    with pytest.raises(ValueError, match=rf"^{field} must be .*got {value!r}".replace("[", r"\[").replace("]", r"\]")):
        cfg.validate_values()
    from isaaclab_diffsim.rl.shac import ShacRunner

    with pytest.raises(ValueError, match=field.replace("[", r"\[")):
        ShacRunner(object(), cfg)  # the runner validates before touching the env


def test_defaults_are_valid():
    DiffVelocityEnvCfg().validate_values()
    ShacRunnerCfg().validate_values()


@pytest.mark.parametrize("what", ["actions", "state"])
def test_env_names_first_nonfinite_quantity_envs_and_step(what):
    env = DiffVelocityEnv(DiffVelocityEnvCfg(num_envs=4))
    env.reset()
    with torch.no_grad():
        env.step(torch.zeros(4, 12))
        before = env.get_state()
        actions = torch.zeros(4, 12)
        if what == "actions":
            actions[2, 5] = float("nan")
            match = r"non-finite actions at step 2 in 1 of 4 envs \[2\]"
        else:
            env.qd = env.qd.clone()
            env.qd[1, 0] = float("inf")  # a blown-up state: the step's result is not finite
            before = env.get_state()
            match = r"non-finite joint_q after the physics step at step 2 in .*\b1\b"
        with pytest.raises(FloatingPointError, match=match):
            env.step(actions)
    after = env.get_state()
    for k in env.STATE_FIELDS:  # nothing of the failed step is kept
        assert torch.equal(before[k], after[k]), k
