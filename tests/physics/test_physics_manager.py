"""Physics layer: DiffSimSolverCfg validation, NewtonDiffSimManager inside an Isaac Lab SimulationContext
(solver selection, contact forces for contact sensors, model changes reaching the solver), presets."""

import inspect
import subprocess
import sys

import newton
import numpy as np
import pytest
import warp as wp

pytest.importorskip("isaaclab_newton")

from isaaclab.sim import SimulationCfg, build_simulation_context  # noqa: E402
from isaaclab_newton.physics import NewtonCfg, NewtonManager  # noqa: E402
from isaaclab_newton.physics.newton_manager_cfg import NewtonBuilderCfg  # noqa: E402

from isaaclab_diffsim.assets import add_anymal_c  # noqa: E402
from isaaclab_diffsim.physics import DiffSimSolverCfg  # noqa: E402
from isaaclab_diffsim.solver import SolverMoreauGS  # noqa: E402


@pytest.mark.parametrize(
    "kwargs",
    [
        {"contact_model": "sticky"},
        {"kappa": 0.0},
        {"margin": -0.1},
        {"iterations": 0},
        {"stabilization": 2.0},
        {"ke": -1.0},
        {"kd": float("nan")},
        {"kf": -1.0},
        {"penalty_preset": "dflex"},
        {"penalty_ke": -1.0},
    ],
)
def test_cfg_rejects_invalid(kwargs):
    with pytest.raises(ValueError, match="DiffSimSolverCfg"):
        DiffSimSolverCfg(**kwargs)
    cfg = DiffSimSolverCfg()  # a CLI override skips __post_init__; the manager re-validates
    for key, value in kwargs.items():
        setattr(cfg, key, value)
    with pytest.raises(ValueError):
        cfg.validate_values()


def test_cfg_declares_every_solver_argument_with_the_solvers_default():
    params = inspect.signature(SolverMoreauGS.__init__).parameters
    arguments = set(params) - {"self", "model"}
    cfg = DiffSimSolverCfg()
    assert set(cfg.solver_kwargs()) == arguments
    for name in arguments:
        assert getattr(cfg, name) == params[name].default, name


@pytest.mark.integration
def test_solver_imports_neither_isaaclab_nor_torch():
    code = (
        "import sys, isaaclab_diffsim.solver; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('isaaclab', 'torch', 'isaaclab_newton') "
        "or m.startswith('isaaclab_diffsim.physics')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]", out


def test_cfg_selects_manager():
    cfg = NewtonCfg(solver_cfg=DiffSimSolverCfg(contact_model="hard", kappa=500.0))
    assert cfg.class_type.endswith("diffsim_manager:NewtonDiffSimManager")


@pytest.mark.parametrize("contact_model", ["smoothed", "hard", "soft"])
def test_manager_steps_reports_contacts_and_applies_mass_changes(device, contact_model):
    worlds, steps = 2, 300
    sim_cfg = SimulationCfg(
        dt=0.005, device=device, physics=NewtonCfg(solver_cfg=DiffSimSolverCfg(contact_model=contact_model))
    )
    with build_simulation_context(sim_cfg=sim_cfg) as sim:
        assert sim.physics_manager.__name__ == "NewtonDiffSimManager"
        builder = sim.get_or_create_backend(NewtonBuilderCfg(physics_cfg=sim.cfg.physics))
        robot = newton.ModelBuilder()
        add_anymal_c(robot, wp.transform((0.0, 0.0, 0.62), wp.quat_identity()), kp=150.0, kd=5.0)
        builder.replicate(robot, worlds, spacing=(2.0, 0.0, 0.0))
        builder.add_ground_plane()
        sim.reset()
        assert isinstance(NewtonManager._solver, SolverMoreauGS)
        assert NewtonManager._solver.contact_model == contact_model
        assert not NewtonManager._needs_collision_pipeline and NewtonManager._contacts is not None
        # Added after solver start, as through the base class: the manager allocates contacts.force on the next step.
        sensor = NewtonManager._newton_contact_sensors[NewtonManager.add_contact_sensor(body_names_expr=".*SHANK")]

        def feet_fz():
            for _ in range(steps):
                sim.step(render=False)
            return sensor.total_force.numpy().reshape(worlds, 4, 3)[..., 2].sum(1)

        model = NewtonManager.backend.model
        weight = model.body_mass.numpy().sum() / worlds * 9.81
        fz = feet_fz()
        assert np.all(np.isfinite(fz))
        tol = 0.01 if contact_model != "soft" else 0.02  # soft: the damped spring still oscillates slightly
        np.testing.assert_allclose(fz, weight, rtol=tol)

        # What Isaac Lab's mass events do: write the model array in place, then flag the change.
        mass = model.body_mass.numpy()
        mass[0] += 10.0  # world 0's base
        model.body_mass.assign(mass)
        NewtonManager.add_model_change(newton.ModelFlags.BODY_INERTIAL_PROPERTIES)
        fz2 = feet_fz()
        np.testing.assert_allclose(fz2[0], weight + 98.1, rtol=tol)
        np.testing.assert_allclose(fz2[1], weight, rtol=tol)


def test_presets_resolve():
    hydra = pytest.importorskip("isaaclab_tasks.utils.hydra")
    from isaaclab_diffsim.physics.presets import DiffSimPhysicsCfg

    for name, model in [(None, "smoothed"), ("diffsim_hard", "hard"), ("diffsim_soft", "soft")]:
        physics = hydra.resolve_presets(DiffSimPhysicsCfg(), selected=(name,) if name else ())
        assert isinstance(physics, NewtonCfg) and physics.solver_cfg.contact_model == model
    mjwarp = hydra.resolve_presets(DiffSimPhysicsCfg(), selected=("newton_mjwarp",))
    assert mjwarp.class_type.endswith("NewtonCheckedMJWarpManager")
