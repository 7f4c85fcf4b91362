"""A real taped solver step's scratch set (ANYmal C), for testing a kernel's adjoint on its buffers."""

import numpy as np
import warp as wp

from isaaclab_diffsim.assets.anymal_c import build_anymal_c_model
from isaaclab_diffsim.solver import SolverMoreauGS


def taped_step(worlds: int = 3):
    """(solver, the step's scratch set, the step's input and output states) of one taped step from random joint
    velocities, the feet on the ground."""
    model, _ = build_anymal_c_model(num_worlds=worlds, device="cpu", base_height=0.57, requires_grad=True)
    solver = SolverMoreauGS(model, kappa=300.0)
    s0, s1 = model.state(requires_grad=True), model.state(requires_grad=True)
    rng = np.random.default_rng(3)
    s0.joint_qd.assign(rng.normal(scale=0.5, size=s0.joint_qd.shape).astype(np.float32))
    with wp.Tape():
        solver.step(s0, s1, model.control(), None, 0.005)
    return solver, solver._last, s0, s1
