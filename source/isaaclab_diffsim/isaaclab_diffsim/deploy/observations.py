"""The controller's observation terms in numpy, from a robot's state estimate, as ``io.yaml`` lists them."""

from __future__ import annotations

import numpy as np

from .io_spec import BundleMismatchError


def rotate_inverse(q: np.ndarray, v: np.ndarray) -> np.ndarray:
    """R(q)^T v for (x, y, z, w) unit quaternions, row-wise."""
    u, w = q[:, :3], q[:, 3:4]
    t = 2.0 * np.cross(u, v)
    return v - w * t + np.cross(u, t)


def state_terms(quat, lin_vel_w, ang_vel_w, commands, joint_pos_rel, joint_vel, last_action) -> dict:
    """The observation terms this loop can build, (N, size) float32 arrays by io.yaml name: ``quat`` (x, y, z, w)
    of the base, its linear and angular velocity in the world frame, the commands, the joints' positions minus the
    default pose and their velocities (bundle joint order) and the controller's previous ``actions``."""
    n = quat.shape[0]
    return {
        "base_lin_vel": rotate_inverse(quat, lin_vel_w),
        "base_ang_vel": rotate_inverse(quat, ang_vel_w),
        "projected_gravity": rotate_inverse(quat, np.tile(np.float32([0.0, 0.0, -1.0]), (n, 1))),
        "velocity_commands": commands,
        "joint_pos_rel": joint_pos_rel,
        "joint_vel_rel": joint_vel,
        "last_action": last_action,
    }


def concat_terms(terms: list[str], scales: dict[str, float], values: dict) -> np.ndarray:
    """The controller's ``obs`` input: ``scale * value`` of each term of ``terms`` in order, float32; raises
    :class:`BundleMismatchError` naming the terms ``values`` lacks."""
    unknown = [t for t in terms if t not in values]
    if unknown:
        raise BundleMismatchError(f"io.yaml asks for observation terms this loop cannot build: {unknown}")
    return np.concatenate([scales[t] * values[t] for t in terms], axis=1).astype(np.float32)
