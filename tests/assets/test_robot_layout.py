"""``RobotLayout``: the typed layout of a model of identical robots, as the env, the deployment bundle and play.py
read it."""

import numpy as np
import pytest
import torch
import warp as wp

from isaaclab_diffsim.assets import ANYMAL_C_DEFAULT_JOINT_POS, RobotLayout, build_anymal_c_model
from isaaclab_diffsim.tasks.direct.locomotion.velocity import DiffVelocityEnv, DiffVelocityEnvCfg


def test_builder_layout_matches_the_model():
    """Every field of the builder's layout agrees with the model it describes, world by world."""
    model, layout = build_anymal_c_model(num_worlds=3, kp=55.0, kd=4.0)
    n, nd = 3, layout.dofs_per_world
    assert (layout.num_worlds, layout.bodies_per_world, layout.coords_per_world, nd) == (3, 13, 19, 18)
    assert layout.joint_names == tuple(f"{leg}_{j}" for leg in ("LF", "RF", "LH", "RH") for j in ("HAA", "HFE", "KFE"))
    legs = slice(6, 18)
    for field, array in (
        ("stiffness", model.joint_target_ke),
        ("damping", model.joint_target_kd),
        ("effort_limit", model.joint_effort_limit),
        ("velocity_limit", model.joint_velocity_limit),
    ):
        per_world = array.numpy().reshape(n, nd)[:, legs]
        assert np.allclose(per_world, np.array(getattr(layout, field))[None]), field
    assert layout.stiffness == (55.0,) * 12 and layout.damping == (4.0,) * 12
    q = model.joint_q.numpy().reshape(n, -1)
    assert np.allclose(q[:, 7:], np.array(layout.default_joint_pos)[None])
    assert layout.default_joint_pos == tuple(ANYMAL_C_DEFAULT_JOINT_POS[j] for j in layout.joint_names)
    shape_body, body_world = model.shape_body.numpy(), model.body_world.numpy()
    assert np.array_equal(shape_body[layout.foot_shapes], layout.foot_bodies)
    assert np.array_equal(body_world[layout.foot_bodies], np.repeat(np.arange(n)[:, None], 4, 1))
    assert np.array_equal(layout.q_start, np.arange(n) * 19) and np.array_equal(layout.qd_start, np.arange(n) * 18)
    assert layout.joint_legs() == [k for k in range(4) for _ in range(3)]


def test_env_reads_the_layout():
    env = DiffVelocityEnv(DiffVelocityEnvCfg(num_envs=2))
    lay = env.layout
    assert torch.equal(env.default_leg, torch.tensor(lay.default_joint_pos))
    assert torch.equal(env.effort_limit, torch.tensor(lay.effort_limit))
    assert torch.equal(env.foot_bodies, torch.as_tensor(lay.foot_bodies).long())
    mu = wp.to_torch(env.model.shape_material_mu)[torch.as_tensor(lay.foot_shapes).reshape(-1)]
    assert torch.all(mu == env.cfg.events.foot_friction_range[0])


def test_inconsistent_layout_is_refused():
    _, lay = build_anymal_c_model(num_worlds=2)
    fields = dict(vars(lay))
    with pytest.raises(ValueError, match="stiffness do not match 12 joints"):
        RobotLayout(**{**fields, "stiffness": (40.0,) * 11})
    with pytest.raises(ValueError, match="foot_bodies do not match"):
        RobotLayout(**{**fields, "foot_bodies": lay.foot_bodies[:1]})
    with pytest.raises(ValueError, match="belongs to none"):
        RobotLayout(**{**fields, "joint_names": ("XX_HAA", *lay.joint_names[1:])}).joint_legs()
