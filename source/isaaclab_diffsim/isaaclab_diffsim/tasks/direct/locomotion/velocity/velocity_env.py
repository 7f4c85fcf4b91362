"""Differentiable velocity-tracking task of a legged robot on :class:`~isaaclab_diffsim.envs.DiffDirectRLEnv`.

Observations, rewards and terminations follow Isaac Lab's flat velocity MDP; its terms are the functions of
:mod:`.mdp`, which this env calls on its state. The actuator is the PD drive with the DC-motor envelope the solver
applies (its torque is recomputed in torch for the torque reward). Everything robot-specific comes from
``cfg.robot`` and the model's ``RobotLayout``. See ``docs/tasks.md`` for what differs from Isaac Lab's task and why.
"""

from __future__ import annotations

import torch
import warp as wp
from isaaclab.utils.noise import UniformNoiseCfg
from isaaclab.utils.string import string_to_callable

from .....assets.robot_builder import build_robot_model
from .....envs.diff_direct_env import DiffDirectRLEnv
from .....envs.seeding import global_rng_seeded
from .....solver import SolverMoreauGS
from .....terrains import (
    HeightMap,
    TerrainLevels,
    TileTypes,
    generate_terrain,
    generator_cfg,
    grid_pattern,
    height_scan,
    terrain_level_moves,
)
from .....utils.leapp_support import tracing as leapp_tracing
from . import mdp
from .builder_events import BuilderEvents
from .drives import configure_drives, randomise_ground_and_motors
from .velocity_env_cfg import DiffVelocityEnvCfg


class DiffVelocityEnv(DiffDirectRLEnv):
    """obs (N, 12 + 3 x joints), actions (N, joints) joint-position offsets (scaled by ``action_scale``). Per-foot
    tensors are (N, feet, ...) in ``cfg.robot.legs`` order.

    With the optional gait clock (``cfg.gait.period_s > 0``) the observation gains 2 entries: (sin, cos) of the phase.
    """

    cfg_class = DiffVelocityEnvCfg
    REWARD_PARAMETERS = frozenset(
        {
            "tracking_std",
            "feet_air_time_threshold",
            "foot_clearance_height",
            "foot_clearance_std",
            "foot_clearance_tanh_mult",
            "foot_lift_height",
            "foot_lift_max_air_s",
            "hanging_foot_air_s",
            "base_height_target",
            "base_height_sharpness",
            "base_height_ground",
            "stand_still_command",
            "track_lin_vel_huber_delta",
            "foot_edge_step",
            "foot_edge_radius",
        }
    )
    """The fields of ``cfg.rewards`` that parametrise a term; every other field is a term's weight."""
    STATE_FIELDS = (
        "q",
        "qd",
        "last_actions",
        "commands",
        "feet_air_time",
        "episode_length_buf",
        "command_time",
        "push_time",
        "heading_target",
        "is_heading_env",
        "is_standing_env",
        "prev_foot_centre",
        "leg_kick_time",
        "action_queue",
        "action_delay",
        "terrain_level",
    )

    def __init__(self, cfg: DiffVelocityEnvCfg | None = None, render_mode: str | None = None, **overrides):
        """``cfg`` None: the task's registered config when gymnasium passes ``env_cfg_entry_point`` (``gym.make(id)``),
        else the class defaults. Other keyword arguments override config fields (``gym.make(id, num_envs=4)``)."""
        self.isaaclab_scene = None
        self.terrain = None
        """The generated terrain (``cfg.terrain``; None: the ground plane)."""
        self.tile_types: TileTypes | None = None
        """The sub-terrain types that ``cfg.terrain_oracle`` observes (None while it is off)."""
        self.leapp_node: str | None = None
        """Name of the LEAPP graph node while an export traces this env (:mod:`isaaclab_diffsim.deploy.leapp_pipeline`);
        None otherwise, and the annotations are skipped."""
        super().__init__(cfg, render_mode, **overrides)
        cfg, n, dev = self.cfg, self.num_envs, self.device
        model, layout = self.model, self.layout
        nd, nj = layout.dofs_per_world, layout.num_joints
        self._check_sizes()
        self.default_q = self.q[0].clone()
        self.heightmap, self.terrain_levels = self._terrain_queries()
        self.foot_edge_map = self._foot_edge_map()
        if cfg.terrain_oracle:
            origins = torch.as_tensor(self.terrain.origins, dtype=torch.float32, device=dev)
            self.tile_types = TileTypes(cfg.terrain.generator, origins, self.terrain.sub_terrain_size)
        self.terrain_level = (
            torch.zeros(n, dtype=torch.long, device=dev)
            if self.terrain_levels is None
            else self.terrain_levels.initial_levels(cfg.terrain.max_init_terrain_level)
        )
        """Each env's terrain level (row of the terrain's sub-terrains; 0 without a terrain)."""
        self.env_origins = self._env_origins()
        if self.terrain is not None:  # the physics runs in the world frame: each base above its origin
            self.q = torch.cat([self.q[:, 0:3] + self.env_origins, self.q[:, 3:]], 1)
        self.scan_pattern = (
            None if cfg.height_scan is None else grid_pattern(cfg.height_scan.size, cfg.height_scan.resolution, dev)
        )
        self.default_leg = self.q[0, 7:].clone()
        self.effort_limit = wp.to_torch(model.joint_effort_limit, requires_grad=False).view(n, nd)[0, 6:].clone()
        self.velocity_limit = wp.to_torch(model.joint_velocity_limit, requires_grad=False).view(n, nd)[0, 6:].clone()
        self._configure_actuator()
        self.events = self._build_events()
        """The startup, reset and push events: Isaac Lab's event functions on the scene's Articulation
        (``asset_source="isaaclab"``: the scene) or :class:`BuilderEvents`; one interface."""
        self.events.apply_startup_events()
        self._randomise_ground_and_motors()
        self.foot_bodies = torch.as_tensor(layout.foot_bodies, device=dev).long()
        self.foot_centers = torch.tensor(layout.foot_centers, device=dev).repeat(n, 1)
        self.gait_offsets = torch.tensor(cfg.gait.phase_offsets, device=dev)
        self.joint_legs = torch.tensor(layout.joint_legs(), device=dev)
        self.foot_radius = layout.foot_radius
        nf = self.num_feet = len(layout.foot_names)

        self.qd = torch.zeros(n, nd, device=dev)
        self.last_actions = torch.zeros(n, nj, device=dev)
        self.commands = torch.zeros(n, 3, device=dev)
        self.heading_target = torch.zeros(n, device=dev)
        self.is_heading_env = torch.zeros(n, dtype=torch.bool, device=dev)
        self.is_standing_env = torch.zeros(n, dtype=torch.bool, device=dev)
        self.command_time = torch.zeros(n, device=dev)
        self.push_time = torch.zeros(n, device=dev)
        self.leg_kick_time = torch.zeros(n, device=dev)
        self.feet_air_time = torch.zeros(n, nf, device=dev)
        self.action_queue = torch.zeros(n, cfg.events.action_delay_range[1], nj, device=dev)
        """The last actions, newest first, as many as the longest delay (``events.action_delay_range``)."""
        self.action_delay = torch.zeros(n, dtype=torch.long, device=dev)
        self.term_names = [k for k in vars(cfg.rewards) if k not in self.REWARD_PARAMETERS]
        if cfg.gait.period_s > 0:
            self.term_names.append("gait_foot_height_l2")
        self.episode_sums = {k: torch.zeros(n, device=dev) for k in self.term_names}
        self._base_cache = None
        self.prev_foot_centre = torch.zeros(n, nf, 3, device=dev)
        """Foot sphere centres after the last step (the feet's velocities in ``foot_clearance``; not kept up to date
        while that term is off)."""
        self._obs_noise: UniformNoiseCfg | None = None
        """The observation noise (built from ``cfg.observations`` at its first use)."""

    def _setup_scene(self):
        """The robot's worlds: Isaac Lab's scene (``asset_source="isaaclab"``: ``cfg.robot.isaaclab_scene``, the
        solver is its physics manager's) or our builder on ``cfg.robot`` (``"urdf"``, ``"usd"``)."""
        cfg = self.cfg
        if cfg.asset_source == "isaaclab":
            if not cfg.robot.isaaclab_scene:
                raise ValueError(f"asset_source='isaaclab': robot {cfg.robot.name!r} names no Isaac Lab scene")
            self.isaaclab_scene = string_to_callable(cfg.robot.isaaclab_scene)(
                cfg.num_envs,
                str(self.device),
                cfg.sim_dt,
                kp=cfg.kp,
                kd=cfg.kd,
                base_height=cfg.init_base_height,
                solver_cfg=cfg.solver_cfg,
                env_spacing=cfg.env_spacing,
                terrain=None
                if cfg.terrain is None
                else generator_cfg(cfg.terrain.generator, cfg.seed, cfg.terrain.curriculum),
            )
            scene = self.isaaclab_scene
            self.terrain = scene.terrain
            return scene.model, scene.layout, scene.solver  # the physics manager's solver: one per model
        model, layout = build_robot_model(
            cfg.robot,
            num_worlds=cfg.num_envs,
            device=str(self.device),
            kp=cfg.kp,
            kd=cfg.kd,
            base_height=cfg.init_base_height,
            requires_grad=False,  # states and controls carry the gradients; the model parameters take none
            source=cfg.asset_source,
            terrain=self._generate_terrain(),
        )
        return model, layout, SolverMoreauGS(model, **cfg.solver_cfg.solver_kwargs())

    def _generate_terrain(self):
        """``cfg.terrain``'s terrain (seeded with ``cfg.seed``) as a Newton mesh, kept as ``terrain``; None without."""
        if self.cfg.terrain is None:
            return None
        t = self.cfg.terrain
        self.terrain = generate_terrain(t.generator, self.cfg.seed, t.curriculum)
        return self.terrain.newton_mesh()

    def _terrain_queries(self) -> tuple[HeightMap | None, TerrainLevels | None]:
        """The terrain's heightfield and its sub-terrain origins per env (None, None without a terrain)."""
        if self.terrain is None:
            return None, None
        t, dev = self.terrain, self.device
        heights = HeightMap.from_mesh(t.vertices, t.triangles, self.cfg.terrain.heightmap_resolution, dev)
        origins = torch.as_tensor(t.origins, dtype=torch.float32, device=dev)
        return heights, TerrainLevels(origins, self.num_envs, self._gen)

    def _foot_edge_map(self) -> HeightMap | None:
        """The terrain's edge indicator that ``rewards.foot_edge`` reads (:meth:`.HeightMap.edge_map`); None while
        the term is off."""
        w = self.cfg.rewards
        if w.foot_edge == 0.0:
            return None
        return self.heightmap.edge_map(w.foot_edge_radius, w.foot_edge_step)

    def ground_height(self, xy: torch.Tensor) -> torch.Tensor:
        """Ground height [m] below the points ``xy`` (..., 2): the terrain's (differentiable w.r.t. ``xy``), or 0."""
        return torch.zeros_like(xy[..., 0]) if self.heightmap is None else self.heightmap(xy)

    def height_above_ground(self, pos: torch.Tensor) -> torch.Tensor:
        """Height [m] of the points ``pos`` (..., 3) above the ground below them (their z on the ground plane)."""
        return mdp.height_above_ground(pos, self.heightmap)

    def _configure_actuator(self) -> None:
        """The PD gains per joint (``kp_leg``, ``kd_leg``) and, with ``cfg.actuator_preset``, the preset's gains,
        armature and joint friction written into the model the solver steps (and into ``layout``)."""
        c = self.cfg
        self.kp_leg, self.kd_leg, self.layout, changed = configure_drives(
            self.model, self.layout, c.kp, c.kd, c.actuator_preset, self.device
        )
        if changed:
            self.sim.notify_model_changed(0)

    def _randomise_ground_and_motors(self) -> None:
        """``events.ground_friction`` on the ground plane and a motor strength per env (``motor_strength``, from
        ``events.motor_strength_range``) scaling the leg drives' kp, kd and effort limit in the model."""
        self.motor_strength, changed = randomise_ground_and_motors(
            self.model, self.layout, self.cfg.events, self._uniform, self.device
        )
        if changed:
            self.sim.notify_model_changed(0)

    def _num_observations(self) -> int:
        scan = (
            0
            if self.cfg.height_scan is None
            else len(grid_pattern(self.cfg.height_scan.size, self.cfg.height_scan.resolution))
        )
        feet = 0 if self.cfg.foot_heights is None else len(self.layout.foot_names)
        oracle = TileTypes.encoding_size(self.cfg.terrain.generator) if self.cfg.terrain_oracle else 0
        return int(self.cfg.observation_space) + scan + feet + oracle + (2 if self.cfg.gait.period_s > 0 else 0)

    def _observation_terms(self) -> dict[str, slice]:
        """Entries of each term of the observation (Isaac Lab's flat-MDP terms, before the gait clock), sized by the
        layout's joint count."""
        return mdp.observation_terms(self.layout.num_joints)

    @property
    def scan_columns(self) -> slice | None:
        """The height scan's entries of the observation (after the flat-MDP terms, before the gait clock); None
        without a scan."""
        if self.scan_pattern is None:
            return None
        start = self._observation_terms()["actions"].stop
        return slice(start, start + len(self.scan_pattern))

    def _after_scan(self) -> int:
        """Index of the first observation entry after the flat-MDP terms and the height scan."""
        return self._observation_terms()["actions"].stop + (0 if self.scan_pattern is None else len(self.scan_pattern))

    @property
    def foot_height_columns(self) -> slice | None:
        """The ``foot_heights`` entries of the observation (after the height scan, before the gait clock); None
        without them."""
        if self.cfg.foot_heights is None:
            return None
        start = self._after_scan()
        return slice(start, start + self.num_feet)

    @property
    def terrain_type_columns(self) -> slice | None:
        """The ``terrain_oracle`` entries of the observation (after the foot heights, before the gait clock); None
        while it is off."""
        if self.tile_types is None:
            return None
        start = self._after_scan() + (0 if self.cfg.foot_heights is None else self.num_feet)
        return slice(start, start + self.tile_types.num_entries)

    def _check_sizes(self) -> None:
        """The config's observation and action sizes must be those of the model's layout."""
        obs = self._observation_terms()["actions"].stop
        if (self.cfg.observation_space, self.cfg.action_space) != (obs, self.layout.num_joints):
            raise ValueError(
                f"observation_space and action_space are {obs} and {self.layout.num_joints} for this "
                f"model, got {self.cfg.observation_space!r}, {self.cfg.action_space!r}"
            )

    def close(self) -> None:
        """Release the Isaac Lab simulation context of ``asset_source='isaaclab'`` (nothing otherwise)."""
        if self.isaaclab_scene is not None:
            self.isaaclab_scene.close()
            self.isaaclab_scene = None

    def set_contact_model(self, contact_model: str, kappa: float | None = None) -> None:
        """Switch the solver's contact model (e.g. evaluate a smoothed-trained policy in hard contact): the model's
        solver is replaced (in the Isaac Lab scene's physics manager too), never doubled."""
        self.cfg.solver_cfg.contact_model = contact_model
        if kappa is not None:
            self.cfg.solver_cfg.kappa = kappa
        self.cfg.validate_values()
        solver = SolverMoreauGS(self.model, **self.cfg.solver_cfg.solver_kwargs())
        if self.isaaclab_scene is not None:
            self.isaaclab_scene.set_solver(solver)
        self.sim.solver = solver

    # ------------------------------------------------------------------ DirectRLEnv hooks
    def _pre_physics_step(self, actions: torch.Tensor) -> None:
        """Joint targets: default pose + action_scale * actions (+ the trajectory generator's offsets)."""
        self.actions = actions
        targets_leg = mdp.joint_targets(self.default_leg, self.cfg.action_scale, self._delayed(actions))
        if self.cfg.gait.joint_swing_scale > 0:
            targets_leg = targets_leg + self.trajectory_generator_offsets()
        self._targets_leg = targets_leg
        self._prev_qd_leg = self.qd[:, 6:]
        if self.leapp_node is not None and leapp_tracing():
            self._trace_targets(actions)

    def _trace_targets(self, actions: torch.Tensor) -> None:
        from .leapp_trace import traced_targets

        traced_targets(self, actions)

    def _delayed(self, actions: torch.Tensor) -> torch.Tensor:
        """The action each env's drives receive: that of ``action_delay`` steps ago (``events.action_delay_range``)."""
        if self.action_queue.shape[1] == 0:
            return actions
        acting, self.action_queue = mdp.delayed_actions(actions, self.action_queue, self.action_delay)
        return acting

    def _apply_action(self) -> torch.Tensor:
        return torch.cat([self.q.new_zeros(self.num_envs, 7), self._targets_leg], dim=1)

    def _get_dones(self) -> tuple[torch.Tensor, torch.Tensor]:
        """Failures (base below ``min_base_height`` or tilted past ``max_gravity_z``) and time-outs (bool: no graph).
        ``failure_tilted`` keeps which envs were tilted (the cause of a failure, for the evaluations)."""
        base_height = self.height_above_ground(self.q[:, 0:3])
        c, gravity = self.cfg, self._base()[2]
        self.reset_terminated = mdp.base_failure(base_height, gravity, c.min_base_height, c.max_gravity_z)
        self.failure_tilted = mdp.base_tilted(gravity, c.max_gravity_z)
        self.reset_time_outs = mdp.time_out(self.episode_length_buf, self.max_episode_length)
        return self.reset_terminated, self.reset_time_outs

    def _get_rewards(self) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        reward, terms = self._rewards(
            self.q, self.qd, self._base(), self._prev_qd_leg, self.actions, self._targets_leg, self.body_q
        )
        penalty = self.cfg.rewards.termination_penalty
        if penalty != 0.0:  # Isaac Lab's is_terminated term; constant per failure, so no gradient
            terms["termination_penalty"] = penalty * self.reset_terminated.float() * self.step_dt
            reward = reward + terms["termination_penalty"]
        self.last_actions = self.actions  # the action rate of the next step, and the observation's last action
        self._update_commands()  # for the observation, as Isaac Lab's command manager does before it
        return reward, terms

    def _get_observations(self) -> torch.Tensor:
        return self._observations(self.q, self.qd, self.last_actions, self._base())

    def _reset_idx(self, envs: torch.Tensor) -> None:
        with torch.no_grad():
            if self.terrain_levels is not None and self.cfg.terrain.curriculum:
                self._update_terrain_levels(envs)
            q_new, qd_new = self.events.apply_reset_events(envs, self.common_step_counter)
        q_new, qd_new = q_new.to(self.device), qd_new.to(self.device)
        if self.terrain is not None:
            q_new = torch.cat([q_new[:, 0:3] + self.env_origins, q_new[:, 3:]], 1)
        d = envs[:, None]
        self.q = torch.where(d, q_new, self.q)
        self.qd = torch.where(d, qd_new, self.qd)
        self._refresh_body_poses(envs)
        self._reset_buffers(envs)

    def _update_terrain_levels(self, envs: torch.Tensor) -> None:
        """Isaac Lab's ``terrain_levels_vel`` for the envs of ``envs`` that ran (an env reset before its first step
        keeps its level); their origins follow their new levels."""
        distance = torch.linalg.norm(self.q[:, 0:2] - self.env_origins[:, 0:2], dim=1)
        up, down = terrain_level_moves(
            distance, self.commands[:, 0:2], self.terrain.sub_terrain_size[0], self.cfg.episode_length_s
        )
        ran = envs & (self.episode_length_buf > 0)
        self.terrain_level = self.terrain_levels.moved(self.terrain_level, ran, up, down)
        self.env_origins = self._env_origins()

    def _episode_log(self, done: torch.Tensor) -> dict:
        """The episode statistics, with the terrain's mean level (``Curriculum/terrain_levels``, Isaac Lab's key)."""
        log = super()._episode_log(done)
        if self.terrain is not None:
            log["Curriculum/terrain_levels"] = float(self.terrain_level.float().mean())
        return log

    def set_state(self, state: dict) -> None:
        """:meth:`DiffDirectRLEnv.set_state` (and the body poses of the state, where ``cfg.foot_heights`` reads
        them); snapshots saved before ``prev_foot_centre`` or ``leg_kick_time`` existed get zeros for them."""
        if "prev_foot_centre" not in state:
            state = {**state, "prev_foot_centre": torch.zeros_like(self.prev_foot_centre)}
        if "leg_kick_time" not in state:
            state = {**state, "leg_kick_time": torch.zeros(self.num_envs, device=self.device)}
        if "action_queue" not in state:
            state = {**state, "action_queue": torch.zeros_like(self.action_queue)}
            state["action_delay"] = torch.zeros_like(self.action_delay)
        if "terrain_level" not in state:
            state = {**state, "terrain_level": torch.zeros_like(self.terrain_level)}
        self.q = state["q"].clone().to(self.device)
        self._refresh_body_poses()  # before an observation is recomputed from the state
        super().set_state(state)
        if self.terrain is not None:
            self.env_origins = self._env_origins()

    def _apply_interval_events(self) -> bool:
        return self._interval_events()

    def _base(self):
        """Base frame quantities of the current (q, qd), computed once per state."""
        cache = self._base_cache
        if cache is None or cache[0] is not self.q or cache[1] is not self.qd:
            self._base_cache = cache = (self.q, self.qd, self._base_frame(self.q, self.qd))
        return cache[2]

    # ------------------------------------------------------------------ MDP (the terms: .mdp)
    @staticmethod
    def _base_frame(q, qd):
        """Base linear and angular velocity and projected gravity, in the base frame (:func:`.mdp.base_frame`)."""
        return mdp.base_frame(q, qd)

    def _observations(self, q, qd, last_actions, base=None):
        if self.leapp_node is not None and leapp_tracing():
            return self._traced_observations(q, qd, last_actions)
        base = base if base is not None else mdp.base_frame(q, qd)
        obs = mdp.policy_observation(base, self.commands, q[:, 7:] - self.default_leg, qd[:, 6:], last_actions)
        if self.cfg.observations.enable_corruption:
            obs = self._corrupt(obs)
        if self.cfg.height_scan is not None:
            obs = torch.cat([obs, self._height_scan(q)], 1)
        if self.cfg.foot_heights is not None:
            obs = torch.cat([obs, self._observed_foot_heights()], 1)
        if self.tile_types is not None:
            obs = torch.cat([obs, self.tile_types.one_hot(q[:, 0:2])], 1)
        if self.cfg.gait.period_s > 0:
            obs = torch.cat([obs, mdp.gait_clock(self._gait_phase())], 1)
        return obs

    def _height_scan(self, q: torch.Tensor) -> torch.Tensor:
        """Isaac Lab's ``height_scan`` of ``cfg.height_scan`` at the bases of ``q``: (noise, then) clip."""
        c = self.cfg.height_scan
        scan = height_scan(q[:, 0:3], q[:, 3:7], self.scan_pattern, self.ground_height, c.offset)
        if c.noise is not None and self.cfg.observations.enable_corruption:
            with global_rng_seeded(self.device, self._draw_seed()):
                scan = c.noise.func(scan, c.noise)
        return scan.clamp(-c.clip, c.clip)

    def _observed_foot_heights(self) -> torch.Tensor:
        """The ``foot_heights`` observation (``cfg.foot_heights``) of the poses ``body_q``: (noise, then) clip, scale.
        ``body_q`` is the last step's (differentiable), or forward kinematics of the state after a reset or
        :meth:`set_state`."""
        c = self.cfg.foot_heights
        h = self.foot_heights(self.body_q)
        if c.noise is not None and self.cfg.observations.enable_corruption:
            with global_rng_seeded(self.device, self._draw_seed()):
                h = c.noise.func(h, c.noise)
        return h.clamp(-c.clip, c.clip) * c.scale

    def _refresh_body_poses(self, envs: torch.Tensor | None = None) -> None:
        """``body_q`` of the envs of the bool mask ``envs`` (all: None) from forward kinematics of ``q``; kept only
        where an observation reads it (``cfg.foot_heights``)."""
        if self.cfg.foot_heights is None:
            return
        fk = self.sim.forward_kinematics(self.q).view(self.num_envs, -1, 7)
        if envs is None or self.body_q is None:
            self.body_q = fk.view(-1, 7)
        else:
            self.body_q = torch.where(envs[:, None, None], fk, self.body_q.view(self.num_envs, -1, 7)).view(-1, 7)

    def _traced_observations(self, q, qd, last_actions):
        from .leapp_trace import traced_observations

        return traced_observations(self, q, qd, last_actions)

    def _corrupt(self, obs: torch.Tensor) -> torch.Tensor:
        """Isaac Lab's ``uniform_noise`` on the observation. It draws from torch's global generator, which is seeded
        from the env's generator for the call and restored afterwards, so the env stays reproducible."""
        if self._obs_noise is None:
            self._obs_noise = mdp.observation_noise(self._observation_terms(), self.cfg.observations, self.device)
        seed = self._draw_seed()
        with global_rng_seeded(self.device, seed):
            return self._obs_noise.func(obs, self._obs_noise)

    def _gait_phase(self) -> torch.Tensor:
        """Gait clock in [0, 1): episode time over the gait period (restarts at every reset)."""
        return mdp.gait_phase(self.episode_length_buf, self.step_dt, self.cfg.gait.period_s)

    def trajectory_generator_offsets(self) -> torch.Tensor:
        """Joint-target offsets (num_envs, joints) of the gait's trajectory generator at the current state's phase:
        ``joint_swing_scale * max(sin(2 pi phase_f), 0) * default_leg`` for the joints of leg f."""
        scale = self.cfg.gait.joint_swing_scale
        return mdp.trajectory_generator_offsets(self._swing_profile(0), self.joint_legs, self.default_leg, scale)

    def _swing_profile(self, steps_ahead: int) -> torch.Tensor:
        """Per foot (num_envs, feet) ``max(sin(2 pi phase_f), 0)``: a half sine during the swing
        half of the foot's cycle, 0 in stance, at the clock of the state ``steps_ahead`` steps from now."""
        t = (self.episode_length_buf.float() + steps_ahead) * self.step_dt / self.cfg.gait.period_s
        return mdp.swing_profile(mdp.gait_phases(t[:, None], self.gait_offsets))

    def foot_centres(self, body_q: torch.Tensor) -> torch.Tensor:
        """Centre of each foot sphere, (num_envs, feet, 3) in leg order."""
        return mdp.foot_centres(body_q, self.foot_bodies, self.foot_centers, self.num_envs, self.num_feet)

    def foot_heights(self, body_q: torch.Tensor) -> torch.Tensor:
        """Height of each foot sphere's lowest point above the ground, (num_envs, feet) in leg order."""
        return self.height_above_ground(self.foot_centres(body_q)) - self.foot_radius

    def _gait_foot_height_error(self, body_q: torch.Tensor) -> torch.Tensor:
        """:func:`.mdp.gait_foot_height_l2` of the feet; the phase is that of the state reached by this step
        (rewards are computed after the episode clock advanced)."""
        return mdp.gait_foot_height_l2(self.foot_heights(body_q), self._swing_profile(0), self.cfg.gait.swing_height)

    def _torques(self, q, qd, targets_leg):
        """DC-motor torque (:func:`.mdp.dc_motor_torques`), as the solver applies it."""
        return mdp.dc_motor_torques(
            q[:, 7:],
            qd[:, 6:],
            targets_leg,
            self.kp_leg,
            self.kd_leg,
            self.motor_strength,
            self.effort_limit,
            self.velocity_limit,
            self.cfg.solver_cfg.actuator_saturation,
        )

    def _rewards(self, q, qd, base, prev_qd_leg, actions, targets_leg, body_q):
        """(reward, weighted terms) of the step: each term of :mod:`.mdp.rewards` times its weight and the policy
        step; the terms whose weight is 0 and that are off by default are not computed."""
        w, c = self.cfg.rewards, self.commands
        lin_b, ang_b, proj_g = base
        terms = {
            "track_lin_vel_xy_exp": mdp.track_lin_vel_xy_exp(c, lin_b, w.tracking_std),
            "track_ang_vel_z_exp": mdp.track_ang_vel_z_exp(c, ang_b, w.tracking_std),
            "lin_vel_z_l2": mdp.lin_vel_z_l2(lin_b),
            "ang_vel_xy_l2": mdp.ang_vel_xy_l2(ang_b),
            "dof_torques_l2": mdp.joint_torques_l2(self._torques(q, qd, targets_leg)),
            "dof_acc_l2": mdp.joint_acc_l2(qd[:, 6:], prev_qd_leg, self.step_dt),
            "action_rate_l2": mdp.action_rate_l2(actions, self.last_actions),
            "feet_air_time": self._feet_air_time(),
            "flat_orientation_l2": mdp.flat_orientation_l2(proj_g),
        }
        if w.foot_clearance != 0.0:
            terms["foot_clearance"] = self._foot_clearance(body_q)
        if w.foot_lift != 0.0:
            terms["foot_lift"] = self._foot_lift(body_q)
        if w.hanging_foot_height != 0.0:
            terms["hanging_foot_height"] = self._hanging_foot_height(body_q)
        if w.foot_edge != 0.0:
            terms["foot_edge"] = self._foot_edge(body_q)
        if w.joint_deviation_l1 != 0.0:
            terms["joint_deviation_l1"] = mdp.joint_deviation_l1(q[:, 7:], self.default_leg)
        if w.joint_deviation_l2 != 0.0:
            terms["joint_deviation_l2"] = mdp.joint_deviation_l2(q[:, 7:], self.default_leg)
        if w.track_lin_vel_xy_l2 != 0.0:
            terms["track_lin_vel_xy_l2"] = mdp.track_lin_vel_xy_l2(c, lin_b)
        if w.track_lin_vel_xy_huber != 0.0:
            terms["track_lin_vel_xy_huber"] = mdp.track_lin_vel_xy_huber(c, lin_b, w.track_lin_vel_huber_delta)
        if w.track_ang_vel_z_l2 != 0.0:
            terms["track_ang_vel_z_l2"] = mdp.track_ang_vel_z_l2(c, ang_b)
        if w.base_height_exp != 0.0:
            h = self._reward_base_height(q)
            terms["base_height_exp"] = mdp.base_height_exp(h, w.base_height_target, w.base_height_sharpness)
        if w.upright != 0.0:
            terms["upright"] = mdp.upright(proj_g)
        if w.stand_still != 0.0 or w.stand_still_joint_vel != 0.0 or w.stand_still_feet_height != 0.0:
            still = mdp.still_command(c, w.stand_still_command)
            if w.stand_still != 0.0:
                terms["stand_still"] = mdp.stand_still(q[:, 7:], self.default_leg, still)
            if w.stand_still_joint_vel != 0.0:
                terms["stand_still_joint_vel"] = mdp.stand_still_joint_vel(qd[:, 6:], still)
            if w.stand_still_feet_height != 0.0:
                terms["stand_still_feet_height"] = mdp.stand_still_feet_height(self.foot_heights(body_q), still)
        terms = {k: getattr(w, k) * v * self.step_dt for k, v in terms.items()}
        if self.cfg.gait.period_s > 0:
            error = self._gait_foot_height_error(body_q)
            terms["gait_foot_height_l2"] = self.cfg.gait.foot_height_weight * error * self.step_dt
        return sum(terms.values()), terms

    def _reward_base_height(self, q: torch.Tensor) -> torch.Tensor:
        """The base height h of ``base_height_exp``: above the ground below the base, or above the mean ground
        height over the height-scan points (``rewards.base_height_ground``)."""
        if self.cfg.rewards.base_height_ground == "scan_mean":
            return height_scan(q[:, 0:3], q[:, 3:7], self.scan_pattern, self.ground_height, 0.0).mean(1)
        return self.height_above_ground(q[:, 0:3])

    def _foot_clearance(self, body_q: torch.Tensor) -> torch.Tensor:
        """:func:`.mdp.foot_clearance` of the feet; their horizontal velocity is their displacement over the policy
        step (0 on the first step of an episode, whose previous foot positions belong to the last episode)."""
        w = self.cfg.rewards
        centre, prev = self.foot_centres(body_q), self.prev_foot_centre
        fresh = (self.episode_length_buf <= 1)[:, None]
        self.prev_foot_centre = centre
        height = self.height_above_ground(centre) - self.foot_radius
        return mdp.foot_clearance(
            centre,
            prev,
            height,
            fresh,
            self.step_dt,
            w.foot_clearance_height,
            w.foot_clearance_std,
            w.foot_clearance_tanh_mult,
        )

    def _foot_lift(self, body_q: torch.Tensor) -> torch.Tensor:
        """:func:`.mdp.foot_lift` of the feet (DiffRewardsCfg.foot_lift), with this step's air times."""
        w = self.cfg.rewards
        moving = mdp.moving_command(self.commands)
        return mdp.foot_lift(
            self.foot_heights(body_q), w.foot_lift_height, self.feet_air_time, w.foot_lift_max_air_s, moving
        )

    def _hanging_foot_height(self, body_q: torch.Tensor) -> torch.Tensor:
        """:func:`.mdp.hanging_foot_height` of the feet (DiffRewardsCfg.hanging_foot_height), with this step's air
        times."""
        w = self.cfg.rewards
        return mdp.hanging_foot_height(self.foot_heights(body_q), self.feet_air_time, w.hanging_foot_air_s)

    def _foot_edge(self, body_q: torch.Tensor) -> torch.Tensor:
        """:func:`.mdp.foot_edge` of the feet (DiffRewardsCfg.foot_edge): the edge map under each foot's centre, for
        the feet in contact."""
        edge = self.foot_edge_map(self.foot_centres(body_q)[..., :2])
        return mdp.foot_edge(edge, self._feet_in_contact())

    @torch.no_grad()
    def _feet_in_contact(self) -> torch.Tensor:
        """The feet in contact in the last physics step (:func:`.mdp.feet_contact` of the solver's impulses)."""
        impulses = self.sim.last_contact_impulses().view(self.num_envs, self.num_feet, 3)
        return mdp.feet_contact(impulses, self.cfg.sim_dt)

    @torch.no_grad()
    def _feet_air_time(self):
        """Isaac Lab's feet_air_time (:func:`.mdp.feet_air_time`, gradient stopped) from the solver's contact
        impulses; advances the feet's air times."""
        contact = self._feet_in_contact()
        first_contact, air_time = mdp.update_air_time(self.feet_air_time, contact, self.step_dt)
        threshold, moving = self.cfg.rewards.feet_air_time_threshold, mdp.moving_command(self.commands)
        reward = mdp.feet_air_time(self.feet_air_time, first_contact, threshold, moving)
        self.feet_air_time = air_time
        return reward

    # ------------------------------------------------------------------ resets and events
    def joint_q_w(self) -> torch.Tensor:
        """Joint coordinates with each robot's base moved to its env origin (world frame, what viewers show), detached.

        The physics runs in each env's own frame (``q``: every base above the world origin), so float32 positions
        stay small and the rollout and its gradients do not depend on where a robot is shown."""
        q = self.q.detach().clone()
        if self.terrain is None:  # with a terrain the physics runs in the world frame already
            q[:, 0:3] += self.env_origins
        return q

    def _env_origins(self) -> torch.Tensor:
        """(num_envs, 3) env origins [m]: the Isaac Lab scene's; on a terrain the origins of the envs' sub-terrains
        (``terrain_level``, Isaac Lab's ``TerrainImporter`` layout); else the scene's grid (``cfg.env_spacing``)."""
        if self.terrain_levels is not None:
            return self.terrain_levels.env_origins(self.terrain_level)
        if self.isaaclab_scene is not None:
            return self.isaaclab_scene.env_origins.to(self.device)
        from isaaclab.cloner import grid_transforms

        return torch.as_tensor(grid_transforms(self.num_envs, self.cfg.env_spacing)[0], device=self.device)

    def _sample_commands(self, envs: torch.Tensor) -> None:
        """Resample the commands of the envs in the mask ``envs`` (Isaac Lab's draws: velocities, heading, whether
        the env tracks a heading, whether it stands)."""
        c = self.cfg.commands
        with torch.no_grad():
            sampled, heading, is_heading, is_standing = mdp.sample_velocity_commands(self._uniform, self.num_envs, c)
        self.commands = torch.where(envs[:, None], sampled, self.commands)
        if c.heading_command:
            self.heading_target = torch.where(envs, heading, self.heading_target)
            self.is_heading_env = torch.where(envs, is_heading, self.is_heading_env)
        if c.rel_standing_envs > 0.0:
            self.is_standing_env = torch.where(envs, is_standing, self.is_standing_env)

    def _update_commands(self) -> None:
        """Isaac Lab's per-step command update: heading envs get the yaw rate that turns them to their heading (a
        function of the state, so the gradient flows through it), standing envs a zero command."""
        c = self.cfg.commands
        if c.heading_command:
            yaw_rate = mdp.heading_yaw_rate(
                self.q[:, 3:7], self.heading_target, c.heading_control_stiffness, c.ang_vel_z
            )
            self.commands = torch.cat(
                [self.commands[:, :2], torch.where(self.is_heading_env, yaw_rate, self.commands[:, 2])[:, None]], 1
            )
        if c.rel_standing_envs > 0.0:
            self.commands = mdp.standing_commands(self.commands, self.is_standing_env)

    def _reset_buffers(self, envs: torch.Tensor):
        self._sample_commands(envs)
        e = envs[:, None]
        self.last_actions = torch.where(e, torch.zeros_like(self.last_actions), self.last_actions)
        self.feet_air_time = torch.where(e, torch.zeros_like(self.feet_air_time), self.feet_air_time)
        if self.action_queue.shape[1] > 0:
            self.action_queue = torch.where(e[:, :, None], torch.zeros_like(self.action_queue), self.action_queue)
            lo, hi = self.cfg.events.action_delay_range
            delay = torch.randint(lo, hi + 1, (self.num_envs,), generator=self._gen, device=self.device)
            self.action_delay = torch.where(envs, delay, self.action_delay)
        self.episode_length_buf[envs] = 0
        self.command_time[envs] = 0.0
        self.push_time[envs] = self._uniform((int(envs.sum()),), *self.cfg.events.push_interval_s)
        if self.cfg.events.leg_kick_velocity > 0.0:
            self.leg_kick_time[envs] = self._uniform((int(envs.sum()),), *self.cfg.events.leg_kick_interval_s)
        for v in self.episode_sums.values():
            v[envs] = 0.0
        self._update_commands()

    def _interval_events(self) -> bool:
        """Command resampling and pushes; returns whether either happened (the observation is then stale).

        A push adds a velocity to ``qd`` outside ``no_grad``: the kick is a constant, so the gradient flows
        through the pushed state (cutting it there would drop the velocity gradient of every env)."""
        with torch.no_grad():
            self.command_time += self.step_dt
            resample = self.command_time >= self.cfg.commands.resampling_time_s
            changed = bool(resample.any())
            kick = self._resample_and_sample_pushes(resample)
        if changed:
            self._update_commands()  # outside no_grad: heading commands are functions of the state
        if kick is not None:
            self.qd = self.qd + kick
            changed = True
        return changed

    @torch.no_grad()
    def _resample_and_sample_pushes(self, resample: torch.Tensor) -> torch.Tensor | None:
        """Resample the due commands; return the velocity change of the pushed envs (None if none is pushed)."""
        if resample.any():
            self._sample_commands(resample)
            self.command_time[resample] = 0.0
        self.push_time -= self.step_dt
        push = self.push_time <= 0.0
        kick = None
        if push.any() and self.cfg.events.push_velocity > 0.0:
            kick = self.events.apply_push(push, self.cfg.events.push_velocity).to(self.device)
            self.push_time[push] = self._uniform((int(push.sum()),), *self.cfg.events.push_interval_s)
        if self.cfg.events.leg_kick_velocity > 0.0:
            leg_kick = self._leg_kicks()
            if leg_kick is not None:
                kick = leg_kick if kick is None else kick + leg_kick
        return kick

    def _leg_kicks(self) -> torch.Tensor | None:
        """The joint-velocity change of the envs whose leg kick is due (None if none is): one random leg each, its
        joints' velocities changed by amounts uniform in +-``events.leg_kick_velocity``."""
        ev = self.cfg.events
        self.leg_kick_time -= self.step_dt
        due = self.leg_kick_time <= 0.0
        if not due.any():
            return None
        n, nj = self.num_envs, self.layout.num_joints
        leg = torch.randint(0, self.num_feet, (n,), generator=self._gen, device=self.device)
        kick = self._uniform((n, nj), -ev.leg_kick_velocity, ev.leg_kick_velocity)
        change = mdp.leg_kick_velocity_change(kick, leg, self.joint_legs, due, self.layout.dofs_per_world - nj)
        self.leg_kick_time[due] = self._uniform((int(due.sum()),), *ev.leg_kick_interval_s)
        return change

    def _build_events(self):
        """The event source of the model: the Isaac Lab scene with its ``EventManager`` (startup events seeded with
        ``cfg.seed``, resets and pushes with seeds from the env's generator), or :class:`BuilderEvents` drawing from
        the env's generator. Refuses a base-mass range that can make the base's mass <= 0."""
        ev = self.cfg.events
        mass = wp.to_torch(self.model.body_mass, requires_grad=False)
        base = torch.as_tensor(self.layout.base_body, device=self.device).long()
        lightest = float(mass[base].min()) + ev.base_mass_add_range[0]
        if lightest <= 0.0:
            raise ValueError(
                f"events.base_mass_add_range {ev.base_mass_add_range!r} can make the base mass {lightest:g}"
                " kg (must stay > 0)"
            )
        if self.isaaclab_scene is None:
            return BuilderEvents(self.model, self.layout, ev, self.default_q, self._uniform)
        self.isaaclab_scene.build_event_manager(ev, seed=self.cfg.seed, draw_seed=self._draw_seed)
        return self.isaaclab_scene
