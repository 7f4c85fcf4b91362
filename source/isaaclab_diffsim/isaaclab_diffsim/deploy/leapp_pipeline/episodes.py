"""N finite episodes of a LEAPP pipeline in :class:`isaaclab.envs.LeappDeploymentEnv`, with tracking error and falls.

``LeappDeploymentEnv`` has no termination or reward manager and ``isaaclab leapp deploy`` steps it until the app
closes; :func:`run_episodes` resets it, steps it for at most ``max_steps`` policy steps per episode and ends an
episode early when the robot falls (base below ``min_height`` [m] or tilted so that gravity's z in the base frame
exceeds ``max_gravity_z``, the differentiable task's failure conditions).
"""

from __future__ import annotations

import math

import torch


def fallen(robot, min_height: float, max_gravity_z: float) -> bool:
    """Whether the robot (one env) has fallen: base height below ``min_height`` or tilted past ``max_gravity_z``."""
    height = float(robot.data.root_pos_w.torch[0, 2])
    gravity_z = float(robot.data.projected_gravity_b.torch[0, 2])
    return height < min_height or gravity_z > max_gravity_z


def run_episodes(
    env,
    episodes: int,
    max_steps: int,
    command_name: str = "base_velocity",
    min_height: float = 0.3,
    max_gravity_z: float = -0.5,
) -> dict:
    """Run ``episodes`` episodes; returns the metrics over all of them.

    Per policy step, after the physics: ``lin_vel_error`` = |command_xy - base velocity_xy| [m/s] (base frame) and
    ``yaw_rate_error`` = |command_yaw - base yaw rate| [rad/s], against the command the policy saw at that step.
    An env with an ``ended`` attribute (:class:`.training_stack.TrainingStackEpisodes`) ends the episode when it is
    true. ``tracking_error_xy``/``tracking_error_yaw`` are their means over all steps of all episodes; ``fall_rate`` the
    fraction of episodes that ended in a fall; ``command_xy``/``velocity_xy`` the mean commanded and
    achieved planar speed [m/s]; ``episode_s`` the mean episode length [s].
    """
    if episodes <= 0 or max_steps <= 0:
        raise ValueError(f"episodes and max_steps must be > 0, got {episodes}, {max_steps}")
    robot = env.scene["robot"]
    sim_kp_before = float(robot.data.joint_stiffness.torch.abs().max())
    err_xy, err_yaw, steps, falls, lengths = 0.0, 0.0, 0, 0, []
    cmd_xy, vel_xy = 0.0, 0.0
    with torch.inference_mode():
        for _ in range(episodes):
            env.reset()
            # from the second LeappDeploymentEnv.reset() on the command stays zero (measured: mean commanded speed
            # 0.25 instead of 0.5 m/s over 2 episodes of a fixed 0.5 m/s command; its reset passes int32 env ids);
            # a reset over all envs resamples it
            env.command_manager.reset()
            length = 0
            for _ in range(max_steps):
                env.step()
                length += 1
                cmd = env.command_manager.get_command(command_name)[0]
                lin = robot.data.root_lin_vel_b.torch[0]
                ang = robot.data.root_ang_vel_b.torch[0]
                err_xy += float(torch.linalg.norm(cmd[:2] - lin[:2]))
                err_yaw += float((cmd[2] - ang[2]).abs())
                cmd_xy += float(torch.linalg.norm(cmd[:2]))
                vel_xy += float(torch.linalg.norm(lin[:2]))
                steps += 1
                if getattr(env, "ended", False) or fallen(robot, min_height, max_gravity_z):
                    falls += 1
                    break
            lengths.append(length * env.step_dt)
    return {
        "episodes": episodes,
        "steps": steps,
        "tracking_error_xy": err_xy / steps,
        "tracking_error_yaw": err_yaw / steps,
        "command_xy": cmd_xy / steps,
        "velocity_xy": vel_xy / steps,
        "fall_rate": falls / episodes,
        "episode_s": sum(lengths) / episodes,
        "max_episode_s": max_steps * env.step_dt,
        "finite": math.isfinite(err_xy) and math.isfinite(err_yaw),
        # the simulation's joint stiffness (implicit PD) before and after the pipeline wrote its outputs
        "sim_joint_stiffness_max": [sim_kp_before, float(robot.data.joint_stiffness.torch.abs().max())],
    }
