"""Recipes on top of Isaac Lab's flat velocity MDP that a robot's task applies to its config (in its
``__post_init__``, after :meth:`DiffVelocityEnvCfg.use_robot`); the robot's numbers are their arguments."""

from __future__ import annotations

from .velocity_env_cfg import DiffEventsCfg, DiffVelocityEnvCfg


def use_forward_trot_recipe(
    cfg: DiffVelocityEnvCfg, period_s: float, joint_swing_scale: float, swing_height: float | None = None
) -> None:
    """The flat tasks' recipe: contact kappa 200, a trot clock of ``period_s`` with the joint-space trajectory
    generator (``joint_swing_scale``; ``swing_height`` of the foot-height reference, None: the config's), forward
    commands only. Why each choice: ANYmal C's ``AnymalCFlatTrotDiffEnvCfg``."""
    cfg.solver_cfg.kappa = 200.0
    cfg.gait.period_s = period_s
    cfg.gait.joint_swing_scale = joint_swing_scale
    if swing_height is not None:
        cfg.gait.swing_height = swing_height
    cfg.commands.lin_vel_y = (0.0, 0.0)
    cfg.commands.ang_vel_z = (0.0, 0.0)
    cfg.commands.heading_command = False
    cfg.commands.rel_standing_envs = 0.0


def use_gradient_gait_rewards(cfg: DiffVelocityEnvCfg, base_height: float) -> None:
    """The reference-free reward set (no clock, no generator, no air time): quadratic velocity tracking per axis
    (xy weight -1, yaw -0.5), a base-height kernel ``exp(-10 (h - base_height)^2)`` (weight 1), uprightness (0.5),
    a quadratic default-pose penalty (-0.3), legged_gym's ``stand_still`` (-2) with the joints' speed charged under
    the same zero command (``stand_still_joint_vel`` -0.03) and a phase-free foot lift under moving commands
    (``foot_lift`` 0.5, a foot counted in the first 0.3 s of its air phase) on top of Isaac Lab's regularisers. The
    quadratic tracking's gradient grows with the error, where Isaac Lab's ``exp(-e^2 / 0.25)`` is flat at 1 m/s and
    more of it; near a zero command it is flat too, so without ``stand_still`` a policy steps in place there. Without
    ``foot_lift`` one seed in three learned to stand under every command; with it each stepped, and one seed in four
    also stepped in place under a zero command until its joints' speed was charged there.
    """
    r = cfg.rewards
    r.track_lin_vel_xy_exp, r.track_ang_vel_z_exp = 0.0, 0.0
    r.track_lin_vel_xy_l2, r.track_ang_vel_z_l2 = -1.0, -0.5
    r.feet_air_time = 0.0
    r.base_height_exp, r.base_height_target, r.base_height_sharpness = 1.0, base_height, 10.0
    r.upright = 0.5
    r.joint_deviation_l2 = -0.3
    r.stand_still, r.stand_still_joint_vel = -2.0, -0.03
    r.foot_lift, r.foot_lift_max_air_s = 0.5, 0.3


def use_gradient_gait_recipe(cfg: DiffVelocityEnvCfg, base_height: float) -> None:
    """The reference-free recipe: no trajectory generator and nothing of a gait phase in the observation or the
    action; :func:`use_gradient_gait_rewards`; Isaac Lab's omnidirectional commands (vx, vy, yaw rate in +-1, heading
    commands) with 40 % of the envs told to stand (Isaac Lab: 2 %), so standing still is learned (at 20 % the policy
    steps in place under a zero command); contact kappa 200."""
    cfg.solver_cfg.kappa = 200.0
    cfg.gait.period_s, cfg.gait.joint_swing_scale = 0.0, 0.0
    use_gradient_gait_rewards(cfg, base_height)
    c = cfg.commands
    c.lin_vel_x, c.lin_vel_y, c.ang_vel_z = (-1.0, 1.0), (-1.0, 1.0), (-1.0, 1.0)
    c.heading_command, c.rel_heading_envs, c.rel_standing_envs = True, 1.0, 0.4


def use_play_settings(cfg: DiffVelocityEnvCfg) -> None:
    """The ``-Play`` evaluation: hard contact and :meth:`DiffVelocityEnvCfg.use_evaluation_settings`, nominal
    friction, motor strength, latency and base mass (those of :class:`DiffEventsCfg`)."""
    cfg.solver_cfg.contact_model = "hard"
    cfg.use_evaluation_settings()
    nominal = DiffEventsCfg()
    for name in ("ground_friction", "foot_friction_range", "motor_strength_range", "action_delay_range"):
        setattr(cfg.events, name, getattr(nominal, name))
    cfg.events.base_mass_add_range = nominal.base_mass_add_range
