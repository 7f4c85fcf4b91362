"""Newton's own solver-generic tests, run with SolverMoreauGS in hard and smoothed contact mode.

The test functions are imported from the installed ``newton.tests`` package and called exactly as Newton's
suite calls them for its own solvers (``solver_fn(model)`` factory, a TestCase for the assertions).
Every case either passes or is listed in UNSUPPORTED with its reason; a listed case must raise the solver's
clear error (it is not skipped), and a listed case that stops raising fails with a request to unlist it.

``python tests/solver/test_newton_conformance.py`` prints the pass / fail / refused table for both modes.
"""

from __future__ import annotations

import importlib
import re
import unittest

import pytest
import warp as wp

from isaaclab_diffsim.solver import SolverMoreauGS

MODES = ("hard", "smoothed")

# case id -> (newton.tests module, test function, extra keyword arguments), as Newton registers them
CASES = {
    "free_fall": ("test_physics_verification", "test_free_fall", {}),
    "projectile_motion": ("test_physics_verification", "test_projectile_motion", {"uses_generalized_coords": True}),
    "momentum_conservation": (
        "test_physics_verification",
        "test_momentum_conservation",
        {"uses_generalized_coords": True},
    ),
    "pendulum_period": ("test_physics_verification", "test_pendulum_period", {"uses_generalized_coords": True}),
    "energy_conservation": (
        "test_physics_verification",
        "test_energy_conservation",
        {"uses_generalized_coords": True},
    ),
    "torque_free_precession": ("test_physics_verification", "test_torque_free_precession", {}),
    "joint_actuation": ("test_physics_verification", "test_joint_actuation", {}),
    "restitution": ("test_physics_verification", "test_restitution", {}),
    "fourbar_linkage": ("test_physics_verification", "test_fourbar_linkage", {}),
    "fourbar_linkage_loop_joint": ("test_physics_verification", "test_fourbar_linkage", {"use_loop_joint": True}),
    "revolute_loop_joint": ("test_physics_verification", "test_revolute_loop_joint", {}),
    "ball_loop_joint": ("test_physics_verification", "test_ball_loop_joint", {}),
    "fixed_loop_joint": ("test_physics_verification", "test_fixed_loop_joint", {}),
    "body_force.floating_body_linear": ("test_body_force", "test_floating_body", {"test_angular": False}),
    "body_force.floating_body_angular": ("test_body_force", "test_floating_body", {"test_angular": True}),
    "body_force.floating_body_joint_f_angular": (
        "test_body_force",
        "test_floating_body",
        {"test_angular": True, "use_control": True},
    ),
    "body_force.force_no_rotation_com_offset": (
        "test_body_force",
        "test_force_no_rotation",
        {"com_offset": (0.2, 0.3, 0.1), "force_direction": (0.0, 1.0, 0.0)},
    ),
    "body_force.combined_force_torque_com_offset": (
        "test_body_force",
        "test_combined_force_torque",
        {"com_offset": (0.2, 0.3, 0.1)},
    ),
    "body_force.combined_force_torque_joint_f_com_offset": (
        "test_body_force",
        "test_combined_force_torque",
        {"com_offset": (0.2, 0.3, 0.1), "use_control": True},
    ),
    "body_force.descendant_free_joint_f": (
        "test_body_force",
        "test_descendant_free_joint_f_world_force_under_rotated_parent",
        {},
    ),
    "body_force.3d_articulation_angular": (
        "test_body_force",
        "test_3d_articulation",
        {"test_angular": True, "up_axis": "Z"},
    ),
    "body_force.3d_articulation_linear": (
        "test_body_force",
        "test_3d_articulation",
        {"test_angular": False, "up_axis": "Y"},
    ),
    "control_force.floating_body_angular": ("test_control_force", "test_floating_body", {"test_angular": True}),
    "control_force.3d_articulation": ("test_control_force", "test_3d_articulation", {}),
    "control_force.child_xform_moment_arm": ("test_control_force", "test_child_xform_moment_arm", {}),
    "joint_damping.revolute_decays_velocity": (
        "test_joint_damping",
        "test_revolute_joint_damping_decays_velocity",
        {"sync_joint_qd": False},
    ),
    "rigid_contact.box_drop": ("test_rigid_contact", "test_box_drop", {}),
    "rigid_contact.shapes_on_plane": ("test_rigid_contact", "test_shapes_on_plane", {}),
}

# The one list of what SolverMoreauGS does not support yet: case id -> (reason, pattern of the solver's error).
# Shrink it as support grows; a listed case that no longer raises fails below.
UNSUPPORTED: dict[str, tuple[str, str]] = {
    "restitution": ("contacts are inelastic; restitution is refused", "shape_material_restitution"),
    "fourbar_linkage": ("equality constraints are not modelled", "equality_constraint"),
    "fourbar_linkage_loop_joint": ("loop-closing joints are not modelled (trees only)", "loop joints"),
    "revolute_loop_joint": ("loop-closing joints are not modelled (trees only)", "loop joints"),
    "ball_loop_joint": ("loop-closing joints are not modelled (trees only)", "loop joints"),
    "fixed_loop_joint": ("loop-closing joints are not modelled (trees only)", "loop joints"),
    "body_force.descendant_free_joint_f": ("kinematic bodies (and FREE joints below the root)", "KINEMATIC"),
}

# Newton's cases that are slow on a CPU (3600 steps of ten bodies, 15 s): run with --runslow
SLOW = {"rigid_contact.shapes_on_plane"}


def _solver_fn(mode: str):
    return lambda model: SolverMoreauGS(model, contact_model=mode)


def run_case(case: str, mode: str, device: str) -> None:
    """Call Newton's test function of ``case`` with SolverMoreauGS in ``mode``; raises what it raises."""
    import newton

    module, function, kwargs = CASES[case]
    fn = getattr(importlib.import_module(f"newton.tests.{module}"), function)
    kwargs = dict(kwargs)
    if "up_axis" in kwargs:
        kwargs["up_axis"] = getattr(newton.Axis, kwargs["up_axis"])
    fn(unittest.TestCase(), wp.get_device(device), solver_fn=_solver_fn(mode), **kwargs)


def _params():
    out = []
    for case in CASES:
        for mode in MODES:
            marks = [pytest.mark.slow] if case in SLOW else []
            out.append(pytest.param(case, mode, id=f"{case}-{mode}", marks=marks))
    return out


@pytest.mark.parametrize("case,mode", _params())
def test_newton_case(case, mode):
    """A supported case passes Newton's assertions; an unsupported one raises the solver's clear error."""
    if case not in UNSUPPORTED:
        run_case(case, mode, "cpu")
        return
    reason, pattern = UNSUPPORTED[case]
    try:
        run_case(case, mode, "cpu")
    except (ValueError, NotImplementedError) as err:
        assert re.search(pattern, str(err)), f"{case}: expected the error for {reason!r}, got {err!r}"
        assert "SolverMoreauGS" in str(err), f"{case}: the error does not name the solver: {err!r}"
        return
    pytest.fail(f"{case} ({mode}) now runs without the unsupported error: remove it from UNSUPPORTED")


def test_unsupported_list_names_known_cases():
    assert set(UNSUPPORTED) <= set(CASES)
    assert set(SLOW) <= set(CASES)


def table(device: str = "cpu") -> list[tuple[str, str, str]]:
    """(case, mode, outcome) for every case and mode, ignoring UNSUPPORTED: pass, FAIL: ... (an assertion of
    Newton's), refused: ... (the solver's error), ERROR: ... (anything else)."""
    rows = []
    for case in CASES:
        for mode in MODES:
            try:
                run_case(case, mode, device)
                outcome = "pass"
            except (ValueError, NotImplementedError) as err:
                outcome = "refused: " + " ".join(str(err).split())[:150]
            except AssertionError as err:
                outcome = f"FAIL: {str(err).splitlines()[0][:110]}"
            except Exception as err:  # noqa: BLE001 - the table reports whatever a case raises
                outcome = f"ERROR: {type(err).__name__}: {str(err).splitlines()[0][:100]}"
            rows.append((case, mode, outcome))
    return rows


if __name__ == "__main__":
    import sys

    for case, mode, outcome in table(sys.argv[1] if len(sys.argv) > 1 else "cpu"):
        print(f"| {case} | {mode} | {outcome} |", flush=True)
