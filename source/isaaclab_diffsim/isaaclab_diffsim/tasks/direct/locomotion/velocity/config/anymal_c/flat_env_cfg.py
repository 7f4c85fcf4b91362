"""ANYmal C flat velocity tracking on the differentiable backend (direct env): the reference-free task and the
trot-generator task."""

from isaaclab.utils import configclass

from ...recipes import (
    use_forward_trot_recipe,
    use_gradient_gait_recipe,
    use_play_settings,
)
from ...velocity_env_cfg import DiffVelocityEnvCfg

TROT_PERIOD_S = 0.6
"""ANYmal C's trot period [s] (``gait.period_s``)."""
TROT_SWING_SCALE = 1.0
"""ANYmal C's trajectory-generator scale (``gait.joint_swing_scale``): about 9 cm of foot lift."""


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


@configclass
class AnymalCFlatDiffEnvCfg(DiffVelocityEnvCfg):
    """ANYmal C walking from smoothed-contact gradients alone: no trajectory generator, no gait clock.

    What differs from :class:`DiffVelocityEnvCfg` (Isaac Lab's flat MDP) and why:

    - rewards (:func:`use_gradient_gait_rewards`): quadratic velocity tracking in place of Isaac Lab's exponential
      kernel, whose gradient vanishes at the errors a robot standing under a command has (0.15 at 1 m/s, 0.0015 at
      1.5 m/s); a base-height kernel, uprightness and a quadratic default-pose penalty; no air-time term (it charges
      every short first step). With Isaac Lab's rewards and no generator the policy crouches and shuffles at any
      scale (docs/results.md "recipe").
    - commands: Isaac Lab's omnidirectional ranges and heading commands, 40 % standing envs (Isaac Lab: 2 %),
      ``stand_still`` -2 and ``stand_still_joint_vel`` -0.03: at 20 % and -1 the policy steps in place under a zero
      command (docs/results.md "walking"), and without the joint-speed charge one seed in four still does
      (docs/results.md "standing_robust").
    - ``kp=80``: at ANYdrive's kp 40 the legs sag about 0.6 rad under the robot's weight.
    - ``solver_cfg.kappa=200``: a wider sigmoid than the class default (1000): the contact weight is still 0.12 at
      1 cm of separation (4.5e-5 at kappa 1000), so a lifted foot keeps a gradient towards the ground.
    - :func:`use_deployment_randomisation`; ``-Play`` evaluates at the nominal values instead.
    - 1024 envs (SHAC: 1000 iterations of horizon 12, 12.3 M samples).

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
        use_forward_trot_recipe(self, TROT_PERIOD_S, TROT_SWING_SCALE)
        use_deployment_randomisation(self)


@configclass
class AnymalCFlatTrotDiffEnvCfg_PLAY(AnymalCFlatTrotDiffEnvCfg):
    """Evaluation: hard contact, forward commands in [-1, 1] m/s only, no pushes, no observation noise, nominal
    friction, motor strength and latency."""

    def __post_init__(self):
        super().__post_init__()
        use_play_settings(self)
