"""``DiffRobotCfg``: what the differentiable tasks need to know about one legged robot, declared once.

The asset is a URDF inside an installed Python distribution (found offline, never downloaded); the builder
(:mod:`.robot_builder`) turns the config into a Newton model and its :class:`~.robot_layout.RobotLayout`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import MISSING
from pathlib import Path

from isaaclab.utils import configclass

from .installed_files import installed_file


@configclass
class FootSphereCfg:
    """A contact sphere added to each foot (for URDFs whose feet have none, or only meshes)."""

    link: str = MISSING
    """URDF link carrying the sphere, ``{leg}`` replaced by each leg's name (e.g. ``"{leg}_foot"``); it may be a
    link on fixed joints, which the builder then merges into its moving parent."""
    radius: float = MISSING
    """Sphere radius [m]."""
    center: tuple[float, float, float] = (0.0, 0.0, 0.0)
    """Sphere centre in the link's frame [m]."""


@configclass
class DiffRobotCfg:
    """One floating-base legged robot: asset, base, feet, standing pose, drives, heights.

    Only the URDF's inertials count (shape density 0), fixed joints are collapsed, and only the foot spheres collide.
    The actuated joints are the URDF's revolute joints, in Newton's dof order (the order of actions and targets).
    """

    name: str = MISSING
    """Short name (``ROBOTS`` key)."""
    urdf_distribution: str = "example-robot-data"
    """Installed Python distribution that ships the URDF."""
    urdf_file: str = MISSING
    """The URDF's path inside that distribution's files (``importlib.metadata``'s ``locate_file``)."""
    asset_sources: tuple[str, ...] = ("urdf",)
    """The env's ``asset_source`` values this robot has: ``"urdf"`` (the builder on ``urdf_file``), ``"usd"`` (the
    builder on ``usd_path()``), ``"isaaclab"`` (the Isaac Lab scene ``isaaclab_scene``)."""
    isaaclab_scene: str | None = None
    """``"module:Class"`` of the Isaac Lab scene that builds this robot's worlds for ``asset_source="isaaclab"`` (a
    name, not an import: the scene lives with the robot's task, above this layer). None: the robot has none."""
    usd_path: Callable[[], Path] | None = None
    """Returns the robot's cached USD, converted from the same URDF (:mod:`.robot_usd`): what Isaac Lab scenes spawn,
    and what ``asset_source="usd"`` builds from."""
    base_body: str = "base"
    """The floating base's link."""
    legs: tuple[str, ...] = MISSING
    """Leg names, the order of every per-foot entry; every actuated joint's name starts with its leg's."""
    foot_body: str = "{leg}_SHANK"
    """Body (after fixed joints are collapsed) whose own sphere shape is the foot, ``{leg}`` replaced; used when
    ``foot_sphere`` is None."""
    foot_link: str = "{leg}_FOOT"
    """URDF link of each foot, ``{leg}`` replaced: kept as a body in the converted USD, where Isaac Lab's contact
    sensor and feet terms find it by name."""
    foot_sphere: FootSphereCfg | None = None
    """A foot sphere to add per leg (None: use the asset's sphere on ``foot_body``)."""
    foot_friction: float = 1.0
    """Friction coefficient of the foot spheres."""
    default_joint_pos: dict[str, float] = MISSING
    """Standing pose [rad], one entry per actuated joint, by URDF joint name."""
    kp: float = MISSING
    """PD drive stiffness [N m/rad] of every joint (the task's ``kp`` default)."""
    kd: float = MISSING
    """PD drive damping [N m s/rad] of every joint (the task's ``kd`` default)."""
    effort_limit: dict[str, float] = {}
    """Peak torque [N m] by joint-name regex, replacing the URDF's ``effort`` (joints not matched keep it)."""
    velocity_limit: dict[str, float] = {}
    """Speed limit [rad/s] by joint-name regex, replacing the URDF's ``velocity`` (joints not matched keep it)."""
    actuator_saturation: float = 0.0
    """DC-motor peak torque [N m] at zero speed of the torque-speed envelope (0: no envelope, effort limit only)."""
    init_base_height: float = MISSING
    """Base height [m] at the default pose when spawned (slightly above standing: it settles onto its feet)."""
    min_base_height: float = MISSING
    """Base height [m] below which an episode fails (the task's ``min_base_height`` default)."""

    @property
    def num_joints(self) -> int:
        return len(self.default_joint_pos)

    def urdf_path(self) -> Path:
        """The URDF in the installed distribution; FileNotFoundError naming the package if it is missing."""
        try:
            return installed_file(self.urdf_distribution, self.urdf_file)
        except FileNotFoundError as err:
            raise FileNotFoundError(f"robot {self.name!r}: {err}") from None
