"""Variants of a replayed horizon with one physics factor switched: friction, Gauss-Seidel sweeps, kappa, margin,
joint-limit springs, the actuator envelope, the contact adjoint, the critic's value gradient."""

from __future__ import annotations

import contextlib
import inspect
from dataclasses import dataclass, field

import warp as wp

from ..solver import SolverMoreauGS

SOLVER_FIELDS = tuple(p for p in inspect.signature(SolverMoreauGS.__init__).parameters if p not in ("self", "model"))


class VariantUnavailable(RuntimeError):
    """The solver in use does not have the argument a variant changes."""


@dataclass
class Variant:
    """One factor switched for a run: SolverMoreauGS arguments (values, or functions of the current value), model
    arrays filled with a constant, SHAC algorithm cfg fields."""

    key: str
    label: str
    solver: dict = field(default_factory=dict)
    model: dict = field(default_factory=dict)
    agent: dict = field(default_factory=dict)


VARIANTS = [
    Variant("baseline", "baseline"),
    Variant("mu0", "friction off (mu 0)", model={"shape_material_mu": 0.0}),
    Variant("sweeps4", "4 GS sweeps", solver={"iterations": 4}),
    Variant("sweeps20", "20 GS sweeps", solver={"iterations": 20}),
    Variant("sweeps60", "60 GS sweeps", solver={"iterations": 60}),
    Variant("kappa_x0.3", "kappa x 0.3", solver={"kappa": lambda k: 0.3 * k}),
    Variant("kappa_x3", "kappa x 3", solver={"kappa": lambda k: 3.0 * k}),
    Variant("margin0", "margin 0", solver={"margin": 0.0}),
    Variant("limits_off", "no joint-limit springs", model={"joint_limit_ke": 0.0}),
    Variant("envelope_off", "no actuator envelope", solver={"actuator_saturation": 0.0}),
    Variant("implicit", "implicit contact adjoint", solver={"adjoint": "implicit"}),
    Variant("unrolled", "unrolled contact adjoint", solver={"adjoint": "unrolled"}),
    Variant("no_value_grad", "no value gradient", agent={"value_gradient": False}),
]


def solver_kwargs(solver) -> dict:
    """The constructor arguments of a SolverMoreauGS instance (those it has)."""
    return {k: (solver.kappa if k == "kappa" else getattr(solver, k)) for k in SOLVER_FIELDS if hasattr(solver, k)}


@contextlib.contextmanager
def applied(runner, variant: Variant, base: dict | None = None):
    """Run ``runner``'s env (an env with ``sim`` and ``model``) with ``variant`` on top of the solver arguments
    ``base`` (e.g. ``{"iterations": 60}``); solver, model arrays and algorithm cfg are put back afterwards.
    Raises :class:`VariantUnavailable` if the solver has no such argument."""
    env, alg_cfg = runner.env, runner.alg.cfg
    sim, model = env.sim, env.model
    saved_solver, saved_arrays, saved_agent = sim.solver, {}, {}
    changes = {**(base or {}), **variant.solver}
    accepted = inspect.signature(SolverMoreauGS.__init__).parameters
    missing = [k for k in changes if k not in accepted]
    if missing:
        raise VariantUnavailable(f"SolverMoreauGS has no argument {missing[0]!r}")
    try:
        if changes:
            kwargs = solver_kwargs(saved_solver)
            for k, v in changes.items():
                kwargs[k] = v(kwargs[k]) if callable(v) else v
            sim.solver = SolverMoreauGS(model, **kwargs)
        for name, value in variant.model.items():
            view = wp.to_torch(getattr(model, name), requires_grad=False)
            saved_arrays[name] = view.clone()
            view.fill_(value)  # in place: the solver's layout refers to the model's arrays
        for name, value in variant.agent.items():
            saved_agent[name] = getattr(alg_cfg, name)
            setattr(alg_cfg, name, value)
        yield
    finally:
        for name, value in saved_agent.items():
            setattr(alg_cfg, name, value)
        for name, values in saved_arrays.items():
            wp.to_torch(getattr(model, name), requires_grad=False).copy_(values)
        sim.solver = saved_solver
