"""Every Warp module of the solver takes its options from solver/kernel_options.py (one declaration)."""

import importlib

import pytest
import warp as wp

from isaaclab_diffsim.solver.kernel_options import OPTIMIZATION_LEVEL

MODULES = ["kernels", "joints", "terrain_frames", "contact_adjoint", "spatial", "support"]


@pytest.mark.parametrize("name", MODULES)
def test_solver_modules_use_the_declared_options(name):
    module = importlib.import_module(f"isaaclab_diffsim.solver.{name}")
    options = wp.get_module(module.__name__).options
    assert options["optimization_level"] == OPTIMIZATION_LEVEL
    assert options["enable_backward"] == (name != "contact_adjoint")  # the contact adjoint is itself an adjoint
