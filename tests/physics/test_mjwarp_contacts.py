"""The ``newton_mjwarp`` preset: MJWarp's contact buffer sized for the ANYmal scene; an overflow raises."""

import dataclasses

import newton
import pytest
import warp as wp

pytest.importorskip("isaaclab_newton")
hydra = pytest.importorskip("isaaclab_tasks.utils.hydra")

from isaaclab.sim import SimulationCfg, build_simulation_context  # noqa: E402
from isaaclab_newton.physics import NewtonManager  # noqa: E402
from isaaclab_newton.physics.newton_manager_cfg import NewtonBuilderCfg  # noqa: E402

from isaaclab_diffsim.assets import add_anymal_c  # noqa: E402
from isaaclab_diffsim.physics.presets import DiffSimPhysicsCfg  # noqa: E402


def _run_anymal(device, steps, **solver_overrides):
    """Two ANYmal C standing on the ground under the ``newton_mjwarp`` preset; returns (Newton, MJWarp) buffers."""
    physics = hydra.resolve_presets(DiffSimPhysicsCfg(), selected=("newton_mjwarp",))
    physics.solver_cfg = dataclasses.replace(physics.solver_cfg, **solver_overrides)
    physics.use_cuda_graph = False
    with build_simulation_context(sim_cfg=SimulationCfg(dt=0.005, device=device, physics=physics)) as sim:
        builder = sim.get_or_create_backend(NewtonBuilderCfg(physics_cfg=sim.cfg.physics))
        robot = newton.ModelBuilder()
        add_anymal_c(robot, wp.transform((0.0, 0.0, 0.6), wp.quat_identity()), kp=80.0, kd=5.0)
        builder.replicate(robot, 2, spacing=(2.0, 0.0, 0.0))
        builder.add_ground_plane()
        sim.reset()
        assert sim.physics_manager.__name__ == "NewtonCheckedMJWarpManager"
        for _ in range(steps):
            sim.step(render=False)
        contacts = NewtonManager._contacts
        return int(contacts.rigid_contact_count.numpy()[0]), contacts.rigid_contact_max, NewtonManager._solver


def test_preset_buffer_holds_every_contact_of_the_anymal_scene():
    found, budget, solver = _run_anymal("cpu", 60)
    assert found >= 8  # both robots stand on their four feet
    assert solver.mjw_data.naconmax >= budget >= found


@pytest.mark.parametrize("buffers, named", [({"nconmax": 2, "njmax": 60}, "nconmax"), ({"njmax": 6}, "njmax")])
def test_buffer_overflow_raises_naming_the_field(buffers, named):
    with pytest.raises(RuntimeError, match=f"MJWarp dropped .*{named}"):
        _run_anymal("cpu", 60, **buffers)


@pytest.mark.parametrize(
    "task",
    ["DiffSim-Velocity-Flat-AnymalB", "DiffSim-Velocity-Flat-Go2", "DiffSim-Velocity-Rough-AnymalC"],
)
def test_every_manager_based_task_sizes_and_checks_its_mjwarp_peer(task):
    """The tasks that keep Isaac Lab's own ``newton_mjwarp`` settings (its robot's or its rough terrain's) run them
    with the checked manager and buffers sized for the scene; the other settings stay Isaac Lab's."""
    from isaaclab_tasks.utils.parse_cfg import load_cfg_from_registry

    import isaaclab_diffsim.tasks  # noqa: F401
    from isaaclab_diffsim.physics import CheckedMJWarpSolverCfg

    peer = load_cfg_from_registry(task, "env_cfg_entry_point").sim.physics.newton_mjwarp
    assert isinstance(peer.solver_cfg, CheckedMJWarpSolverCfg)
    assert peer.solver_cfg.nconmax is None and peer.solver_cfg.njmax is None
    assert peer.solver_cfg.class_type.endswith("NewtonCheckedMJWarpManager")
    if "Rough" in task:  # Isaac Lab's rough solver settings, not the flat preset's
        from isaaclab_tasks.core.velocity.velocity_env_cfg import RoughPhysicsCfg

        isaac = RoughPhysicsCfg().newton_mjwarp.solver_cfg
        assert (peer.solver_cfg.iterations, peer.solver_cfg.cone) == (isaac.iterations, isaac.cone)


def test_checked_mjwarp_refuses_another_solver():
    from isaaclab_diffsim.physics import checked_mjwarp

    with pytest.raises(TypeError, match="MuJoCo Warp"):
        checked_mjwarp(DiffSimPhysicsCfg().diffsim_hard)
