"""Newton models of a :class:`~.robot_cfg.DiffRobotCfg` robot: one robot added to a builder, or ``num_worlds``
copies on a shared ground plane with their :class:`~.robot_layout.RobotLayout`."""

from __future__ import annotations

import re
import warnings

import newton
import numpy as np
import warp as wp

from .robot_cfg import DiffRobotCfg
from .robot_layout import RobotLayout
from .urdf_limits import read_urdf_joint_limits


def _last_index(labels, name: str) -> int:
    """Highest index whose label is ``name`` or ends with ``/name`` (the robot just added)."""
    for i in range(len(labels) - 1, -1, -1):
        if labels[i] == name or labels[i].endswith("/" + name):
            return i
    raise KeyError(name)


def _body(builder: newton.ModelBuilder, robot: DiffRobotCfg, name: str, what: str) -> int:
    try:
        return _last_index(builder.body_label, name)
    except KeyError:
        leaves = sorted({label.rsplit("/", 1)[-1] for label in builder.body_label})
        raise ValueError(f"robot {robot.name!r}: no body {name!r} ({what}); its bodies: {leaves}") from None


def _override(limits: dict[str, float], patterns: dict[str, float], names: list[str], what: str) -> dict[str, float]:
    """``limits`` with the joints matched by the regex keys of ``patterns`` replaced."""
    out = dict(limits)
    for pattern, value in patterns.items():
        hits = [n for n in names if re.fullmatch(pattern, n)]
        if not hits:
            raise ValueError(f"{what}: {pattern!r} matches no joint of {names}")
        out.update(dict.fromkeys(hits, float(value)))
    return out


def _add_foot_spheres(builder: newton.ModelBuilder, robot: DiffRobotCfg) -> list[int]:
    """Add ``robot.foot_sphere`` to each leg's foot link (before fixed joints are collapsed); their shape indices."""
    foot = robot.foot_sphere
    cfg = builder.default_shape_cfg.copy()
    cfg.density = 0.0  # the URDF's inertials only
    shapes = []
    for leg in robot.legs:
        body = _body(builder, robot, foot.link.format(leg=leg), f"foot link of leg {leg}")
        xform = wp.transform(wp.vec3(*foot.center), wp.quat_identity())
        shapes.append(builder.add_shape_sphere(body, xform=xform, radius=float(foot.radius), cfg=cfg))
    return shapes


def _asset_foot_spheres(builder: newton.ModelBuilder, robot: DiffRobotCfg, shape_start: int) -> list[int]:
    """The asset's own foot sphere of each leg: the last sphere shape on its ``foot_body``."""
    sphere = int(newton.GeoType.SPHERE)
    shapes = []
    for leg in robot.legs:
        name = robot.foot_body.format(leg=leg)
        body = _body(builder, robot, name, f"foot body of leg {leg}")
        hits = [
            i
            for i in range(shape_start, builder.shape_count)
            if builder.shape_body[i] == body and builder.shape_type[i] == sphere
        ]
        if not hits:
            raise ValueError(f"robot {robot.name!r}: body {name!r} has no sphere shape (set foot_sphere to add one)")
        shapes.append(max(hits))
    return shapes


def add_robot(
    builder: newton.ModelBuilder,
    robot: DiffRobotCfg,
    xform=None,
    *,
    kp: float | None = None,
    kd: float | None = None,
    foot_radius: float | None = None,
    source: str = "urdf",
) -> dict:
    """Add one floating-base ``robot`` to ``builder`` at ``xform`` (default: ``robot.init_base_height`` up).

    Fixed joints are collapsed (note Newton's collapse acts on the whole builder). Sets the default pose as joint_q
    and joint_target_q, PD gains ``kp``/``kd`` (default: the robot's), the URDF's velocity and effort limits (with
    the robot's overrides), and makes every shape but the foot spheres non-colliding. ``foot_radius`` overrides the
    foot spheres' radius (same centre). ``source`` is one of ``robot.asset_sources`` other than ``"isaaclab"``.
    Returns indices (absolute in ``builder``), feet in ``robot.legs`` order.
    """
    if source not in robot.asset_sources or source == "isaaclab":
        sources = [s for s in robot.asset_sources if s != "isaaclab"]
        raise ValueError(f"robot {robot.name!r}: source must be one of {sources}, got {source!r}")
    path = robot.urdf_path()
    if xform is None:
        xform = wp.transform((0.0, 0.0, robot.init_base_height), wp.quat_identity())
    kp, kd = robot.kp if kp is None else kp, robot.kd if kd is None else kd
    shape_start = builder.shape_count
    if source == "urdf":
        old_density = builder.default_shape_cfg.density
        builder.default_shape_cfg.density = 0.0  # only the URDF's inertials (a base link may have none)
        try:
            with warnings.catch_warnings():
                # Visual meshes use package:// URIs that Newton cannot resolve here; visuals are skipped.
                warnings.filterwarnings("ignore", message=r".*could not resolve (URI|package)")
                builder.add_urdf(
                    str(path),
                    xform=xform,
                    floating=True,
                    collapse_fixed_joints=robot.foot_sphere is None,
                    force_show_colliders=True,
                )
        finally:
            builder.default_shape_cfg.density = old_density
        if robot.foot_sphere is not None:
            foot_shapes = _add_foot_spheres(builder, robot)
            builder.collapse_fixed_joints()
    else:
        _add_usd(builder, robot, xform)
    if robot.foot_sphere is None:
        foot_shapes = _asset_foot_spheres(builder, robot, shape_start)
    feet = [int(builder.shape_body[s]) for s in foot_shapes]

    base = _body(builder, robot, robot.base_body, "base")
    root_joint = next(j for j in range(builder.joint_count - 1, -1, -1) if builder.joint_child[j] == base)
    q0, qd0 = builder.joint_q_start[root_joint], builder.joint_qd_start[root_joint]

    # Actuated joints in Newton's dof order; set pose, target, gains, drive mode, velocity and effort limits.
    leg_joints = sorted(
        (j for j in range(root_joint + 1, builder.joint_count) if builder.joint_type[j] == newton.JointType.REVOLUTE),
        key=lambda j: builder.joint_qd_start[j],
    )
    names = [builder.joint_label[j].rsplit("/", 1)[-1] for j in leg_joints]
    if sorted(names) != sorted(robot.default_joint_pos):
        raise ValueError(
            f"robot {robot.name!r}: default_joint_pos names {sorted(robot.default_joint_pos)}, the URDF's revolute "
            f"joints are {names}"
        )
    what = f"robot {robot.name!r}"
    vel_limits = _override(read_urdf_joint_limits(path, "velocity"), robot.velocity_limit, names, what)
    effort_limits = _override(read_urdf_joint_limits(path, "effort"), robot.effort_limit, names, what)
    for j, name in zip(leg_joints, names, strict=True):
        qi, di = builder.joint_q_start[j], builder.joint_qd_start[j]
        builder.joint_q[qi] = builder.joint_target_q[qi] = robot.default_joint_pos[name]
        builder.joint_target_ke[di] = kp
        builder.joint_target_kd[di] = kd
        builder.joint_velocity_limit[di] = vel_limits.get(name, builder.joint_velocity_limit[di])
        builder.joint_effort_limit[di] = effort_limits.get(name, builder.joint_effort_limit[di])
        builder.joint_target_mode[di] = int(newton.JointTargetMode.POSITION)  # a USD without drives imports NONE

    # Collision: only the foot spheres.
    collide = int(newton.ShapeFlags.COLLIDE_SHAPES | newton.ShapeFlags.COLLIDE_PARTICLES)
    for s in range(shape_start, builder.shape_count):
        if s not in foot_shapes:
            builder.shape_flags[s] &= ~collide
    for s in foot_shapes:
        builder.shape_material_mu[s] = robot.foot_friction
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


def _add_usd(builder: newton.ModelBuilder, robot: DiffRobotCfg, xform) -> None:
    """Import the robot's cached USD with fixed joints collapsed (feet merged into their parents, as from the URDF).

    Every body there carries an authored mass, so the builder's shape density (Newton's USD importer needs it
    positive) only matters for bodies without one: there are none.
    """
    from pxr import Usd

    with warnings.catch_warnings():
        # ANYmal C's hatch link has a non-PSD inertia; Newton's USD importer drops it (base I_xx 1 % higher)
        warnings.filterwarnings("ignore", message=r".*(diagonalInertia|not positive semidefinite).*")
        builder.add_usd(
            Usd.Stage.Open(str(robot.usd_path())),
            xform=xform,
            collapse_fixed_joints=True,
            load_visual_shapes=False,
        )


def build_robot_model(
    robot: DiffRobotCfg,
    num_worlds=1,
    device="cpu",
    *,
    kp: float | None = None,
    kd: float | None = None,
    base_height: float | None = None,
    requires_grad=False,
    ground_mu=1.0,
    source: str = "urdf",
    terrain: newton.Mesh | None = None,
) -> tuple[newton.Model, RobotLayout]:
    """Finalize ``num_worlds`` worlds of ``robot`` plus one shared ground: a plane, or the static triangle mesh
    ``terrain`` (the model's last shape); body_q set by FK. ``kp``, ``kd``, ``base_height`` default to the robot's.
    Returns the model and its :class:`RobotLayout` (feet in ``robot.legs`` order)."""
    height = robot.init_base_height if base_height is None else base_height
    one = newton.ModelBuilder()
    local = add_robot(one, robot, wp.transform((0.0, 0.0, height), wp.quat_identity()), kp=kp, kd=kd, source=source)
    builder = newton.ModelBuilder()
    builder.replicate(one, num_worlds)
    ground_cfg = builder.default_shape_cfg.copy()
    ground_cfg.mu = ground_mu
    if terrain is None:
        builder.add_ground_plane(cfg=ground_cfg)
    else:
        ground_cfg.density = 0.0
        builder.add_shape_mesh(-1, mesh=terrain, cfg=ground_cfg)
    model = builder.finalize(device=device, requires_grad=requires_grad)
    newton.eval_fk(model, model.joint_q, model.joint_qd, model)

    w = np.arange(num_worlds)[:, None]
    nb, ns = one.body_count, one.shape_count
    nq, nd = one.joint_coord_count, one.joint_dof_count
    names = local["joint_names"]
    dofs = range(local["qd_start"] + 6, local["qd_start"] + 6 + len(names))  # leg dofs follow the free base's 6
    layout = RobotLayout(
        num_worlds=num_worlds,
        bodies_per_world=nb,
        shapes_per_world=ns,
        coords_per_world=nq,
        dofs_per_world=nd,
        joint_names=tuple(names),
        default_joint_pos=tuple(robot.default_joint_pos[n] for n in names),
        stiffness=tuple(float(one.joint_target_ke[d]) for d in dofs),
        damping=tuple(float(one.joint_target_kd[d]) for d in dofs),
        effort_limit=tuple(float(one.joint_effort_limit[d]) for d in dofs),
        velocity_limit=tuple(float(one.joint_velocity_limit[d]) for d in dofs),
        foot_names=tuple(robot.legs),
        foot_radius=local["foot_radius"],
        foot_centers=tuple(local["foot_centers"]),
        base_body=w[:, 0] * nb + local["base_body"],
        foot_bodies=w * nb + np.asarray(local["foot_bodies"]),
        foot_shapes=w * ns + np.asarray(local["foot_shapes"]),
        q_start=w[:, 0] * nq + local["q_start"],
        qd_start=w[:, 0] * nd + local["qd_start"],
    )
    return model, layout
