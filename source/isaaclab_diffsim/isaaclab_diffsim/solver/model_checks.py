"""The Newton model fields SolverMoreauGS does not honour: each one, when set away from its default, refuses the model.

UNHONOURED is the one list (the solver's docstring prints it). Each entry names the field, says why it is not
honoured and what to do, and has a check returning a description of the offending entries (None when the model
is fine). Fields the solver honours are not listed; geometry and joint types it cannot handle are refused while
the layout is built (topology.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import newton
import numpy as np

COLLIDE_FLAG = int(newton.ShapeFlags.COLLIDE_SHAPES)
HYDROELASTIC_FLAG = int(newton.ShapeFlags.HYDROELASTIC)
KINEMATIC_FLAG = int(newton.BodyFlags.KINEMATIC)
BALL = int(newton.JointType.BALL)
FREE = int(newton.JointType.FREE)
TARGET_NONE = int(newton.JointTargetMode.NONE)


@dataclass(frozen=True)
class Unhonoured:
    field: str
    remedy: str
    check: Callable[[newton.Model], str | None]


def _colliding(model: newton.Model) -> np.ndarray:
    return (model.shape_flags.numpy() & COLLIDE_FLAG) != 0


def _shapes_where(model: newton.Model, mask: np.ndarray, values: np.ndarray | None = None) -> str | None:
    idx = np.nonzero(mask)[0]
    if idx.size == 0:
        return None
    shown = idx[:5].tolist()
    if values is not None:
        return f"shapes {shown} (values {np.round(values[idx[:5]], 6).tolist()})" + (" ..." if idx.size > 5 else "")
    return f"shapes {shown}" + (" ..." if idx.size > 5 else "")


def _shape_material(name: str, *accepted: float) -> Callable[[newton.Model], str | None]:
    """Colliding shapes whose ``name`` is none of the ``accepted`` values."""

    def check(model: newton.Model) -> str | None:
        values = getattr(model, name).numpy()
        ok = np.zeros(values.shape, dtype=bool)
        for a in accepted:
            ok |= np.isclose(values, a, rtol=1e-6, atol=0.0)
        return _shapes_where(model, _colliding(model) & ~ok, values)

    return check


def _count(attr: str) -> Callable[[newton.Model], str | None]:
    def check(model: newton.Model) -> str | None:
        obj = model
        for part in attr.split("."):
            obj = getattr(obj, part, None)
        n = int(obj or 0)
        return f"{n} present" if n > 0 else None

    return check


def _hydroelastic(model: newton.Model) -> str | None:
    return _shapes_where(model, _colliding(model) & ((model.shape_flags.numpy() & HYDROELASTIC_FLAG) != 0))


def _loop_joints(model: newton.Model) -> str | None:
    if model.articulation_end is None:
        return None
    start = model.articulation_start.numpy()
    end = model.articulation_end.numpy()
    loops = [(a, int(end[a]), int(start[a + 1])) for a in range(model.articulation_count) if end[a] < start[a + 1]]
    if not loops:
        return None
    return "joints " + ", ".join(f"{e}..{s - 1} of articulation {a}" for a, e, s in loops[:5])


def _disabled_joints(model: newton.Model) -> str | None:
    if model.joint_enabled is None:
        return None
    idx = np.nonzero(~model.joint_enabled.numpy().astype(bool))[0]
    return f"joints {idx[:5].tolist()}" if idx.size else None


def _kinematic_bodies(model: newton.Model) -> str | None:
    if model.body_flags is None:
        return None
    idx = np.nonzero((model.body_flags.numpy() & KINEMATIC_FLAG) != 0)[0]
    return f"bodies {idx[:5].tolist()}" if idx.size else None


def _twist_limits(model: newton.Model) -> str | None:
    parts = []
    for name in ("joint_twist_lower", "joint_twist_upper"):
        arr = getattr(model, name, None)
        if arr is not None and arr.shape[0] > 0:
            v = arr.numpy()
            bad = np.nonzero(np.isfinite(v) & (np.abs(v) < 1.0e9))[0]
            if bad.size:
                parts.append(f"{name} on joints {bad[:5].tolist()}")
    return "; ".join(parts) or None


def _ball_drives_and_limits(model: newton.Model) -> str | None:
    jt = model.joint_type.numpy()
    qd_start = model.joint_qd_start.numpy()
    ke = model.joint_target_ke.numpy()
    kd = model.joint_target_kd.numpy()
    lo, hi = model.joint_limit_lower.numpy(), model.joint_limit_upper.numpy()
    lke = model.joint_limit_ke.numpy()
    bad = []
    for j in np.nonzero(jt == BALL)[0]:
        d = slice(qd_start[j], qd_start[j + 1])
        limited = ((np.abs(lo[d]) < 1.0e9) | (np.abs(hi[d]) < 1.0e9)) & (lke[d] > 0.0)
        if np.any(ke[d] != 0.0) or np.any(kd[d] != 0.0) or np.any(limited):
            bad.append(int(j))
    return f"BALL joints {bad[:5]}" if bad else None


def _gains_without_mode(model: newton.Model) -> str | None:
    mode = model.joint_target_mode.numpy()
    gains = (model.joint_target_ke.numpy() != 0.0) | (model.joint_target_kd.numpy() != 0.0)
    idx = np.nonzero((mode == TARGET_NONE) & gains)[0]
    return f"dofs {idx[:5].tolist()}" if idx.size else None


def _free_joint_drives(model: newton.Model) -> str | None:
    jt = model.joint_type.numpy()
    qd_start = model.joint_qd_start.numpy()
    mode = model.joint_target_mode.numpy()
    bad = [int(j) for j in np.nonzero(jt == FREE)[0] if np.any(mode[qd_start[j] : qd_start[j + 1]] != TARGET_NONE)]
    return f"FREE joints {bad[:5]}" if bad else None


_DEFAULT_SHAPE = newton.ModelBuilder.ShapeConfig()

UNHONOURED: tuple[Unhonoured, ...] = (
    Unhonoured(
        "shape_material_restitution",
        "contacts are inelastic (velocity-level Coulomb contact); set ShapeConfig.restitution = 0",
        _shape_material("shape_material_restitution", 0.0),
    ),
    Unhonoured(
        "shape_material_mu_torsional",
        "torsional friction is not modelled (point contacts: it is 0); set ShapeConfig.mu_torsional to 0 (Newton's "
        f"default {_DEFAULT_SHAPE.mu_torsional} is accepted and has no effect)",
        _shape_material("shape_material_mu_torsional", 0.0, _DEFAULT_SHAPE.mu_torsional),
    ),
    Unhonoured(
        "shape_material_mu_rolling",
        "rolling friction is not modelled (it is 0); set ShapeConfig.mu_rolling to 0 (Newton's default "
        f"{_DEFAULT_SHAPE.mu_rolling} is accepted and has no effect)",
        _shape_material("shape_material_mu_rolling", 0.0, _DEFAULT_SHAPE.mu_rolling),
    ),
    Unhonoured(
        "shape_flags (HYDROELASTIC)",
        "hydroelastic contact is not modelled; clear the HYDROELASTIC flag",
        _hydroelastic,
    ),
    Unhonoured(
        "mujoco.equality_constraint_count",
        "equality constraints are not modelled; remove them or use SolverMuJoCo",
        _count("mujoco.equality_constraint_count"),
    ),
    Unhonoured(
        "constraint_mimic_count",
        "mimic constraints are not modelled; remove them or use SolverMuJoCo",
        _count("constraint_mimic_count"),
    ),
    Unhonoured(
        "articulation_end (loop joints)",
        "loop-closing joints are not modelled (trees only); remove them or use SolverMuJoCo",
        _loop_joints,
    ),
    Unhonoured(
        "joint_enabled",
        "every joint is simulated; remove disabled joints from the model",
        _disabled_joints,
    ),
    Unhonoured(
        "joint_twist_lower / joint_twist_upper",
        "twist limits are not modelled; leave them unset",
        _twist_limits,
    ),
    Unhonoured(
        "joint_target_ke / joint_target_kd / joint_limit_* on BALL joints",
        "BALL joints take no drives or limits; use a D6 joint with three angular axes",
        _ball_drives_and_limits,
    ),
    Unhonoured(
        "joint_target_mode (FREE joints)",
        "FREE joints take no drives; set their target mode to NONE",
        _free_joint_drives,
    ),
    Unhonoured(
        "joint_target_ke / joint_target_kd with joint_target_mode NONE",
        "a dof with target mode NONE has no drive; set a target mode or zero the gains",
        _gains_without_mode,
    ),
    Unhonoured(
        "body_flags (KINEMATIC)",
        "kinematic bodies are not supported; make them dynamic or static",
        _kinematic_bodies,
    ),
    Unhonoured("particle_count", "particles are not simulated (rigid bodies only)", _count("particle_count")),
    Unhonoured("spring_count", "springs are not simulated (rigid bodies only)", _count("spring_count")),
    Unhonoured("tri_count", "cloth triangles are not simulated (rigid bodies only)", _count("tri_count")),
    Unhonoured("tet_count", "soft tetrahedra are not simulated (rigid bodies only)", _count("tet_count")),
    Unhonoured("muscle_count", "muscles are not simulated", _count("muscle_count")),
)


def unhonoured_doc() -> str:
    """One line per UNHONOURED entry, for the solver's docstring."""
    return "\n".join(f"    - {u.field}: {u.remedy}" for u in UNHONOURED)


def check_model(model: newton.Model) -> None:
    """Raise ValueError naming every field of ``model`` that SolverMoreauGS would not honour."""
    problems = []
    for u in UNHONOURED:
        found = u.check(model)
        if found is not None:
            problems.append(f"{u.field} is set ({found}): {u.remedy}")
    if problems:
        raise ValueError("SolverMoreauGS does not honour these model fields:\n  " + "\n  ".join(problems))
