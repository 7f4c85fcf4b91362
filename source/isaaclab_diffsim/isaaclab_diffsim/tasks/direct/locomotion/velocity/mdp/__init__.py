"""The differentiable velocity task's MDP terms as functions of the env's tensors (Isaac Lab's ``mdp`` modules).

Each function takes tensors and numbers, not the env, so a term can be read and tested alone: the env gathers its
state (base frame, feet, commands, clock) and calls them. Everything is a torch function of its inputs, so the
gradient flows through every term except where a docstring says it is stopped.
"""

from .actions import dc_motor_torques, delayed_actions, joint_targets
from .commands import heading_yaw_rate, moving_command, sample_velocity_commands, standing_commands, still_command
from .events import leg_kick_velocity_change
from .feet import feet_contact, foot_centres, height_above_ground, update_air_time
from .gait import gait_phase, gait_phases, swing_profile, trajectory_generator_offsets
from .observations import (
    NOISY_TERMS,
    base_frame,
    gait_clock,
    observation_noise,
    observation_size,
    observation_terms,
    policy_observation,
)
from .rewards import (
    action_rate_l2,
    ang_vel_xy_l2,
    base_height_exp,
    feet_air_time,
    flat_orientation_l2,
    foot_clearance,
    foot_edge,
    foot_lift,
    gait_foot_height_l2,
    hanging_foot_height,
    joint_acc_l2,
    joint_deviation_l1,
    joint_deviation_l2,
    joint_torques_l2,
    lin_vel_z_l2,
    stand_still,
    stand_still_feet_height,
    stand_still_joint_vel,
    track_ang_vel_z_exp,
    track_ang_vel_z_l2,
    track_lin_vel_xy_exp,
    track_lin_vel_xy_huber,
    track_lin_vel_xy_l2,
    upright,
)
from .terminations import base_failure, base_tilted, time_out

__all__ = [
    "NOISY_TERMS",
    "action_rate_l2",
    "ang_vel_xy_l2",
    "base_failure",
    "base_frame",
    "base_height_exp",
    "base_tilted",
    "dc_motor_torques",
    "delayed_actions",
    "feet_air_time",
    "feet_contact",
    "flat_orientation_l2",
    "foot_centres",
    "foot_clearance",
    "foot_edge",
    "foot_lift",
    "gait_clock",
    "gait_foot_height_l2",
    "gait_phase",
    "gait_phases",
    "hanging_foot_height",
    "heading_yaw_rate",
    "height_above_ground",
    "joint_acc_l2",
    "joint_deviation_l1",
    "joint_deviation_l2",
    "joint_targets",
    "joint_torques_l2",
    "leg_kick_velocity_change",
    "lin_vel_z_l2",
    "moving_command",
    "observation_noise",
    "observation_size",
    "observation_terms",
    "policy_observation",
    "sample_velocity_commands",
    "stand_still",
    "stand_still_feet_height",
    "stand_still_joint_vel",
    "standing_commands",
    "still_command",
    "swing_profile",
    "time_out",
    "track_ang_vel_z_exp",
    "track_ang_vel_z_l2",
    "track_lin_vel_xy_exp",
    "track_lin_vel_xy_huber",
    "track_lin_vel_xy_l2",
    "trajectory_generator_offsets",
    "update_air_time",
    "upright",
]
