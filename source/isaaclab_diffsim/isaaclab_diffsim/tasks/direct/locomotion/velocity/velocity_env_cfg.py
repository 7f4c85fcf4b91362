"""Configuration of the differentiable flat velocity-tracking environment (ANYmal C by default; the robot is
``DiffVelocityEnvCfg.robot``)."""

from __future__ import annotations

import math

from isaaclab.utils import configclass
from isaaclab.utils.noise import UniformNoiseCfg

from .....assets.anydrive import ACTUATOR_PRESETS
from .....assets.anymal_c import ANYMAL_C_ROBOT_CFG
from .....assets.robot_cfg import DiffRobotCfg
from .....envs.diff_direct_env import DiffDirectRLEnvCfg
from .....physics.diffsim_manager_cfg import DiffSimSolverCfg
from .....terrains.terrain_cfg import DiffFootHeightsCfg, DiffHeightScanCfg, DiffTerrainCfg
from .....utils.validation import (
    Rule,
    check,
    check_value,
    finite,
    finite_range,
    in_range,
    is_integer,
    non_negative,
    one_of,
    optional,
    positive,
    sequence,
)
from .mdp.observations import observation_size

BASE_HEIGHT_GROUNDS = ("below", "scan_mean")
"""The grounds ``DiffRewardsCfg.base_height_ground`` may name."""


@configclass
class DiffRewardsCfg:
    """Reward weights of Isaac Lab's flat ANYmal C velocity task (each term is multiplied by the policy dt).

    Not differentiable, so their gradient is stopped: feet_air_time (contact timing). Isaac Lab's
    undesired-contacts term is absent: only the feet collide in this model.
    """

    track_lin_vel_xy_exp: float = 1.0
    track_ang_vel_z_exp: float = 0.5
    tracking_std: float = 0.5
    lin_vel_z_l2: float = -2.0
    ang_vel_xy_l2: float = -0.05
    dof_torques_l2: float = -2.5e-5
    dof_acc_l2: float = -2.5e-7
    action_rate_l2: float = -0.01
    feet_air_time: float = 0.5
    feet_air_time_threshold: float = 0.5
    flat_orientation_l2: float = -5.0
    foot_clearance: float = 0.0
    """Weight of Isaac Lab's Spot ``foot_clearance_reward``: ``exp(-sum_f (h_f - foot_clearance_height)^2
    tanh(foot_clearance_tanh_mult |v_xy,f|) / foot_clearance_std)`` over the feet (h: foot height, v_xy: its
    horizontal velocity over the policy step). Phase free and differentiable: a foot that moves is asked to move
    high. 0 (off) in Isaac Lab's ANYmal task; Isaac Lab's Spot task uses 0.5."""
    foot_clearance_height: float = 0.1
    foot_clearance_std: float = 0.05
    foot_clearance_tanh_mult: float = 2.0
    foot_lift: float = 0.0
    """Weight of a phase-free foot-lift reward: ``min(sum_f min(h_f, foot_lift_height), 2 foot_lift_height) /
    (2 foot_lift_height)`` (h: foot height above the ground), granted only while the command asks to move
    (|command_xy| > 0.1, as feet_air_time). It pays for up to two lifted feet at a time; a quadruped cannot stand on
    two feet, so collecting it means alternating them. Differentiable; 0 (off) in Isaac Lab's task."""
    foot_lift_height: float = 0.08
    foot_lift_max_air_s: float = 0.0
    """A lifted foot counts for ``foot_lift`` only while its air time (since its last contact) is below this [s]; it
    must touch down to count again, so holding a foot up earns nothing. 0: no limit."""
    hanging_foot_height: float = 0.0
    """Weight of ``sum_f |h_f|`` over the feet in the air for longer than ``hanging_foot_air_s`` (h: foot height above
    the ground below it); negative to penalise. A foot that stepped over a drop (a stair or box edge) hangs above
    the lower ground, out of the smoothed contact's reach, and the robot rolls or pitches towards it; this term's
    gradient moves such a foot towards the ground under it (down onto the lower step, or back over the edge).
    Normal swings (about 0.1 s) are not charged; 0.3 s is where ``foot_lift_max_air_s`` stops paying for a lift in
    the reference-free recipe. 0: off."""
    hanging_foot_air_s: float = 0.3
    foot_edge: float = 0.0
    """Weight of how close the standing feet are to terrain edges: ``sum_f e(x_f)`` over the feet in contact (as
    feet_air_time counts them), ``e`` the terrain's :meth:`.HeightMap.edge_map` (the share of edge points within
    ``foot_edge_radius``; an edge point has heights spanning more than ``foot_edge_step`` within that radius);
    negative to penalise. A foot set on a stair or box edge slips off it or hangs over the lower side; the map's
    gradient moves a foot away from the edge, and only the height scan tells the actor where the next edge is. Needs
    a terrain. 0: off."""
    foot_edge_step: float = 0.08
    """[m] height span that makes an edge point; > 0. At 0.08 Isaac Lab's random rough ground (noise up to 0.1 m) and
    slopes have none, its stairs from about 0.08 m up and its boxes (0.05-0.2 m) have them."""
    foot_edge_radius: float = 0.05
    """[m] half-width of the squares of ``foot_edge``'s edge map (rounded to the terrain's heightmap cells); >= 0."""
    joint_deviation_l1: float = 0.0
    """Weight of Isaac Lab's ``joint_deviation_l1``: sum of |q - q_default| over the leg joints (a default-pose
    penalty; 0 in Isaac Lab's flat ANYmal task)."""
    track_lin_vel_xy_l2: float = 0.0
    """Weight of the quadratic xy velocity tracking error ``sum_xy (c - v)^2`` (base frame); negative to penalise.
    Unlike the exponential kernel its gradient grows with the error (``2 (c - v)``), so a robot far from its
    command still gets a gradient towards it (the reference-free anchors track this way). 0: off."""
    track_lin_vel_xy_huber: float = 0.0
    """Weight of the pseudo-Huber xy velocity tracking error ``sqrt(sum_xy (c - v)^2 + delta^2) - delta`` (base frame,
    ``delta``: ``track_lin_vel_huber_delta``); negative to penalise. Its gradient has about unit length for any error
    well above ``delta``, so a slow robot under a slow command is pulled as hard as under a fast one (the quadratic's
    pull shrinks with the error). 0: off."""
    track_lin_vel_huber_delta: float = 0.1
    """[m/s] where ``track_lin_vel_xy_huber`` turns from quadratic to linear; > 0."""
    track_ang_vel_z_l2: float = 0.0
    """Weight of the quadratic yaw-rate tracking error ``(c_z - w_z)^2`` (base frame); negative to penalise. 0: off."""
    base_height_exp: float = 0.0
    """Weight of ``exp(-base_height_sharpness (h - base_height_target)^2)``, h the base height above the ground
    below it. 0: off."""
    base_height_target: float = 0.55
    """[m]; a robot's task sets its own (:func:`~.recipes.use_gradient_gait_rewards`)."""
    base_height_ground: str = "below"
    """The ground that ``base_height_exp`` measures h from: ``"below"``, the terrain at the base's xy; ``"scan_mean"``,
    the mean terrain height over the height-scan points (Isaac Lab's ``base_height_l2`` with a height sensor; needs
    ``height_scan``). Over a step edge the first jumps by the step's height, the second moves by the step's share of
    the scan area. The same on flat ground."""
    base_height_sharpness: float = 10.0
    upright: float = 0.0
    """Weight of the base's uprightness ``-g_z`` (projected gravity's z in the base frame: 1 upright, cos of the
    tilt). 0: off."""
    joint_deviation_l2: float = 0.0
    """Weight of the quadratic default-pose penalty ``sum (q - q_default)^2`` over the leg joints; negative to
    penalise. 0: off."""
    stand_still: float = 0.0
    """Weight of legged_gym's ``stand_still`` penalty: ``sum |q - q_default|`` over the leg joints while the command
    is (near) zero (``|c_xy| < stand_still_command`` and ``|c_z| < stand_still_command``); negative to penalise. A
    robot that steps in place under a zero command pays for every lifted leg. 0: off."""
    stand_still_command: float = 0.1
    stand_still_joint_vel: float = 0.0
    """Weight of ``sum |qd|`` over the leg joints under the same (near) zero command as ``stand_still``; negative to
    penalise. Stepping in place moves the joints however close to the default pose the feet land. 0: off."""
    stand_still_feet_height: float = 0.0
    """Weight of ``sum_f max(h_f, 0)`` (h: foot height above the ground [m]) under the same (near) zero command as
    ``stand_still``; negative to penalise. It charges the lift of a step in place directly. 0: off."""
    termination_penalty: float = 0.0
    """Weight of a failure (base too low or tilted), like Isaac Lab's ``is_terminated`` term; 0 in Isaac Lab's flat
    ANYmal task. Constant per failure, so it has no gradient: it reaches SHAC's actor through the critic."""


@configclass
class DiffObservationsCfg:
    """Observation noise of Isaac Lab's flat velocity MDP: Isaac Lab's noise configs (additive uniform noise, its
    ``uniform_noise`` function) on the policy's terms, drawn from the env's generator. ``enable_corruption=False``
    (the -Play config) turns it off; a term set to None has none. The noise is additive, so gradients pass. The
    ranges are read when the env first corrupts an observation."""

    enable_corruption: bool = True
    base_lin_vel: UniformNoiseCfg | None = UniformNoiseCfg(n_min=-0.1, n_max=0.1)
    base_ang_vel: UniformNoiseCfg | None = UniformNoiseCfg(n_min=-0.2, n_max=0.2)
    projected_gravity: UniformNoiseCfg | None = UniformNoiseCfg(n_min=-0.05, n_max=0.05)
    joint_pos: UniformNoiseCfg | None = UniformNoiseCfg(n_min=-0.01, n_max=0.01)
    joint_vel: UniformNoiseCfg | None = UniformNoiseCfg(n_min=-1.5, n_max=1.5)


@configclass
class DiffCommandsCfg:
    """Base-velocity commands (m/s, m/s, rad/s) with the semantics of Isaac Lab's ``UniformVelocityCommandCfg``:
    resampled at reset and every ``resampling_time_s``; with ``heading_command`` a fraction ``rel_heading_envs`` of
    the envs track a sampled heading, their yaw-rate command being ``clip(heading_control_stiffness *
    wrap_to_pi(heading - robot heading), ang_vel_z)`` (updated every step, a differentiable function of the state);
    a fraction ``rel_standing_envs`` of the envs are told to stand (zero command)."""

    lin_vel_x: tuple[float, float] = (-1.0, 1.0)
    lin_vel_y: tuple[float, float] = (-1.0, 1.0)
    ang_vel_z: tuple[float, float] = (-1.0, 1.0)
    heading: tuple[float, float] = (-math.pi, math.pi)
    resampling_time_s: float = 10.0
    heading_command: bool = True
    heading_control_stiffness: float = 0.5
    rel_heading_envs: float = 1.0
    rel_standing_envs: float = 0.02


@configclass
class DiffEventsCfg:
    """Domain randomization: startup friction, base mass and base CoM per env, reset pose/velocity, interval pushes.

    With ``asset_source="isaaclab"`` the startup and reset terms run Isaac Lab's own event functions on the scene's
    ``Articulation`` through Isaac Lab's ``EventManager`` (``randomize_rigid_body_material`` on the feet,
    ``randomize_rigid_body_mass`` with ``operation="add"`` and ``recompute_inertia=True``, ``randomize_rigid_body_com``,
    ``reset_root_state_uniform``, ``reset_joints_by_scale``; the ranges below are their parameters) and the pushes run
    ``push_by_setting_velocity``: the velocity change it writes is added to the env's state inside the autograd graph.
    The builder-made models (``"urdf"``, ``"usd"``) have no Articulation; the env applies the same randomisations,
    resets and pushes itself.
    """

    foot_friction_range: tuple[float, float] = (0.8, 0.8)
    """Friction coefficient of the feet, per env (``static_friction_range``; Newton has one coefficient). The solver
    combines two shapes' coefficients by their mean, so the feet meet the ground with ``(foot + ground) / 2``
    (MuJoCo takes the maximum, PhysX's default is the mean too)."""
    ground_friction: float | None = None
    """Friction coefficient of the ground plane (None: the asset's, 1.0). Lower it to reach low effective
    coefficients: ground 0.3 with feet in (0.3, 2.1) gives an effective coefficient uniform in (0.3, 1.2)."""
    motor_strength_range: tuple[float, float] = (1.0, 1.0)
    """Motor strength per env, drawn at startup: the leg drives' kp, kd and effort limit are scaled by it (the
    DC-motor speed envelope, ``solver_cfg.actuator_saturation``, is one value for all envs and stays)."""
    action_delay_range: tuple[int, int] = (0, 0)
    """Action latency [control steps] per env, drawn at every reset, uniform over the integers in the range: the
    drives receive the action of ``delay`` steps ago (zeros before the episode's first actions), the observation's
    last action stays the policy's latest. The delayed action is a slice of the actions in the graph, so the gradient
    reaches the action that acts."""
    base_mass_add_range: tuple[float, float] = (-5.0, 5.0)
    """Added to the base's mass [kg] per env at startup (``mass_distribution_params``); the base's inertia is scaled
    by the same ratio. The env refuses a range that makes a mass <= 0."""
    base_com_range: dict[str, tuple[float, float]] = {"x": (-0.05, 0.05), "y": (-0.05, 0.05), "z": (-0.01, 0.01)}
    """Offset [m] added to the base's centre of mass per env at startup (``com_range``; Isaac Lab's flat task)."""
    reset_base_velocity: float = 0.5
    reset_joint_scale_range: tuple[float, float] = (0.5, 1.5)
    push_interval_s: tuple[float, float] = (10.0, 15.0)
    push_velocity: float = 0.5
    """Pushes change the base's x and y velocity [m/s] by amounts uniform in +-push_velocity (``velocity_range``)."""
    leg_kick_interval_s: tuple[float, float] = (1.0, 3.0)
    leg_kick_velocity: float = 0.0
    """Leg kicks (0: off): at intervals drawn from ``leg_kick_interval_s`` the three joints of one random leg per env
    get velocity changes uniform in +-leg_kick_velocity [rad/s], a random bump on that foot as a velocity impulse.
    Like a push, the kick is a constant added inside the autograd graph: the gradient flows through the kicked
    state, so the actor sees how a lifted or displaced foot changes the return."""


@configclass
class DiffGaitCfg:
    """Optional clock-driven trot shaping (off by default: Isaac Lab's flat MDP has no gait clock).

    With ``period_s > 0`` the observation gains (sin, cos) of the gait phase (2 entries) and the
    reward gains ``gait_foot_height_l2``: the squared error between each foot sphere's lowest point and a
    reference height, ``swing_height * sin(2 pi phase_f)`` during the first half of the foot's cycle (swing)
    and 0 during the second (stance). Foot phases are shifted by ``phase_offsets`` (one per leg, in the robot's leg
    order, e.g. LF, RF, LH, RH: diagonal pairs together is a trot). Unlike feet_air_time this term is a
    differentiable function of the state, so it gives SHAC's analytic gradient a stepping pattern to follow.
    """

    period_s: float = 0.0
    swing_height: float = 0.08
    phase_offsets: tuple[float, float, float, float] = (0.0, 0.5, 0.5, 0.0)
    foot_height_weight: float = -40.0
    joint_swing_scale: float = 0.0
    """Joint-space trajectory generator (off at 0): during the swing half of its cycle each leg's position
    targets are bent by ``joint_swing_scale * sin(2 pi phase_f)`` times the leg's default angles, so the policy
    acts as residuals on a stepping pattern (policies modulating trajectory generators, Iscen et al. 2018; ANYmal's
    periodic foot-trajectory generator, Lee et al. 2020). ANYmal C's default pose has HAA 0 and HFE/KFE
    bent in opposite directions, so the scaling folds the leg (lifts the foot) and leaves its abduction alone.
    Part of the action term: a deployment adds the same offsets to the exported policy's targets."""


@configclass
class DiffVelocityEnvCfg(DiffDirectRLEnvCfg):
    """A legged robot (``robot``, ANYmal C by default) on SolverMoreauGS: observation 12 + 3 x joints (48 for
    ANYmal C), one joint-position-target action per joint, policy at 50 Hz. :meth:`use_robot` switches the robot
    with its gains, heights and sizes.

    The solver's parameters are one embedded :class:`DiffSimSolverCfg` (``solver_cfg``), the same config Isaac Lab
    tasks on this backend use, so a policy trained in "smoothed" contact can be evaluated in "hard" contact by
    overriding ``solver_cfg.contact_model``.
    """

    robot: DiffRobotCfg = ANYMAL_C_ROBOT_CFG
    """The robot: asset, base, feet, standing pose; its gains and heights are the defaults of ``kp``, ``kd``,
    ``init_base_height``, ``min_base_height`` and ``solver_cfg.actuator_saturation`` (:meth:`use_robot`)."""
    observation_space: int = observation_size(ANYMAL_C_ROBOT_CFG.num_joints)
    """Isaac Lab's flat-MDP terms (:func:`observation_size` of the robot's joints); the optional gait clock appends 2
    (``env.num_obs``)."""
    action_space: int = ANYMAL_C_ROBOT_CFG.num_joints
    asset_source: str = "urdf"
    """Where the model comes from:

    - ``"urdf"``: our builder on the robot's URDF (fixed joints collapsed: ANYmal C's feet merge into its shanks);
    - ``"usd"``: our builder on the robot's cached USD that Isaac Lab scenes spawn (same bodies, masses and
      kinematics, legs in Isaac Lab's joint order);
    - ``"isaaclab"``: Isaac Lab builds it: the scene that ``robot.isaaclab_scene`` names (ANYmal C's:
      :class:`~isaaclab_diffsim.tasks.direct.locomotion.velocity.config.anymal_c.scene_model.AnymalCScene`, an
      ``InteractiveScene`` cloned into one Newton world per env and finalized by the DiffSim physics manager). Isaac
      Lab's simulation context is a singleton: one such env per process, ``close()`` releases it.

    The robot's ``asset_sources`` lists the values it has.
    """
    env_spacing: float = 2.5
    """Distance [m] between neighbouring robots on Isaac Lab's env-origin grid (``isaaclab.cloner.grid_transforms``,
    as ``InteractiveSceneCfg.env_spacing``): where recordings and visualizers show each robot (``env.env_origins``,
    ``env.joint_q_w()``). The physics runs in each env's own frame, so it does not depend on it."""
    action_scale: float = 0.5
    kp: float = ANYMAL_C_ROBOT_CFG.kp
    """PD stiffness [N m/rad] of every joint (ANYmal C: the ANYdrive's 40)."""
    kd: float = ANYMAL_C_ROBOT_CFG.kd
    actuator_preset: str = ""
    """A named ANYdrive parameter set of :data:`~isaaclab_diffsim.assets.anydrive.ACTUATOR_PRESETS` that replaces
    ``kp`` and ``kd`` per joint and adds the joints' armature and Coulomb friction (``anydrive_simple``: kp 85, kd
    3.5; ``anydrive_sysid``: kp 85, system-identified per-joint kd and friction, armature 0.09). "" uses ``kp``/``kd``
    and no passive joint terms."""
    solver_cfg: DiffSimSolverCfg = DiffSimSolverCfg(actuator_saturation=ANYMAL_C_ROBOT_CFG.actuator_saturation)
    """SolverMoreauGS's parameters: contact model, kappa, margin, sweeps, adjoint, and the motor's DC-motor
    torque-speed envelope (``actuator_saturation``, peak torque [N m] at zero speed; 0: none)."""
    # terminations (failures): base below this height [m], or tilted so that gravity's z in the base frame > this
    min_base_height: float = ANYMAL_C_ROBOT_CFG.min_base_height
    max_gravity_z: float = -0.5
    init_base_height: float = ANYMAL_C_ROBOT_CFG.init_base_height
    observations: DiffObservationsCfg = DiffObservationsCfg()
    rewards: DiffRewardsCfg = DiffRewardsCfg()
    commands: DiffCommandsCfg = DiffCommandsCfg()
    events: DiffEventsCfg = DiffEventsCfg()
    gait: DiffGaitCfg = DiffGaitCfg()
    terrain: DiffTerrainCfg | None = None
    """Generated terrain as the ground (None: the flat ground plane). With it the physics runs in the world frame
    (each base starts above its sub-terrain's origin, ``env_origins``), heights (termination, feet) are measured
    from the terrain below, and ``terrain.curriculum`` moves envs between levels. With ``asset_source="isaaclab"``
    the scene's ``TerrainImporter`` generates it (the same terrain, same seed)."""
    height_scan: DiffHeightScanCfg | None = None
    """Isaac Lab's height scan appended to the observation after the flat-MDP terms (before the gait clock); the
    terrain's (a flat ground: 0) heights. None: no scan."""
    foot_heights: DiffFootHeightsCfg | None = None
    """Each foot's height above the ground below it, appended to the observation after the height scan (before the
    gait clock). None: not observed."""
    terrain_oracle: bool = False
    """A diagnostic, not deployable: the one-hot sub-terrain type of the tile below the base (one entry per
    sub-terrain of ``terrain.generator`` and one for the border, :class:`~isaaclab_diffsim.terrains.TileTypes`),
    appended after the foot heights (before the gait clock). It tells whether a policy that knows the terrain type
    outright walks differently per type; a robot does not have it, so such a policy is not exported. Needs a
    terrain."""

    def use_robot(self, robot: DiffRobotCfg) -> None:
        """Make ``robot`` the task's robot: its gains, envelope and heights become ``kp``, ``kd``,
        ``solver_cfg.actuator_saturation``, ``init_base_height``, ``min_base_height``, and the observation and action
        sizes follow its joints (call it in a robot task's ``__post_init__``, before the task's own choices)."""
        self.robot = robot.copy()
        self.kp, self.kd = robot.kp, robot.kd
        self.solver_cfg.actuator_saturation = robot.actuator_saturation
        self.init_base_height, self.min_base_height = robot.init_base_height, robot.min_base_height
        self.action_space = robot.num_joints
        self.observation_space = observation_size(robot.num_joints)

    def use_evaluation_settings(self) -> None:
        """The ``-Play`` settings: the task's command ranges and heading commands (as Isaac Lab's play configs keep
        them) without standing envs, so every episode tracks a drawn command; no pushes or leg kicks, no
        observation noise. The contact model is left to the caller."""
        self.commands.rel_standing_envs = 0.0
        self.events.push_velocity = 0.0
        self.events.leg_kick_velocity = 0.0
        self.observations.enable_corruption = False

    def validate_values(self) -> None:
        """Raise ValueError on values that cannot work (checked again after overrides)."""
        check(
            self,
            {
                "asset_source": one_of(*self.robot.asset_sources),
                "actuator_preset": Rule(
                    f"'' or one of {sorted(ACTUATOR_PRESETS)}", lambda v: not v or v in ACTUATOR_PRESETS
                ),
            },
        )
        super().validate_values()
        if self.terrain is not None:
            self.terrain.validate_values("terrain.")
        if self.height_scan is not None:
            self.height_scan.validate_values("height_scan.")
            if self.terrain is not None:
                self.terrain.check_scan_fits(self.height_scan)
        if self.foot_heights is not None:
            self.foot_heights.validate_values("foot_heights.")
        if self.terrain_oracle and self.terrain is None:
            raise ValueError("terrain_oracle: True needs a terrain (terrain is None)")
        nj, legs = self.robot.num_joints, tuple(self.robot.legs)
        ranges = [
            "commands.lin_vel_x",
            "commands.lin_vel_y",
            "commands.ang_vel_z",
            "commands.heading",
            "events.base_mass_add_range",
            "events.reset_joint_scale_range",
        ]
        check(
            self,
            {
                "observation_space": Rule(
                    f"{observation_size(nj)} (12 + 3 x the robot's {nj} joints)", lambda v: v == observation_size(nj)
                ),
                "action_space": Rule(f"{nj} (one per joint of the robot)", lambda v: v == nj),
                "solver_cfg.actuator_saturation": non_negative,
                "gait.period_s": non_negative,
                "gait.swing_height": non_negative,
                "gait.joint_swing_scale": non_negative,
                "gait.phase_offsets": Rule(f"{len(legs)} finite numbers {legs}", sequence(finite, length=len(legs))),
                "env_spacing": non_negative,
                "kp": positive,
                "action_scale": positive,
                "rewards.tracking_std": positive,  # 0 divides by zero in the tracking rewards
                "rewards.foot_lift_height": positive,
                "rewards.track_lin_vel_huber_delta": positive,  # 0: the term's gradient is undefined at e = 0
                "rewards.base_height_sharpness": non_negative,
                "rewards.base_height_target": finite,
                "rewards.base_height_ground": one_of(*BASE_HEIGHT_GROUNDS),
                "rewards.stand_still_command": non_negative,
                "rewards.foot_lift_max_air_s": non_negative,
                "rewards.hanging_foot_air_s": non_negative,
                "rewards.foot_edge_step": positive,
                "rewards.foot_edge_radius": non_negative,
                "commands.resampling_time_s": positive,
                "init_base_height": positive,
                "kd": non_negative,
                "min_base_height": non_negative,
                "events.push_velocity": non_negative,
                "events.leg_kick_velocity": non_negative,
                "events.reset_base_velocity": non_negative,
                "commands.rel_heading_envs": in_range(0, 1),
                "commands.rel_standing_envs": in_range(0, 1),
                "events.base_com_range": Rule(
                    "a dict that takes the keys x, y, z (any of them)", lambda d: set(d) <= {"x", "y", "z"}
                ),
                **dict.fromkeys(
                    ranges + [f"events.base_com_range.{k}" for k in self.events.base_com_range], finite_range
                ),
                "events.ground_friction": optional(non_negative),
                "events.motor_strength_range": Rule(
                    "(low, high) with finite 0 < low <= high", lambda r: finite_range(r) and r[0] > 0
                ),
                "events.action_delay_range": Rule(
                    "(low, high) integers with 0 <= low <= high",
                    lambda r: len(r) == 2 and all(is_integer(v) for v in r) and 0 <= r[0] <= r[1],
                ),
                "events.foot_friction_range": Rule(
                    "(low, high) with finite 0 <= low <= high", lambda r: finite_range(r) and r[0] >= 0
                ),
                **dict.fromkeys(
                    ["events.push_interval_s", "events.leg_kick_interval_s"],
                    Rule("(low, high) with finite 0 < low <= high", lambda r: finite_range(r) and r[0] > 0),
                ),
            },
        )
        if self.gait.period_s == 0:
            check_value(
                "gait.joint_swing_scale",
                self.gait.joint_swing_scale,
                Rule("0 while gait.period_s is 0 (the swing needs the gait clock, period_s > 0)", lambda v: v == 0),
            )
        if self.height_scan is None:
            check_value(
                "rewards.base_height_ground",
                self.rewards.base_height_ground,
                Rule("'below' without a height_scan ('scan_mean' averages the scan's points)", lambda v: v == "below"),
            )
        if self.terrain is None:
            check_value(
                "rewards.foot_edge",
                self.rewards.foot_edge,
                Rule("0 without a terrain (the edges are the terrain's)", lambda v: v == 0),
            )
        check_value(
            "min_base_height",
            self.min_base_height,
            Rule(
                f"below init_base_height ({self.init_base_height!r}), or every episode ends at its first step",
                lambda v: v < self.init_base_height,
            ),
        )
