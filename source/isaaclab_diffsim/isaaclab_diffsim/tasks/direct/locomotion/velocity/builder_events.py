"""The differentiable task's events on the models our builder makes (``asset_source`` ``"urdf"`` and ``"usd"``)."""

from __future__ import annotations

import math
from collections.abc import Callable

import newton
import torch
import warp as wp

from .....assets.robot_layout import RobotLayout
from .....envs.rotations import yaw_quat


class BuilderEvents:
    """Startup randomisation, resets and pushes of :class:`DiffEventsCfg` on a builder-made model, which has no Isaac
    Lab ``Articulation``: the distributions of the Isaac Lab event functions that
    the Isaac Lab scene (``asset_source="isaaclab"``) runs, drawn from the env's generator.
    The interface is the scene's: :meth:`apply_startup_events`, :meth:`apply_reset_events`, :meth:`apply_push`.

    Args:
        model: The model of ``layout.num_worlds`` worlds; the startup events write into it.
        layout: Its layout.
        events: The env's :class:`DiffEventsCfg` (read at each call).
        default_q: (coords_per_world,) default joint coordinates of one world.
        uniform: ``uniform(shape, lo, hi)``, samples from the env's generator.
    """

    def __init__(
        self,
        model: newton.Model,
        layout: RobotLayout,
        events,
        default_q: torch.Tensor,
        uniform: Callable[..., torch.Tensor],
    ):
        self.model, self.layout, self.events = model, layout, events
        self.default_q, self.uniform = default_q, uniform
        self.device = default_q.device

    @torch.no_grad()
    def apply_startup_events(self) -> None:
        """Per-env foot friction, base mass (inertia scaled alike) and base CoM offset, written into the model."""
        ev, n, model = self.events, self.layout.num_worlds, self.model
        nf = len(self.layout.foot_names)
        base = torch.as_tensor(self.layout.base_body, device=self.device).long()
        mu = wp.to_torch(model.shape_material_mu, requires_grad=False)
        feet = torch.as_tensor(self.layout.foot_shapes, device=self.device).long()
        mu[feet.reshape(-1)] = self.uniform((n, 1), *ev.foot_friction_range).expand(n, nf).reshape(-1)
        mass = wp.to_torch(model.body_mass, requires_grad=False)
        new_mass = mass[base] + self.uniform((n,), *ev.base_mass_add_range)
        inertia = wp.to_torch(model.body_inertia, requires_grad=False)
        inertia[base] *= (new_mass / mass[base])[:, None, None]  # a uniform-density body: I scales with m
        mass[base] = new_mass
        wp.to_torch(model.body_inv_mass, requires_grad=False)[base] = 1.0 / new_mass
        wp.to_torch(model.body_inv_inertia, requires_grad=False)[base] = torch.linalg.inv(inertia[base])
        com = wp.to_torch(model.body_com, requires_grad=False)
        lo = torch.tensor([ev.base_com_range.get(k, (0.0, 0.0))[0] for k in "xyz"], device=self.device)
        hi = torch.tensor([ev.base_com_range.get(k, (0.0, 0.0))[1] for k in "xyz"], device=self.device)
        com[base] += self.uniform((n, 3), 0.0, 1.0) * (hi - lo) + lo

    @torch.no_grad()
    def apply_reset_events(self, envs: torch.Tensor, step_count: int) -> tuple[torch.Tensor, torch.Tensor]:
        """Reset joint state (q, qd) for all envs, rows outside the bool mask ``envs`` to be ignored: yaw uniform,
        base velocities within +-``reset_base_velocity``, joints at the default pose scaled by
        ``reset_joint_scale_range`` (not clamped to soft limits), joint velocities zero. ``step_count`` is unused."""
        ev, layout = self.events, self.layout
        n, nj = layout.num_worlds, layout.num_joints
        q = self.default_q.expand(n, layout.coords_per_world).clone()
        q[:, 3:7] = yaw_quat(self.uniform((n,), -math.pi, math.pi))
        q[:, 7:] = self.default_q[7:] * self.uniform((n, nj), *ev.reset_joint_scale_range)
        qd = torch.zeros(n, layout.dofs_per_world, device=self.device)
        qd[:, :6] = self.uniform((n, 6), -ev.reset_base_velocity, ev.reset_base_velocity)
        return q, qd

    @torch.no_grad()
    def apply_push(self, envs: torch.Tensor, velocity: float) -> torch.Tensor:
        """The joint-velocity change (num_envs, dofs_per_world) of a push: base x and y velocity changes uniform in
        +-``velocity`` for the envs of the bool mask ``envs``, zero elsewhere."""
        kick = torch.zeros(self.layout.num_worlds, self.layout.dofs_per_world, device=self.device)
        kick[:, 0:2] = self.uniform((self.layout.num_worlds, 2), -velocity, velocity)
        return kick * envs[:, None]
