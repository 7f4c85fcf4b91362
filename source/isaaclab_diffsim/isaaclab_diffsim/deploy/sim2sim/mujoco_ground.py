"""The ground in MuJoCo (a plane, or a terrain's heightfield) and heights on it by MuJoCo's own ray casts: the ground
below points, and the height scan io.yaml declares."""

from __future__ import annotations

import numpy as np

GROUND_GROUP = 3
"""Geom group of the ground: the only group the ray casts see (the robot's geoms are in group 0)."""
HFIELD_BASE = 1.0
"""[m] Thickness of the heightfield's base below its lowest point."""
RAY_START_ABOVE = 1.0
"""[m] Rays start this far above the ground's highest point, so they meet its top surface first."""


def add_ground(spec, friction: float, terrain=None) -> float:
    """Add the ground to ``spec``: the plane z = 0, or ``terrain``'s heights (a
    :class:`~isaaclab_diffsim.deploy.sim2sim.bundle_terrain.BundleTerrain`) as a heightfield, ``friction`` on it;
    it collides with every robot geom. Returns the ground's highest point [m]."""
    import mujoco

    geom = {
        "name": "ground",
        "contype": 0,
        "conaffinity": 1,
        "friction": [friction, 0.005, 0.0001],
        "group": GROUND_GROUP,
    }
    if terrain is None:
        spec.worldbody.add_geom(type=mujoco.mjtGeom.mjGEOM_PLANE, size=[0.0, 0.0, 1.0], **geom)
        return 0.0
    h = np.asarray(terrain.heights, dtype=np.float64)
    rows, cols = h.shape
    lo, hi = float(h.min()), float(h.max())
    half_x, half_y = 0.5 * (cols - 1) * terrain.cell, 0.5 * (rows - 1) * terrain.cell
    # MuJoCo scales the elevations to [0, 1] and maps them onto [0, size[2]] above the geom: the geom sits at the
    # lowest height, size[2] spans to the highest; row r lies at y = y0 + r cell, column c at x = x0 + c cell
    spec.add_hfield(
        name="terrain",
        nrow=rows,
        ncol=cols,
        size=[half_x, half_y, max(hi - lo, 1e-6), HFIELD_BASE],
        userdata=h.ravel().tolist(),
    )
    spec.worldbody.add_geom(
        type=mujoco.mjtGeom.mjGEOM_HFIELD,
        hfieldname="terrain",
        pos=[terrain.x0 + half_x, terrain.y0 + half_y, lo],
        **geom,
    )
    return hi


class MujocoGround:
    """Ground heights under points by ``mujoco.mj_ray``: rays straight down from :data:`RAY_START_ABOVE` over the
    ground's highest point ``top``, seeing the geoms of :data:`GROUND_GROUP` only. A ray that misses (off the
    terrain) reads +inf, as Isaac Lab's ray caster's miss: the scan clips it to -clip, a base there has fallen."""

    def __init__(self, model, top: float):
        self.model, self.start_z = model, float(top) + RAY_START_ABOVE
        self.groups = np.zeros(6, dtype=np.uint8)
        self.groups[GROUND_GROUP] = 1
        self._down = np.array([0.0, 0.0, -1.0])
        self._geom = np.zeros(1, dtype=np.int32)

    def heights(self, data, xy: np.ndarray) -> np.ndarray:
        """Ground height [m] below each point of ``xy`` (K, 2)."""
        import mujoco

        out = np.empty(len(xy))
        start = np.array([0.0, 0.0, self.start_z])
        for k, (x, y) in enumerate(np.asarray(xy, dtype=np.float64)):
            start[0], start[1] = x, y
            dist = mujoco.mj_ray(self.model, data, start, self._down, self.groups, 1, -1, self._geom)
            out[k] = np.inf if dist < 0 else self.start_z - dist
        return out

    def scan(self, data, base_pos: np.ndarray, base_quat_wxyz: np.ndarray, pattern_xy: np.ndarray) -> np.ndarray:
        """io.yaml's ``height_scan`` measurement: base z minus the ground height below each point of ``pattern_xy``
        (P, 2), the pattern turned by the base's yaw (its x axis projected on the ground) about the base."""
        import mujoco

        heading = np.zeros(3)
        mujoco.mju_rotVecQuat(heading, np.array([1.0, 0.0, 0.0]), np.asarray(base_quat_wxyz, dtype=np.float64))
        c, s = heading[:2] / max(float(np.linalg.norm(heading[:2])), 1e-12)
        px, py = pattern_xy[:, 0], pattern_xy[:, 1]
        points = np.stack([base_pos[0] + c * px - s * py, base_pos[1] + s * px + c * py], 1)
        return base_pos[2] - self.heights(data, points)

    def foot_heights(self, data, foot_geoms: list[int], radius: float) -> np.ndarray:
        """io.yaml's ``foot_heights`` measurement: each foot sphere's lowest point (centre z minus ``radius``) above
        the ground straight below its centre, in the order of ``foot_geoms``."""
        centres = data.geom_xpos[foot_geoms]
        return centres[:, 2] - radius - self.heights(data, centres[:, 0:2])
