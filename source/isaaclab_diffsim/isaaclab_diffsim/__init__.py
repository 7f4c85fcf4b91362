"""Differentiable rigid-body physics backend for Isaac Lab, written in Warp.

Moreau midpoint time stepping with a projected Gauss-Seidel contact solver whose impulses can be
smoothed (sigmoid-scaled by signed distance). Submodules are imported on demand, e.g.
``from isaaclab_diffsim.solver import SolverMoreauGS``; importing this package stays light.
"""

__version__ = "0.1.0"
