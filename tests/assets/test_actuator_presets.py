"""ANYdrive presets of the differentiable task: what reaches the model, the armature's dynamics, the friction hold."""

import numpy as np
import pytest
import torch
import warp as wp

from isaaclab_diffsim.assets.anydrive import ACTUATOR_PRESETS, per_joint
from isaaclab_diffsim.tasks.direct.locomotion.velocity import DiffVelocityEnv, DiffVelocityEnvCfg

pytestmark = pytest.mark.usefixtures("one_torch_thread")
ND = 18


def make_env(preset: str, **kw) -> DiffVelocityEnv:
    cfg = DiffVelocityEnvCfg(num_envs=2, actuator_preset=preset)
    cfg.events.push_velocity = 0.0
    cfg.observations.enable_corruption = False
    for k, v in kw.items():
        setattr(cfg, k, v)
    return DiffVelocityEnv(cfg)


def test_per_joint_matches_regexes_once_and_refuses_unused_or_ambiguous_keys():
    names = ("LF_HAA", "LF_HFE", "RH_KFE")
    assert per_joint({".*HAA": 1.0, ".*_HFE": 2.0}, names, "x") == [1.0, 2.0, 0.0]
    with pytest.raises(ValueError, match="more than one"):
        per_joint({".*": 1.0, "LF_.*": 2.0}, names, "x")
    with pytest.raises(ValueError, match="match no joint"):
        per_joint({"XX_HAA": 1.0}, names, "x")


def test_unknown_preset_refused():
    with pytest.raises(ValueError, match="actuator_preset"):
        DiffVelocityEnvCfg(actuator_preset="anydrive_9").validate_values()


def test_sysid_preset_reaches_the_model_and_the_layout():
    env = make_env("anydrive_sysid")
    preset = ACTUATOR_PRESETS["anydrive_sysid"]
    names = env.layout.joint_names
    kd = np.array(per_joint(preset.kd, names, "kd"), dtype=np.float32)
    friction = np.array(per_joint(preset.friction, names, "friction"), dtype=np.float32)
    m = env.model
    for array, want in (
        (m.joint_target_ke, np.full(12, 85.0, np.float32)),
        (m.joint_target_kd, kd),
        (m.joint_friction, friction),
        (m.joint_armature, np.full(12, 0.09, np.float32)),
    ):
        got = array.numpy().reshape(2, ND)[:, 6:]
        assert np.array_equal(got, np.broadcast_to(want, got.shape)), array
    assert env.layout.damping == tuple(float(x) for x in per_joint(preset.kd, names, "kd"))
    assert env.layout.damping[names.index("RH_HFE")] == pytest.approx(5.0738)
    assert torch.allclose(env.kd_leg, torch.tensor(kd))


def test_armature_slows_a_joint_by_its_inertia():
    """Same torque, same state, robot in the air: a torque tau on one joint accelerates it by tau / I_eff, with I_eff
    the Schur complement of the free-floating mass matrix at that joint; armature a on that joint alone adds exactly a
    to H_jj and so to I_eff."""
    accel = {}
    for preset in ("anydrive_simple", "anydrive_sysid_armature_only"):
        env = make_env("anydrive_simple", init_base_height=3.0)
        if preset.endswith("armature_only"):
            wp.to_torch(env.model.joint_armature, requires_grad=False).view(2, ND)[:, 6 + 1] = 0.09  # LF_HFE only
            env.sim.notify_model_changed(0)
        env.reset(seed=0)
        q, qd = env.sim.default_state()
        q[:, 2] = 3.0
        f = torch.zeros(2, ND)
        f[:, 6 + 1] = 10.0  # 10 N m on LF_HFE, PD holding the others at the default pose
        with torch.no_grad():
            out = env.sim.step(
                q, qd, targets=torch.cat([q.new_zeros(2, 7), q[:, 7:]], 1), joint_f=f, substeps=1, dt=1e-4
            )
        accel[preset] = float(out[1][0, 7] - qd[0, 7]) / 1e-4
    a0, a1 = accel["anydrive_simple"], accel["anydrive_sysid_armature_only"]
    # a = tau / I: the effective inertia grows by exactly the armature (PD and coupling are the same in both)
    inertia0 = 10.0 / a0
    assert 10.0 / a1 == pytest.approx(inertia0 + 0.09, rel=1e-3)
