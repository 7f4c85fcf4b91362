"""``RobotLayout``: where one legged robot's joints, feet and base sit in a model of identical worlds."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class RobotLayout:
    """The layout of a model holding ``num_worlds`` copies of one legged robot (one robot per Newton world).

    Per-joint tuples follow ``joint_names``, the actuated joints in the model's dof order (contiguous, right after the
    free base); per-foot entries follow ``foot_names``. Index arrays are absolute model indices, one row per world.
    """

    num_worlds: int
    bodies_per_world: int
    shapes_per_world: int
    coords_per_world: int
    dofs_per_world: int
    joint_names: tuple[str, ...]
    """Actuated joints in the model's dof order (the order of actions, targets and the joint observations)."""
    default_joint_pos: tuple[float, ...]
    """Standing pose [rad] per joint."""
    stiffness: tuple[float, ...]
    """PD drive stiffness kp [N m/rad] per joint."""
    damping: tuple[float, ...]
    """PD drive damping kd [N m s/rad] per joint."""
    effort_limit: tuple[float, ...]
    """Peak joint torque [N m] per joint."""
    velocity_limit: tuple[float, ...]
    """Joint speed limit [rad/s] per joint."""
    foot_names: tuple[str, ...]
    """Legs of the per-foot entries, e.g. ``("LF", "RF", "LH", "RH")``."""
    foot_radius: float
    """Radius [m] of the foot spheres."""
    foot_centers: tuple[tuple[float, float, float], ...]
    """Centre of each foot sphere in its body's frame [m]."""
    base_body: np.ndarray
    """(num_worlds,) body index of each robot's base."""
    foot_bodies: np.ndarray
    """(num_worlds, feet) body index of each foot sphere's body."""
    foot_shapes: np.ndarray
    """(num_worlds, feet) shape index of each foot sphere."""
    q_start: np.ndarray
    """(num_worlds,) index of each robot's first joint coordinate (the free base's x)."""
    qd_start: np.ndarray
    """(num_worlds,) index of each robot's first dof."""

    def __post_init__(self):
        nj, nf, n = len(self.joint_names), len(self.foot_names), self.num_worlds
        per_joint = {
            "default_joint_pos": self.default_joint_pos,
            "stiffness": self.stiffness,
            "damping": self.damping,
            "effort_limit": self.effort_limit,
            "velocity_limit": self.velocity_limit,
        }
        bad = [name for name, values in per_joint.items() if len(values) != nj]
        if len(self.foot_centers) != nf:
            bad.append("foot_centers")
        shapes = {"base_body": (n,), "foot_bodies": (n, nf), "foot_shapes": (n, nf), "q_start": (n,), "qd_start": (n,)}
        bad += [name for name, shape in shapes.items() if np.shape(getattr(self, name)) != shape]
        if bad:
            raise ValueError(f"RobotLayout: {', '.join(bad)} do not match {nj} joints, {nf} feet and {n} worlds")

    @property
    def num_joints(self) -> int:
        return len(self.joint_names)

    def joint_legs(self) -> list[int]:
        """Index into ``foot_names`` of each joint's leg (joint names start with the leg's name)."""
        legs = []
        for name in self.joint_names:
            leg = [k for k, foot in enumerate(self.foot_names) if name.startswith(foot)]
            if len(leg) != 1:
                raise ValueError(
                    f"RobotLayout: joint {name!r} belongs to none or several of the legs {self.foot_names}"
                )
            legs.append(leg[0])
        return legs
