"""Differentiable ANYmal C flat velocity-tracking environment (direct style, vectorised, torch).

``step(actions)`` keeps the autograd graph: observations and rewards are torch functions of the simulated
state, which the bridge makes a differentiable function of the actions and the previous state. Resets
replace the state of the envs they touch out of place, so the graph is cut for exactly those envs.
Under ``torch.no_grad()`` the same env serves PPO and evaluation.
"""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import torch
import warp as wp
from isaaclab.utils.string import string_to_callable

from ..assets.anymal_c import LEGS, build_anymal_c_model
from ..bridge import DiffSimulator
from ..solver import SolverMoreauGS
from .diff_velocity_env_cfg import DiffVelocityEnvCfg
from .nonfinite import check_finite
from .rotations import quat_rotate, quat_rotate_inverse, yaw_quat

NQ, ND, NLEG = 19, 18, 12


class DiffVelocityEnv(gym.Env):
    """Vectorised env: obs (N, 48), actions (N, 12) joint-position offsets (scaled by ``action_scale``).

    Like Isaac Lab's direct envs it is one gymnasium env holding ``num_envs`` copies; ``reset()`` returns the
    observation tensor, ``step`` returns (obs, reward, terminated, truncated, extras). With the optional gait
    clock (``cfg.gait.period_s > 0``) the observation has 50 entries: (sin, cos) of the phase are appended.
    """

    metadata = {"render_modes": [None], "is_vector_env": True}
    num_actions = NLEG

    def __init__(self, cfg: DiffVelocityEnvCfg | None = None, render_mode: str | None = None, **overrides):
        """``cfg`` None: the task's registered config when gymnasium passes ``env_cfg_entry_point`` (``gym.make(id)``),
        else the class defaults. Other keyword arguments override config fields (``gym.make(id, num_envs=4)``)."""
        if cfg is None:  # gym.make(task_id) without cfg=: the config registered for the task id
            entry = overrides.get("env_cfg_entry_point")
            cfg = string_to_callable(entry)() if entry else DiffVelocityEnvCfg()
        for key, value in overrides.items():
            if key.endswith("_entry_point"):  # gymnasium passes the registration kwargs through
                continue
            if not hasattr(cfg, key):
                raise ValueError(f"DiffVelocityEnv: unknown config field {key!r}")
            setattr(cfg, key, value)
        cfg.validate_values()
        self.cfg = cfg
        self.render_mode = render_mode
        self.num_obs = 48 + (2 if cfg.gait.period_s > 0 else 0)
        self.single_observation_space = gym.spaces.Box(-np.inf, np.inf, (self.num_obs,), np.float32)
        self.single_action_space = gym.spaces.Box(-np.inf, np.inf, (NLEG,), np.float32)
        self.observation_space = gym.spaces.Box(-np.inf, np.inf, (cfg.num_envs, self.num_obs), np.float32)
        self.action_space = gym.spaces.Box(-np.inf, np.inf, (cfg.num_envs, NLEG), np.float32)
        self.num_envs = cfg.num_envs
        self.device = torch.device(cfg.device)
        self.step_dt = cfg.sim_dt * cfg.decimation
        self.max_episode_length = int(math.ceil(cfg.episode_length_s / self.step_dt))
        self._gen = torch.Generator(device=self.device).manual_seed(cfg.seed)

        self.isaaclab_scene = None
        if cfg.asset_source == "isaaclab":
            from .scene_model import AnymalCScene

            self.isaaclab_scene = AnymalCScene(
                cfg.num_envs, str(self.device), cfg.sim_dt, kp=cfg.kp, kd=cfg.kd, base_height=cfg.init_base_height,
                solver_cfg=cfg.solver_cfg, env_spacing=cfg.env_spacing,
            )
            model, info = self.isaaclab_scene.model, self.isaaclab_scene.info
            solver = self.isaaclab_scene.solver  # the physics manager's: one solver per model
        else:
            model, info = build_anymal_c_model(
                num_worlds=cfg.num_envs, device=str(self.device), kp=cfg.kp, kd=cfg.kd,
                base_height=cfg.init_base_height, requires_grad=True, source=cfg.asset_source,
            )
            solver = SolverMoreauGS(model, **cfg.solver_cfg.solver_kwargs())
        self.model, self.info = model, info
        self.sim = DiffSimulator(model, solver=solver, substeps=cfg.decimation, dt=cfg.sim_dt)
        q0 = wp.to_torch(model.joint_q, requires_grad=False).view(self.num_envs, NQ).clone()
        self.default_q = q0[0].clone()
        self.env_origins = self._env_origins()
        self.default_leg = q0[0, 7:].clone()
        self.effort_limit = wp.to_torch(model.joint_effort_limit, requires_grad=False).view(self.num_envs, ND)[0, 6:].clone()
        self.velocity_limit = wp.to_torch(model.joint_velocity_limit, requires_grad=False).view(self.num_envs, ND)[0, 6:].clone()
        self._apply_startup_events()
        self.foot_bodies = torch.as_tensor(info["foot_bodies"], device=self.device).long()
        self.foot_centers = torch.tensor(info["foot_centers"], device=self.device).repeat(self.num_envs, 1)
        self.gait_offsets = torch.tensor(cfg.gait.phase_offsets, device=self.device)
        self.joint_legs = torch.tensor([LEGS.index(name[:2]) for name in info["joint_names"]], device=self.device)
        self.foot_radius = float(info["foot_radius"])

        n, dev = self.num_envs, self.device
        self.q = q0
        self.qd = torch.zeros(n, ND, device=dev)
        self.last_actions = torch.zeros(n, NLEG, device=dev)
        self.commands = torch.zeros(n, 3, device=dev)
        self.episode_length_buf = torch.zeros(n, dtype=torch.long, device=dev)
        self.command_time = torch.zeros(n, device=dev)
        self.push_time = torch.zeros(n, device=dev)
        self.feet_air_time = torch.zeros(n, 4, device=dev)
        self.term_names = [k for k in vars(cfg.rewards) if not k.startswith(("tracking_std", "feet_air_time_"))]
        if cfg.gait.period_s > 0:
            self.term_names.append("gait_foot_height_l2")
        self.episode_sums = {k: torch.zeros(n, device=dev) for k in self.term_names}
        self.obs = None
        self.common_step_counter = 0
        """Steps taken since the env was built (Isaac Lab's name); non-finite errors report it."""

    # ------------------------------------------------------------------ public API
    def reset(self, seed: int | None = None, options: dict | None = None) -> torch.Tensor:
        if seed is not None:
            self._gen.manual_seed(seed)
        all_envs = torch.ones(self.num_envs, dtype=torch.bool, device=self.device)
        with torch.no_grad():
            q, qd = self._sample_reset_state()
        self.q, self.qd = q, qd
        self._reset_buffers(all_envs)
        self.obs = self._observations(self.q, self.qd, self.last_actions)
        return self.obs

    def close(self) -> None:
        """Release the Isaac Lab simulation context of ``asset_source='isaaclab'`` (nothing otherwise)."""
        if self.isaaclab_scene is not None:
            self.isaaclab_scene.close()
            self.isaaclab_scene = None

    def get_observations(self) -> torch.Tensor:
        if self.obs is None:
            return self.reset()
        return self.obs

    def detach(self) -> None:
        """Cut the autograd graph of the internal state (start of a new SHAC horizon)."""
        self.q, self.qd = self.q.detach(), self.qd.detach()
        self.last_actions = self.last_actions.detach()
        if self.obs is not None:
            self.obs = self.obs.detach()

    STATE_FIELDS = ("q", "qd", "last_actions", "commands", "feet_air_time", "episode_length_buf", "command_time", "push_time")

    def get_state(self) -> dict:
        """Detached copy of everything a step depends on (plus the RNG), for checkpoints."""
        state = {k: getattr(self, k).detach().clone() for k in self.STATE_FIELDS}
        state["episode_sums"] = {k: v.clone() for k, v in self.episode_sums.items()}
        state["rng"] = self._gen.get_state()
        return state

    def set_state(self, state: dict) -> None:
        """Restore :meth:`get_state`'s snapshot; the next step continues bit for bit."""
        for k in self.STATE_FIELDS:
            setattr(self, k, state[k].clone().to(self.device))
        self.episode_sums = {k: v.clone().to(self.device) for k, v in state["episode_sums"].items()}
        self._gen.set_state(state["rng"])
        self.obs = self._observations(self.q, self.qd, self.last_actions)

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

    def step(self, actions: torch.Tensor):
        """Returns (obs, reward, terminated, truncated, extras); see the module docstring.

        Raises FloatingPointError naming the env ids and the step if the actions, or the new state, rewards or
        observations, hold a NaN or inf (nothing of the step is kept)."""
        if actions.shape != (self.num_envs, NLEG):
            raise ValueError(f"actions must have shape {(self.num_envs, NLEG)}, got {tuple(actions.shape)}")
        self.common_step_counter += 1
        check_finite({"actions": actions}, self.common_step_counter, self.episode_length_buf)
        cfg = self.cfg
        targets_leg = self.default_leg + cfg.action_scale * actions
        if cfg.gait.joint_swing_scale > 0:
            targets_leg = targets_leg + self.trajectory_generator_offsets()
        targets = torch.cat([self.q.new_zeros(self.num_envs, 7), targets_leg], dim=1)
        prev_qd_leg = self.qd[:, 6:]
        out = self.sim.step(self.q, self.qd, targets)
        q, qd = out.joint_q.view(self.num_envs, NQ), out.joint_qd.view(self.num_envs, ND)

        kept = (self.last_actions, self.feet_air_time)  # what the step changes before the check below
        base = self._base_frame(q, qd)
        reward, terms = self._rewards(q, qd, base, prev_qd_leg, actions, targets_leg, out.body_q)
        self.last_actions = actions
        self.episode_length_buf += 1  # before the observation: its gait clock is that of the new state
        obs = self._observations(q, qd, actions, base)
        try:
            check_finite({"joint_q after the physics step": q, "joint_qd after the physics step": qd,
                          "rewards": reward, "observations": obs}, self.common_step_counter, self.episode_length_buf)
        except FloatingPointError:
            self.last_actions, self.feet_air_time = kept
            self.episode_length_buf -= 1
            raise
        terminated = (q[:, 2] < cfg.min_base_height) | (base[2][:, 2] > cfg.max_gravity_z)  # bool: no graph
        if cfg.rewards.termination_penalty != 0.0:
            terms["termination_penalty"] = cfg.rewards.termination_penalty * terminated.float() * self.step_dt
            reward = reward + terms["termination_penalty"]
        with torch.no_grad():
            truncated = self.episode_length_buf >= self.max_episode_length
            done = terminated | truncated
            for k, v in terms.items():
                self.episode_sums[k] += v.detach()
        extras = {"terminal_obs": obs, "time_outs": truncated}
        any_done = bool(done.any())
        self.q, self.qd = q, qd
        if any_done:
            extras["episode"] = self._episode_log(done)
            self._reset_done(done)
        events_changed_state = self._interval_events()
        if any_done or events_changed_state:  # the observation of the state the next action sees
            obs = self._observations(self.q, self.qd, self.last_actions)
        self.obs = obs
        return self.obs, reward, terminated, truncated, extras

    # ------------------------------------------------------------------ MDP
    @staticmethod
    def _base_frame(q, qd):
        """Base linear and angular velocity and projected gravity, in the base frame."""
        quat = q[:, 3:7]
        lin_b = quat_rotate_inverse(quat, qd[:, 0:3])
        ang_b = quat_rotate_inverse(quat, qd[:, 3:6])
        proj_g = quat_rotate_inverse(quat, q.new_tensor([0.0, 0.0, -1.0]).expand(q.shape[0], 3))
        return lin_b, ang_b, proj_g

    def _observations(self, q, qd, last_actions, base=None):
        lin_b, ang_b, proj_g = base if base is not None else self._base_frame(q, qd)
        parts = [lin_b, ang_b, proj_g, self.commands, q[:, 7:] - self.default_leg, qd[:, 6:], last_actions]
        if self.cfg.gait.period_s > 0:
            angle = 2.0 * math.pi * self._gait_phase()
            parts.append(torch.stack([torch.sin(angle), torch.cos(angle)], 1))
        return torch.cat(parts, 1)

    def _gait_phase(self) -> torch.Tensor:
        """Gait clock in [0, 1): episode time over the gait period (restarts at every reset)."""
        return torch.remainder(self.episode_length_buf.float() * self.step_dt / self.cfg.gait.period_s, 1.0)

    def trajectory_generator_offsets(self) -> torch.Tensor:
        """Joint-target offsets (num_envs, 12) of the gait's trajectory generator at the current state's phase:
        ``joint_swing_scale * max(sin(2 pi phase_f), 0) * default_leg`` for the joints of leg f."""
        return self.cfg.gait.joint_swing_scale * self._swing_profile(0)[:, self.joint_legs] * self.default_leg

    def _swing_profile(self, steps_ahead: int) -> torch.Tensor:
        """Per foot (num_envs, 4; legs LF, RF, LH, RH) ``max(sin(2 pi phase_f), 0)``: a half sine during the swing
        half of the foot's cycle, 0 in stance, at the clock of the state ``steps_ahead`` steps from now."""
        t = (self.episode_length_buf.float() + steps_ahead) * self.step_dt / self.cfg.gait.period_s
        phase = torch.remainder(t[:, None] + self.gait_offsets, 1.0)
        return torch.clamp(torch.sin(2.0 * math.pi * phase), min=0.0)

    def foot_heights(self, body_q: torch.Tensor) -> torch.Tensor:
        """Height of each foot sphere's lowest point above the ground, (num_envs, 4) in leg order LF, RF, LH, RH."""
        pose = body_q[self.foot_bodies.reshape(-1)]
        centre = pose[:, :3] + quat_rotate(pose[:, 3:7], self.foot_centers)
        return centre[:, 2].view(self.num_envs, 4) - self.foot_radius

    def _gait_foot_height_error(self, body_q: torch.Tensor) -> torch.Tensor:
        """Sum over feet of (foot height - reference)^2; the reference is a half sine during swing, 0 in stance.

        The phase is that of the state reached by this step (episode_length_buf + 1)."""
        ref = self.cfg.gait.swing_height * self._swing_profile(1)
        return ((self.foot_heights(body_q) - ref) ** 2).sum(1)

    def _torques(self, q, qd, targets_leg):
        """ANYdrive DC-motor torque (PD clipped by the torque-speed envelope), as the solver applies it."""
        v = qd[:, 6:]
        tau = self.cfg.kp * (targets_leg - q[:, 7:]) - self.cfg.kd * v
        sat = self.cfg.solver_cfg.actuator_saturation
        hi = torch.minimum(self.effort_limit, sat * (1.0 - v / self.velocity_limit))
        lo = torch.maximum(-self.effort_limit, sat * (-1.0 - v / self.velocity_limit))
        return torch.minimum(torch.maximum(tau, lo), hi)

    def _rewards(self, q, qd, base, prev_qd_leg, actions, targets_leg, body_q):
        w = self.cfg.rewards
        lin_b, ang_b, proj_g = base
        var = w.tracking_std**2
        terms = {
            "track_lin_vel_xy_exp": torch.exp(-((self.commands[:, :2] - lin_b[:, :2]) ** 2).sum(1) / var),
            "track_ang_vel_z_exp": torch.exp(-((self.commands[:, 2] - ang_b[:, 2]) ** 2) / var),
            "lin_vel_z_l2": lin_b[:, 2] ** 2,
            "ang_vel_xy_l2": (ang_b[:, :2] ** 2).sum(1),
            "dof_torques_l2": (self._torques(q, qd, targets_leg) ** 2).sum(1),
            "dof_acc_l2": (((qd[:, 6:] - prev_qd_leg) / self.step_dt) ** 2).sum(1),
            "action_rate_l2": ((actions - self.last_actions) ** 2).sum(1),
            "feet_air_time": self._feet_air_time(),
            "flat_orientation_l2": (proj_g[:, :2] ** 2).sum(1),
        }
        terms = {k: getattr(w, k) * v * self.step_dt for k, v in terms.items()}
        if self.cfg.gait.period_s > 0:
            error = self._gait_foot_height_error(body_q)
            terms["gait_foot_height_l2"] = self.cfg.gait.foot_height_weight * error * self.step_dt
        return sum(terms.values()), terms

    @torch.no_grad()
    def _feet_air_time(self):
        """Isaac Lab's feet_air_time: on touchdown, reward air time minus the threshold (gradient stopped)."""
        impulses = self.sim.last_contact_impulses().view(self.num_envs, 4, 3)
        contact = impulses[..., 0] > 1.0 * self.cfg.sim_dt  # 1 N, like Isaac Lab's contact sensor threshold
        first_contact = contact & (self.feet_air_time > 0.0)
        reward = ((self.feet_air_time - self.cfg.rewards.feet_air_time_threshold) * first_contact).sum(1)
        self.feet_air_time = torch.where(contact, torch.zeros_like(self.feet_air_time), self.feet_air_time + self.step_dt)
        return reward * (self.commands[:, :2].norm(dim=1) > 0.1)

    # ------------------------------------------------------------------ resets and events
    def _uniform(self, shape, lo, hi):
        return lo + (hi - lo) * torch.rand(shape, generator=self._gen, device=self.device)

    def joint_q_w(self) -> torch.Tensor:
        """Joint coordinates with each robot's base moved to its env origin (world frame, what viewers show), detached.

        The physics runs in each env's own frame (``q``: every base above the world origin), so float32 positions
        stay small and the rollout and its gradients do not depend on where a robot is shown."""
        q = self.q.detach().clone()
        q[:, 0:3] += self.env_origins
        return q

    def _env_origins(self) -> torch.Tensor:
        """(num_envs, 3) env origins [m]: the Isaac Lab scene's, or the same grid (``cfg.env_spacing``) for the
        builder-made models."""
        if self.isaaclab_scene is not None:
            return self.isaaclab_scene.env_origins.to(self.device)
        from isaaclab.cloner import grid_transforms

        return torch.as_tensor(grid_transforms(self.num_envs, self.cfg.env_spacing)[0], device=self.device)

    def _sample_reset_state(self):
        n, ev = self.num_envs, self.cfg.events
        q = self.default_q.expand(n, NQ).clone()
        yaw = self._uniform((n,), -math.pi, math.pi)
        q[:, 3:7] = yaw_quat(yaw)
        q[:, 7:] = self.default_leg * self._uniform((n, NLEG), *ev.reset_joint_scale_range)
        qd = torch.zeros(n, ND, device=self.device)
        qd[:, :6] = self._uniform((n, 6), -ev.reset_base_velocity, ev.reset_base_velocity)
        return q, qd

    def _reset_buffers(self, envs: torch.Tensor):
        c = self.cfg.commands
        n = self.num_envs
        sampled = torch.stack(
            [self._uniform((n,), *c.lin_vel_x), self._uniform((n,), *c.lin_vel_y), self._uniform((n,), *c.ang_vel_z)], 1
        )
        e = envs[:, None]
        self.commands = torch.where(e, sampled, self.commands)
        self.last_actions = torch.where(e, torch.zeros_like(self.last_actions), self.last_actions)
        self.feet_air_time = torch.where(e, torch.zeros_like(self.feet_air_time), self.feet_air_time)
        self.episode_length_buf[envs] = 0
        self.command_time[envs] = 0.0
        self.push_time[envs] = self._uniform((int(envs.sum()),), *self.cfg.events.push_interval_s)
        for v in self.episode_sums.values():
            v[envs] = 0.0

    def _reset_done(self, done: torch.Tensor):
        with torch.no_grad():
            q_new, qd_new = self._sample_reset_state()
        d = done[:, None]
        self.q = torch.where(d, q_new, self.q)
        self.qd = torch.where(d, qd_new, self.qd)
        self._reset_buffers(done)

    def _interval_events(self) -> bool:
        """Command resampling and pushes; returns whether either happened (the observation is then stale).

        A push adds a velocity to ``qd`` outside ``no_grad``: the kick is a constant, so the gradient flows
        through the pushed state (cutting it there would drop the velocity gradient of every env)."""
        with torch.no_grad():
            self.command_time += self.step_dt
            resample = self.command_time >= self.cfg.commands.resampling_time_s
            changed = bool(resample.any())
            kick = self._resample_and_sample_pushes(resample)
        if kick is not None:
            self.qd = self.qd + kick
            changed = True
        return changed

    @torch.no_grad()
    def _resample_and_sample_pushes(self, resample: torch.Tensor) -> torch.Tensor | None:
        """Resample the due commands; return the velocity change of the pushed envs (None if none is pushed)."""
        if resample.any():
            c = self.cfg.commands
            n = self.num_envs
            sampled = torch.stack(
                [self._uniform((n,), *c.lin_vel_x), self._uniform((n,), *c.lin_vel_y), self._uniform((n,), *c.ang_vel_z)], 1
            )
            self.commands = torch.where(resample[:, None], sampled, self.commands)
            self.command_time[resample] = 0.0
        self.push_time -= self.step_dt
        push = self.push_time <= 0.0
        if push.any() and self.cfg.events.push_velocity > 0.0:
            kick = torch.zeros_like(self.qd)
            v = self.cfg.events.push_velocity
            kick[:, 0:2] = self._uniform((self.num_envs, 2), -v, v)
            self.push_time[push] = self._uniform((int(push.sum()),), *self.cfg.events.push_interval_s)
            return kick * push[:, None]
        return None

    @torch.no_grad()
    def _apply_startup_events(self):
        """Per-env foot friction and base mass (written into the model, which the solver reads directly)."""
        ev, n = self.cfg.events, self.num_envs
        mu = wp.to_torch(self.model.shape_material_mu, requires_grad=False)
        feet = torch.as_tensor(self.info["foot_shapes"], device=self.device).long()
        mu[feet.reshape(-1)] = self._uniform((n, 1), *ev.foot_friction_range).expand(n, 4).reshape(-1)
        mass = wp.to_torch(self.model.body_mass, requires_grad=False)
        base = torch.as_tensor(self.info["base_body"], device=self.device).long()
        lightest = float(mass[base].min()) + ev.base_mass_add_range[0]
        if lightest <= 0.0:
            raise ValueError(f"events.base_mass_add_range {ev.base_mass_add_range!r} can make the base mass {lightest:g}"
                             " kg (must stay > 0)")
        mass[base] += self._uniform((n,), *ev.base_mass_add_range)

    def _episode_log(self, done: torch.Tensor) -> dict:
        log = {f"Episode_Reward/{k}": (v[done].mean() / self.cfg.episode_length_s).item() for k, v in self.episode_sums.items()}
        log["Episode/length_s"] = (self.episode_length_buf[done].float().mean() * self.step_dt).item()
        return log
