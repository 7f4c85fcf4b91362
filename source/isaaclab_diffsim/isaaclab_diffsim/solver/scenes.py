"""Small analytic scenes (newton models) used by the solver tests and the falling-mass experiment."""

from __future__ import annotations

import math

import newton
import warp as wp


def _shape_cfg(mu: float) -> newton.ModelBuilder.ShapeConfig:
    cfg = newton.ModelBuilder.ShapeConfig()
    cfg.mu = mu
    cfg.density = 0.0
    return cfg


def sphere_model(
    height: float = 1.0,
    radius: float = 0.1,
    mass: float = 2.0,
    mu: float = 0.5,
    ground: bool = True,
    worlds: int = 1,
    device: str = "cpu",
    requires_grad: bool = False,
) -> newton.Model:
    """A free sphere (centre at ``height``) above an infinite ground plane, ``worlds`` copies."""
    world = newton.ModelBuilder()
    inertia = 0.4 * mass * radius**2
    body = world.add_body(
        xform=wp.transform((0.0, 0.0, height), wp.quat_identity()),
        mass=mass,
        inertia=wp.mat33(inertia, 0.0, 0.0, 0.0, inertia, 0.0, 0.0, 0.0, inertia),
    )
    world.add_shape_sphere(body, radius=radius, cfg=_shape_cfg(mu))
    builder = newton.ModelBuilder()
    builder.replicate(world, worlds)
    if ground:
        builder.add_ground_plane(cfg=_shape_cfg(mu))
    return builder.finalize(device=device, requires_grad=requires_grad)


def box_on_incline_model(
    angle: float = 0.0,
    half_extents: tuple[float, float, float] = (0.1, 0.1, 0.1),
    mass: float = 1.0,
    mu: float = 0.5,
    device: str = "cpu",
    requires_grad: bool = False,
) -> newton.Model:
    """A box resting on a plane tilted by ``angle`` about the y axis (the slope descends along +x)."""
    builder = newton.ModelBuilder()
    rot = wp.quat_from_axis_angle(wp.vec3(0.0, 1.0, 0.0), angle)
    hx, hy, hz = half_extents
    centre = wp.quat_rotate(rot, wp.vec3(0.0, 0.0, hz))
    ixx = mass / 3.0 * (hy**2 + hz**2)
    iyy = mass / 3.0 * (hx**2 + hz**2)
    izz = mass / 3.0 * (hx**2 + hy**2)
    body = builder.add_body(
        xform=wp.transform(centre, rot), mass=mass, inertia=wp.mat33(ixx, 0.0, 0.0, 0.0, iyy, 0.0, 0.0, 0.0, izz)
    )
    builder.add_shape_box(body, hx=hx, hy=hy, hz=hz, cfg=_shape_cfg(mu))
    builder.add_shape_plane(body=-1, xform=wp.transform(wp.vec3(0.0), rot), width=0.0, length=0.0, cfg=_shape_cfg(mu))
    return builder.finalize(device=device, requires_grad=requires_grad)


def pendulum_model(
    length: float = 0.5, mass: float = 1.0, angle: float = 1.0, device: str = "cpu", requires_grad: bool = False
) -> newton.Model:
    """A rigid pendulum: a body hinged to the world about y, COM ``length`` below the hinge, no contact."""
    builder = newton.ModelBuilder()
    i_c = 0.01 * mass
    link = builder.add_link(
        mass=mass,
        com=wp.vec3(0.0, 0.0, -length),
        inertia=wp.mat33(i_c, 0.0, 0.0, 0.0, i_c, 0.0, 0.0, 0.0, i_c),
    )
    joint = builder.add_joint_revolute(
        parent=-1,
        child=link,
        axis=wp.vec3(0.0, 1.0, 0.0),
        parent_xform=wp.transform((0.0, 0.0, 2.0), wp.quat_identity()),
        limit_lower=-1.0e3,
        limit_upper=1.0e3,
    )
    builder.add_articulation([joint])
    builder.joint_q[0] = angle
    model = builder.finalize(device=device, requires_grad=requires_grad)
    return model


def pendulum_energy(theta: float, omega: float, length: float = 0.5, mass: float = 1.0, g: float = 9.81) -> float:
    """Total energy of :func:`pendulum_model` (potential relative to the hinge)."""
    i_hinge = 0.01 * mass + mass * length**2
    return 0.5 * i_hinge * omega**2 - mass * g * length * math.cos(theta)
