"""ANYmal C flat velocity tracking on the differentiable backend (direct env)."""

from isaaclab.utils import configclass

from .diff_velocity_env_cfg import DiffEventsCfg, DiffVelocityEnvCfg


def use_forward_trot_recipe(cfg: DiffVelocityEnvCfg) -> None:
    """The flat tasks' recipe on top of Isaac Lab's MDP: contact kappa 200, a 0.6 s trot clock with the joint-space
    trajectory generator, forward commands only (see :class:`AnymalCFlatDiffEnvCfg` for why)."""
    cfg.solver_cfg.kappa = 200.0
    cfg.gait.period_s = 0.6
    cfg.gait.joint_swing_scale = 1.0
    cfg.commands.lin_vel_y = (0.0, 0.0)
    cfg.commands.ang_vel_z = (0.0, 0.0)
    cfg.commands.heading_command = False
    cfg.commands.rel_standing_envs = 0.0


def use_gradient_gait_rewards(cfg: DiffVelocityEnvCfg, base_height: float) -> None:
    """The reference-free reward set (no clock, no generator, no air time): quadratic velocity tracking per axis
    (xy weight -1, yaw -0.5), a base-height kernel ``exp(-10 (h - base_height)^2)`` (weight 1), uprightness (0.5),
    a quadratic default-pose penalty (-0.3) and legged_gym's ``stand_still`` (-1) on top of Isaac Lab's
    regularisers. The quadratic tracking's gradient grows with the error, where Isaac Lab's ``exp(-e^2 / 0.25)`` is
    flat at 1 m/s and more of it; near a zero command it is flat too, so without ``stand_still`` a policy steps in
    place there."""
    r = cfg.rewards
    r.track_lin_vel_xy_exp, r.track_ang_vel_z_exp = 0.0, 0.0
    r.track_lin_vel_xy_l2, r.track_ang_vel_z_l2 = -1.0, -0.5
    r.feet_air_time = 0.0
    r.base_height_exp, r.base_height_target, r.base_height_sharpness = 1.0, base_height, 10.0
    r.upright = 0.5
    r.joint_deviation_l2 = -0.3
    r.stand_still = -1.0


def use_play_settings(cfg: DiffVelocityEnvCfg) -> None:
    """The ``-Play`` evaluation: hard contact and :meth:`DiffVelocityEnvCfg.use_evaluation_settings`, nominal
    friction, motor strength, latency and base mass (those of :class:`DiffEventsCfg`)."""
    cfg.solver_cfg.contact_model = "hard"
    cfg.use_evaluation_settings()
    nominal = DiffEventsCfg()
    for name in ("ground_friction", "foot_friction_range", "motor_strength_range", "action_delay_range"):
        setattr(cfg.events, name, getattr(nominal, name))
    cfg.events.base_mass_add_range = nominal.base_mass_add_range


def use_deployment_randomisation(cfg: DiffVelocityEnvCfg) -> None:
    """Domain randomisation wide enough for the conditions a real ANYmal meets (``docs/deployability.md``):
    effective foot-ground friction uniform in 0.3-1.2 (ground 0.3, feet 0.3-2.1, combined by their mean), motor
    strength 0.8-1.2, base mass -5 to +10 kg, 0 or 1 control steps of action latency per reset and pushes of up to
    1.5 m/s per axis every 2-4 s (Isaac Lab's flat task: friction 0.8, mass +-5 kg, pushes 0.5 m/s every 10-15 s, no
    motor or latency term). The latency carries the policy through 2 steps of latency in MuJoCo; the pushes, more
    often and stronger than the robustness suite's 1 m/s every 5 s, are what its push recovery there needs
    (``experiment=deployability``: run ``randomised_latency0-1_push3s_1.5`` against the others)."""
    ev = cfg.events
    ev.ground_friction, ev.foot_friction_range = 0.3, (0.3, 2.1)
    ev.motor_strength_range = (0.8, 1.2)
    ev.base_mass_add_range = (-5.0, 10.0)
    ev.action_delay_range = (0, 1)
    ev.push_velocity, ev.push_interval_s = 1.5, (2.0, 4.0)


ANYMAL_C_BASE_HEIGHT_TARGET = 0.55
"""Base height [m] the reference-free rewards ask ANYmal C for (its default pose stands at about 0.6 m)."""


def use_gradient_gait_recipe(cfg: DiffVelocityEnvCfg, base_height: float) -> None:
    """The reference-free recipe: no trajectory generator and nothing of a gait phase in the observation or the
    action; :func:`use_gradient_gait_rewards`; Isaac Lab's omnidirectional commands (vx, vy, yaw rate in +-1, heading
    commands) with a fifth of the envs told to stand (Isaac Lab: 2 %), so standing still is learned; contact
    kappa 200."""
    cfg.solver_cfg.kappa = 200.0
    cfg.gait.period_s, cfg.gait.joint_swing_scale = 0.0, 0.0
    use_gradient_gait_rewards(cfg, base_height)
    c = cfg.commands
    c.lin_vel_x, c.lin_vel_y, c.ang_vel_z = (-1.0, 1.0), (-1.0, 1.0), (-1.0, 1.0)
    c.heading_command, c.rel_heading_envs, c.rel_standing_envs = True, 1.0, 0.2


@configclass
class AnymalCFlatDiffEnvCfg(DiffVelocityEnvCfg):
    """ANYmal C walking from smoothed-contact gradients alone: no trajectory generator, no gait clock.

    What differs from :class:`DiffVelocityEnvCfg` (Isaac Lab's flat MDP) and why:

    - rewards (:func:`use_gradient_gait_rewards`): quadratic velocity tracking in place of Isaac Lab's exponential
      kernel, whose gradient vanishes at the errors a robot standing under a command has (0.15 at 1 m/s, 0.0015 at
      1.5 m/s); a base-height kernel, uprightness and a quadratic default-pose penalty; no air-time term (it charges
      every short first step). With Isaac Lab's rewards and no generator the policy crouches and shuffles at any
      scale (docs/results.md "recipe").
    - commands: Isaac Lab's omnidirectional ranges and heading commands, 20 % standing envs (Isaac Lab: 2 %).
    - ``kp=80``: at ANYdrive's kp 40 the legs sag about 0.6 rad under the robot's weight.
    - ``solver_cfg.kappa=200``: a wider sigmoid than the class default (1000): the contact weight is still 0.12 at
      1 cm of separation (4.5e-5 at kappa 1000), so a lifted foot keeps a gradient towards the ground.
    - :func:`use_deployment_randomisation`; ``-Play`` evaluates at the nominal values instead.
    - 1024 envs (SHAC: 500 iterations of horizon 12, 6.1 M samples).

    The trot-generator recipe is ``DiffSim-Velocity-Flat-AnymalC-Trot-Direct`` (:class:`AnymalCFlatTrotDiffEnvCfg`).
    The model is built by Isaac Lab (``asset_source="isaaclab"``: InteractiveScene with ``ANYMAL_C_DIFFSIM_CFG``,
    cloner, DiffSim physics manager); ``env.asset_source=urdf`` uses our URDF builder instead (no Isaac Lab
    simulation context, several envs per process).
    """

    num_envs: int = 1024
    asset_source: str = "isaaclab"
    kp: float = 80.0

    def __post_init__(self):
        use_gradient_gait_recipe(self, ANYMAL_C_BASE_HEIGHT_TARGET)
        use_deployment_randomisation(self)


@configclass
class AnymalCFlatDiffEnvCfg_PLAY(AnymalCFlatDiffEnvCfg):
    """Evaluation: hard contact, the task's commands without standing envs, no pushes, no observation noise, nominal
    friction, motor strength and latency (the robustness variants are ``scripts/deploy/sim2sim.py``'s); 64 envs."""

    num_envs: int = 64

    def __post_init__(self):
        super().__post_init__()
        use_play_settings(self)


@configclass
class AnymalCFlatTrotDiffEnvCfg(DiffVelocityEnvCfg):
    """Isaac Lab's flat ANYmal C rewards on the smoothed contact model, with a trot generator and forward commands.

    What differs from :class:`DiffVelocityEnvCfg` (Isaac Lab's flat MDP) and why:

    - ``gait``: a 0.6 s trot clock in the observation, the foot-height reference term and the joint-space
      trajectory generator (``joint_swing_scale=1.0``, about 9 cm of foot lift): the analytic gradient of the
      velocity reward over a short horizon asks for a lean, not for a step; the generator supplies the step.
    - ``kp=80``: at ANYdrive's kp 40 the legs sag about 0.6 rad under the robot's weight, and with the trajectory
      generator folding two legs at a time the robot sits down within seconds even with zero actions.
    - ``solver_cfg.kappa=200`` (see :class:`AnymalCFlatDiffEnvCfg`).
    - :func:`use_deployment_randomisation`; ``-Play`` evaluates at the nominal values instead (friction 0.8 on a 1.0
      ground, full strength, no latency, mass +-5 kg, no pushes).
    - forward commands only (``lin_vel_y`` and ``ang_vel_z`` fixed at 0, no heading command, no standing envs): the
      trot cannot stand still or turn.

    64 envs on CPU by default (SHAC: 1000 iterations, about 5 minutes).
    """

    num_envs: int = 64
    asset_source: str = "isaaclab"
    kp: float = 80.0

    def __post_init__(self):
        use_forward_trot_recipe(self)
        use_deployment_randomisation(self)


@configclass
class AnymalCFlatTrotDiffEnvCfg_PLAY(AnymalCFlatTrotDiffEnvCfg):
    """Evaluation: hard contact, forward commands in [-1, 1] m/s only, no pushes, no observation noise, nominal
    friction, motor strength and latency."""

    def __post_init__(self):
        super().__post_init__()
        use_play_settings(self)
