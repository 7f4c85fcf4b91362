"""What a robot would measure, taken from a differentiable velocity env's state: the deployed controller's input."""

import numpy as np

from isaaclab_diffsim.deploy.observations import rotate_inverse
from isaaclab_diffsim.terrains import scan_points


def env_measurements(env) -> dict:
    """The controller's measurements of ``env``'s state (base velocities in the base frame, projected gravity,
    joints, commands), with ``height_scan`` when the env has a scan and ``foot_heights`` when it observes them."""
    q, qd = env.q.detach().double().numpy(), env.qd.detach().double().numpy()
    meas = {
        "base_lin_vel": rotate_inverse(q[:, 3:7], qd[:, 0:3]),
        "base_ang_vel": rotate_inverse(q[:, 3:7], qd[:, 3:6]),
        "projected_gravity": rotate_inverse(q[:, 3:7], np.array([[0.0, 0.0, -1.0]])),
        "joint_pos": q[:, 7:],
        "joint_vel": qd[:, 6:],
        "command": env.commands.numpy(),
    }
    if env.scan_pattern is not None:
        xy = scan_points(env.q.detach()[:, 0:3], env.q.detach()[:, 3:7], env.scan_pattern)
        meas["height_scan"] = (env.q[:, 2:3] - env.ground_height(xy)).detach().numpy()
    if env.cfg.foot_heights is not None:
        meas["foot_heights"] = env.foot_heights(env.body_q).detach().numpy()
    return meas
