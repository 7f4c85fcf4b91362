"""ANYmal C for Newton builders, from the URDF shipped in the ``example-robot-data`` package.

Only the URDF's inertials count (shape density 0), and only the four foot spheres collide.
Imports newton, warp, numpy and the standard library only.
"""

from __future__ import annotations

import warnings

import newton
import numpy as np
import warp as wp

from .anymal_c_urdf import LEGS, anymal_c_urdf_path, urdf_joint_limits
from .robot_layout import RobotLayout

ANYMAL_C_BASE_HEIGHT = 0.6
"""Initial base height [m] (Isaac Lab's ANYmal init pos z)."""

ANYMAL_C_DEFAULT_JOINT_POS: dict[str, float] = {
    **{f"{leg}_HAA": 0.0 for leg in LEGS},
    "LF_HFE": 0.4,
    "RF_HFE": 0.4,
    "LH_HFE": -0.4,
    "RH_HFE": -0.4,
    "LF_KFE": -0.8,
    "RF_KFE": -0.8,
    "LH_KFE": 0.8,
    "RH_KFE": 0.8,
}
"""Isaac Lab's ANYmal standing pose [rad], by URDF joint name."""


def _last_index(labels, name: str) -> int:
    """Highest index whose label is ``name`` or ends with ``/name`` (the robot just added)."""
    for i in range(len(labels) - 1, -1, -1):
        if labels[i] == name or labels[i].endswith("/" + name):
            return i
    raise KeyError(name)


def add_anymal_c(
    builder: newton.ModelBuilder, xform=None, *, kp=40.0, kd=5.0, foot_radius=None, source: str = "urdf"
) -> dict:
    """Add one floating-base ANYmal C to ``builder`` at ``xform`` (default: ANYMAL_C_BASE_HEIGHT up).

    Fixed joints are collapsed (13 bodies, 18 dofs, 19 coordinates); note Newton's collapse acts on
    the whole builder. Sets the default pose as joint_q and joint_target_q, PD gains kp/kd, URDF
    velocity limits, and makes every shape but the four foot spheres (mu 1) non-colliding.
    ``foot_radius`` overrides the URDF's 0.03 m sphere radius (same centre).
    ``source="usd"`` imports the cached USD that Isaac Lab scenes spawn (``anymal_c_usd.anymal_c_usd_path``,
    converted from the same URDF) instead of the URDF; the result has the same bodies, joints and masses.
    Returns indices (absolute in ``builder``), feet ordered LF, RF, LH, RH.
    """
    path = anymal_c_urdf_path()
    if xform is None:
        xform = wp.transform((0.0, 0.0, ANYMAL_C_BASE_HEIGHT), wp.quat_identity())
    shape_start = builder.shape_count
    if source not in ("urdf", "usd"):
        raise ValueError(f"add_anymal_c: source must be 'urdf' or 'usd', got {source!r}")
    if source == "urdf":
        old_density = builder.default_shape_cfg.density
        builder.default_shape_cfg.density = 0.0  # the URDF's base link has colliders but no inertial
        try:
            with warnings.catch_warnings():
                # Visual meshes use package:// URIs that Newton cannot resolve here; visuals are skipped.
                warnings.filterwarnings("ignore", message=r".*could not resolve (URI|package)")
                builder.add_urdf(
                    str(path),
                    xform=xform,
                    floating=True,
                    collapse_fixed_joints=True,
                    force_show_colliders=True,
                )
        finally:
            builder.default_shape_cfg.density = old_density
    else:
        _add_anymal_c_usd(builder, xform)

    base = _last_index(builder.body_label, "base")
    feet = [_last_index(builder.body_label, f"{leg}_SHANK") for leg in LEGS]  # *_FOOT is merged here
    root_joint = next(j for j in range(builder.joint_count - 1, -1, -1) if builder.joint_child[j] == base)
    q0, qd0 = builder.joint_q_start[root_joint], builder.joint_qd_start[root_joint]

    # Leg joints in Newton's dof order; set pose, target, gains, drive mode, velocity and effort limits.
    vel_limits, effort_limits = urdf_joint_limits("velocity", path), urdf_joint_limits("effort", path)
    leg_joints = sorted(
        (j for j in range(root_joint + 1, builder.joint_count) if builder.joint_type[j] == newton.JointType.REVOLUTE),
        key=lambda j: builder.joint_qd_start[j],
    )
    names = [builder.joint_label[j].rsplit("/", 1)[-1] for j in leg_joints]
    for j, name in zip(leg_joints, names, strict=True):
        qi, di = builder.joint_q_start[j], builder.joint_qd_start[j]
        builder.joint_q[qi] = builder.joint_target_q[qi] = ANYMAL_C_DEFAULT_JOINT_POS[name]
        builder.joint_target_ke[di] = kp
        builder.joint_target_kd[di] = kd
        builder.joint_velocity_limit[di] = vel_limits.get(name, builder.joint_velocity_limit[di])
        builder.joint_effort_limit[di] = effort_limits.get(name, builder.joint_effort_limit[di])
        builder.joint_target_mode[di] = int(newton.JointTargetMode.POSITION)  # a USD without drives imports NONE

    # Collision: only the foot spheres.
    collide = int(newton.ShapeFlags.COLLIDE_SHAPES | newton.ShapeFlags.COLLIDE_PARTICLES)
    sphere = int(newton.GeoType.SPHERE)
    foot_shapes = []
    for body in feet:
        s = max(
            i
            for i in range(shape_start, builder.shape_count)
            if builder.shape_body[i] == body and builder.shape_type[i] == sphere
        )
        foot_shapes.append(s)
    for s in range(shape_start, builder.shape_count):
        if s not in foot_shapes:
            builder.shape_flags[s] &= ~collide
    for s in foot_shapes:
        builder.shape_material_mu[s] = 1.0
        if foot_radius is not None:
            builder.shape_scale[s] = wp.vec3(float(foot_radius), 0.0, 0.0)
            builder.shape_collision_radius[s] = float(foot_radius)

    return {
        "base_body": base,
        "foot_bodies": feet,
        "foot_shapes": foot_shapes,
        "foot_radius": float(builder.shape_scale[foot_shapes[0]][0]),
        "foot_centers": [tuple(float(v) for v in builder.shape_transform[s].p) for s in foot_shapes],
        "joint_names": names,
        "root_joint": root_joint,
        "q_start": q0,
        "qd_start": qd0,
    }


def _add_anymal_c_usd(builder: newton.ModelBuilder, xform) -> None:
    """Import the cached ANYmal C USD with fixed joints collapsed (feet merged into the shanks, as from the URDF).

    Every body there carries an authored mass, so the builder's shape density (Newton's USD importer needs it
    positive) only matters for bodies without one: there are none.
    """
    from pxr import Usd

    from .anymal_c_usd import anymal_c_usd_path

    with warnings.catch_warnings():
        # the URDF's hatch link has a non-PSD inertia; Newton's USD importer drops it (base I_xx 1 % higher)
        warnings.filterwarnings("ignore", message=r".*(diagonalInertia|not positive semidefinite).*")
        builder.add_usd(
            Usd.Stage.Open(str(anymal_c_usd_path())),
            xform=xform,
            collapse_fixed_joints=True,
            load_visual_shapes=False,
        )


def build_anymal_c_model(
    num_worlds=1,
    device="cpu",
    *,
    kp=40.0,
    kd=5.0,
    base_height=0.6,
    requires_grad=False,
    ground_mu=1.0,
    source: str = "urdf",
) -> tuple[newton.Model, RobotLayout]:
    """Finalize ``num_worlds`` ANYmal C worlds plus one shared ground plane (the model's last shape); body_q set by
    FK. Returns the model and its :class:`RobotLayout` (feet LF, RF, LH, RH)."""
    robot = newton.ModelBuilder()
    local = add_anymal_c(robot, wp.transform((0.0, 0.0, base_height), wp.quat_identity()), kp=kp, kd=kd, source=source)
    builder = newton.ModelBuilder()
    builder.replicate(robot, num_worlds)
    ground_cfg = builder.default_shape_cfg.copy()
    ground_cfg.mu = ground_mu
    builder.add_ground_plane(cfg=ground_cfg)
    model = builder.finalize(device=device, requires_grad=requires_grad)
    newton.eval_fk(model, model.joint_q, model.joint_qd, model)

    w = np.arange(num_worlds)[:, None]
    nb, ns = robot.body_count, robot.shape_count
    nq, nd = robot.joint_coord_count, robot.joint_dof_count
    names = local["joint_names"]
    dofs = range(local["qd_start"] + 6, local["qd_start"] + 6 + len(names))  # leg dofs follow the free base's 6
    layout = RobotLayout(
        num_worlds=num_worlds,
        bodies_per_world=nb,
        shapes_per_world=ns,
        coords_per_world=nq,
        dofs_per_world=nd,
        joint_names=tuple(names),
        default_joint_pos=tuple(ANYMAL_C_DEFAULT_JOINT_POS[n] for n in names),
        stiffness=tuple(float(robot.joint_target_ke[d]) for d in dofs),
        damping=tuple(float(robot.joint_target_kd[d]) for d in dofs),
        effort_limit=tuple(float(robot.joint_effort_limit[d]) for d in dofs),
        velocity_limit=tuple(float(robot.joint_velocity_limit[d]) for d in dofs),
        foot_names=LEGS,
        foot_radius=local["foot_radius"],
        foot_centers=tuple(local["foot_centers"]),
        base_body=w[:, 0] * nb + local["base_body"],
        foot_bodies=w * nb + np.asarray(local["foot_bodies"]),
        foot_shapes=w * ns + np.asarray(local["foot_shapes"]),
        q_start=w[:, 0] * nq + local["q_start"],
        qd_start=w[:, 0] * nd + local["qd_start"],
    )
    return model, layout
