"""``DiffDirectRLEnv``: a differentiable counterpart of Isaac Lab's ``DirectRLEnv`` (vectorised, torch, autograd).

The base owns the simulator (a :class:`~isaaclab_diffsim.bridge.DiffSimulator` with one solver per model), the joint
state, the episode buffers, resets, ``detach`` and ``get_state``/``set_state``; a task fills in Isaac Lab's hooks.

``step(actions)`` keeps the autograd graph: observations and rewards are torch functions of the simulated state,
which the bridge makes a differentiable function of the actions and the previous state. Resets replace the state of
the envs they touch out of place (``torch.where``), so the graph is cut for exactly those envs. Under
``torch.no_grad()`` the same env serves PPO and evaluation.

Differences from ``DirectRLEnv``, all forced by differentiability or kept for compatibility:

- the physics step is functional: :meth:`_apply_action` returns the joint targets of the whole policy step (the
  decimation's substeps run inside one differentiable bridge call) instead of writing them into the simulation;
- :meth:`_reset_idx` receives a boolean mask over envs (resets merge with ``torch.where``), not env ids;
- :meth:`_get_rewards` returns the reward and its weighted terms (the base keeps the episode sums);
- the config keeps ``num_envs``, ``device`` and ``sim_dt`` at its top level (``scene.num_envs``, ``sim.device`` and
  ``sim.dt`` in ``DirectRLEnvCfg``): the differentiable env has no Isaac Lab scene or simulation context of its own.
"""

from __future__ import annotations

import math

import gymnasium as gym
import newton
import numpy as np
import torch
from isaaclab.utils import configclass
from isaaclab.utils.string import string_to_callable

from ..assets.robot_layout import RobotLayout
from ..bridge import DiffSimulator
from ..physics.diffsim_manager_cfg import DiffSimSolverCfg
from ..solver import SolverMoreauGS
from ..utils.validation import check, positive
from .nonfinite import check_finite


@configclass
class DiffDirectRLEnvCfg:
    """Fields of Isaac Lab's ``DirectRLEnvCfg`` that a differentiable direct env uses, plus the solver's parameters."""

    num_envs: int = 64
    """Number of envs (``DirectRLEnvCfg.scene.num_envs``)."""
    device: str = "cpu"
    """Torch/Warp device (``DirectRLEnvCfg.sim.device``)."""
    seed: int = 42
    """Seed of the env's own random generator (events, commands, resets)."""
    episode_length_s: float = 20.0
    """Episode length [s]; the time limit is ``ceil(episode_length_s / (sim_dt * decimation))`` policy steps."""
    decimation: int = 4
    """Physics steps per policy step."""
    sim_dt: float = 0.005
    """Physics time step [s] (``DirectRLEnvCfg.sim.dt``)."""
    observation_space: int = 0
    """Size of the observation vector."""
    action_space: int = 0
    """Size of the action vector."""
    solver_cfg: DiffSimSolverCfg = DiffSimSolverCfg()
    """SolverMoreauGS's parameters (the one declaration, shared with Isaac Lab tasks on this backend)."""

    def validate_values(self) -> None:
        """Raise ValueError on values that cannot work (checked again after overrides)."""
        self.solver_cfg.validate_values()
        check(self, {"num_envs": positive, "episode_length_s": positive, "decimation": positive, "sim_dt": positive})


class DiffDirectRLEnv(gym.Env):
    """Vectorised differentiable env: one gymnasium env holding ``num_envs`` copies, like Isaac Lab's direct envs.

    ``reset()`` returns the observation tensor; ``step`` returns (obs, reward, terminated, truncated, extras).
    A task implements :meth:`_setup_scene`, :meth:`_pre_physics_step`, :meth:`_apply_action`, :meth:`_get_dones`,
    :meth:`_get_rewards`, :meth:`_get_observations` and :meth:`_reset_idx`; it may add :meth:`_apply_interval_events`.
    The joint state is ``q`` (num_envs, coords per world) and ``qd`` (num_envs, dofs per world).
    """

    metadata = {"render_modes": [None], "is_vector_env": True}
    cfg_class: type = DiffDirectRLEnvCfg
    """Config class built when neither ``cfg`` nor a registered config is given."""
    STATE_FIELDS: tuple[str, ...] = ("q", "qd", "episode_length_buf")
    """Tensors a step depends on (tasks extend it); :meth:`get_state` copies them."""

    def __init__(self, cfg: DiffDirectRLEnvCfg | None = None, render_mode: str | None = None, **overrides):
        """``cfg`` None: the task's registered config when gymnasium passes ``env_cfg_entry_point`` (``gym.make(id)``),
        else the class defaults. Other keyword arguments override config fields (``gym.make(id, num_envs=4)``)."""
        if cfg is None:  # gym.make(task_id) without cfg=: the config registered for the task id
            entry = overrides.get("env_cfg_entry_point")
            cfg = string_to_callable(entry)() if entry else self.cfg_class()
        for key, value in overrides.items():
            if key.endswith("_entry_point"):  # gymnasium passes the registration kwargs through
                continue
            if not hasattr(cfg, key):
                raise ValueError(f"{type(self).__name__}: unknown config field {key!r}")
            setattr(cfg, key, value)
        cfg.validate_values()
        self.cfg = cfg
        self.render_mode = render_mode
        self.num_envs = cfg.num_envs
        self.device = torch.device(cfg.device)
        self.step_dt = cfg.sim_dt * cfg.decimation
        self.max_episode_length = int(math.ceil(cfg.episode_length_s / self.step_dt))
        self._gen = torch.Generator(device=self.device).manual_seed(cfg.seed)

        self.model, self.layout, solver = self._setup_scene()
        self.sim = DiffSimulator(self.model, solver=solver, substeps=cfg.decimation, dt=cfg.sim_dt)
        self.q, self.qd = self.sim.default_state()
        self.body_q: torch.Tensor | None = None
        """Body poses after the last step (``None`` before the first)."""

        self.num_obs, self.num_actions = self._num_observations(), int(cfg.action_space)
        self.single_observation_space = gym.spaces.Box(-np.inf, np.inf, (self.num_obs,), np.float32)
        self.single_action_space = gym.spaces.Box(-np.inf, np.inf, (self.num_actions,), np.float32)
        self.observation_space = gym.spaces.Box(-np.inf, np.inf, (cfg.num_envs, self.num_obs), np.float32)
        self.action_space = gym.spaces.Box(-np.inf, np.inf, (cfg.num_envs, self.num_actions), np.float32)
        self.episode_length_buf = torch.zeros(self.num_envs, dtype=torch.long, device=self.device)
        self.episode_sums: dict[str, torch.Tensor] = {}
        """Per-env sums of the reward terms over the current episode (logged at its end)."""
        self.obs: torch.Tensor | None = None
        self.common_step_counter = 0
        """Steps taken since the env was built (Isaac Lab's name); non-finite errors report it."""

    # ------------------------------------------------------------------ hooks
    def _setup_scene(self) -> tuple[newton.Model, RobotLayout, SolverMoreauGS]:
        """Build the model of ``num_envs`` worlds; return it with its layout and its one solver."""
        raise NotImplementedError

    def _num_observations(self) -> int:
        return int(self.cfg.observation_space)

    def _pre_physics_step(self, actions: torch.Tensor) -> None:
        """Process the policy's actions (once per policy step, before the physics)."""
        raise NotImplementedError

    def _apply_action(self) -> torch.Tensor:
        """Joint position targets for the policy step, coordinate-shaped like ``q``."""
        raise NotImplementedError

    def _get_dones(self) -> tuple[torch.Tensor, torch.Tensor]:
        """(terminated, time_out) bool tensors of the state just reached."""
        raise NotImplementedError

    def _get_rewards(self) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        """Reward of the step just taken and its weighted terms (the terms are summed into ``episode_sums``)."""
        raise NotImplementedError

    def _get_observations(self) -> torch.Tensor:
        """Observation of the current state."""
        raise NotImplementedError

    def _reset_idx(self, envs: torch.Tensor) -> None:
        """Reset the envs of the bool mask ``envs`` (state and buffers, out of place)."""
        raise NotImplementedError

    def _apply_interval_events(self) -> bool:
        """Events due after the step (command resampling, pushes); return whether the state or commands changed."""
        return False

    # ------------------------------------------------------------------ public API
    def reset(self, seed: int | None = None, options: dict | None = None) -> torch.Tensor:
        if seed is not None:
            self._gen.manual_seed(seed)
        self._reset_idx(torch.ones(self.num_envs, dtype=torch.bool, device=self.device))
        self.obs = self._get_observations()
        return self.obs

    def get_observations(self) -> torch.Tensor:
        if self.obs is None:
            return self.reset()
        return self.obs

    def step(self, actions: torch.Tensor):
        """Returns (obs, reward, terminated, truncated, extras); ``extras["terminal_obs"]`` is the observation of the
        state reached before any reset, ``extras["time_outs"]`` the truncations.

        Raises FloatingPointError naming the env ids and the step if the actions, or the new state, rewards or
        observations, hold a NaN or inf (nothing of the step is kept)."""
        if actions.shape != (self.num_envs, self.num_actions):
            raise ValueError(f"actions must have shape {(self.num_envs, self.num_actions)}, got {tuple(actions.shape)}")
        self.common_step_counter += 1
        check_finite({"actions": actions}, self.common_step_counter, self.episode_length_buf)
        kept = {k: getattr(self, k) for k in self.STATE_FIELDS}  # hooks replace tensors, never write into them
        self._pre_physics_step(actions)
        out = self.sim.step(self.q, self.qd, self._apply_action())
        self.q, self.qd, self.body_q = out.joint_q, out.joint_qd, out.body_q
        self.episode_length_buf = self.episode_length_buf + 1
        try:
            terminated, truncated = self._get_dones()
            reward, terms = self._get_rewards()
            obs = self._get_observations()
            check_finite(
                {
                    "joint_q after the physics step": self.q,
                    "joint_qd after the physics step": self.qd,
                    "rewards": reward,
                    "observations": obs,
                },
                self.common_step_counter,
                self.episode_length_buf,
            )
        except FloatingPointError:
            for k, v in kept.items():
                setattr(self, k, v)
            raise
        with torch.no_grad():
            done = terminated | truncated
            for k, v in terms.items():
                self.episode_sums[k] += v.detach()
        extras = {"terminal_obs": obs, "time_outs": truncated}
        any_done = bool(done.any())
        if any_done:
            extras["episode"] = self._episode_log(done)
            self._reset_idx(done)
        if self._apply_interval_events() or any_done:  # the observation of the state the next action sees
            obs = self._get_observations()
        self.obs = obs
        return self.obs, reward, terminated, truncated, extras

    def close(self) -> None:
        """Release what the scene holds (nothing by default)."""

    def set_kappa(self, kappa: float) -> None:
        """Set the smoothed contact model's kappa [1/m] at run time (a kappa schedule): the solver's kappa array is
        filled in place (no recompilation, captured graphs see it) and ``cfg.solver_cfg.kappa`` follows."""
        self.sim.solver.kappa = float(kappa)  # validates: kappa > 0
        self.cfg.solver_cfg.kappa = float(kappa)

    def detach(self) -> None:
        """Cut the autograd graph of the internal state (start of a new SHAC horizon)."""
        for k in self.STATE_FIELDS:
            setattr(self, k, getattr(self, k).detach())
        if self.obs is not None:
            self.obs = self.obs.detach()

    def get_state(self) -> dict:
        """Detached copy of everything a step depends on (plus the RNG), for checkpoints."""
        state = {k: getattr(self, k).detach().clone() for k in self.STATE_FIELDS}
        state["episode_sums"] = {k: v.clone() for k, v in self.episode_sums.items()}
        state["rng"] = self._gen.get_state()
        state["obs"] = None if self.obs is None else self.obs.detach().clone()  # it may hold drawn noise
        return state

    def set_state(self, state: dict) -> None:
        """Restore :meth:`get_state`'s snapshot; the next step continues bit for bit."""
        for k in self.STATE_FIELDS:
            setattr(self, k, state[k].clone().to(self.device))
        self.episode_sums = {k: v.clone().to(self.device) for k, v in state["episode_sums"].items()}
        self._gen.set_state(state["rng"])
        obs = state.get("obs")  # snapshots from before it was kept: recomputed
        self.obs = obs.clone().to(self.device) if obs is not None else self._get_observations()

    def _uniform(self, shape, lo, hi) -> torch.Tensor:
        """Uniform samples in [lo, hi) from the env's generator."""
        return lo + (hi - lo) * torch.rand(shape, generator=self._gen, device=self.device)

    def _draw_seed(self) -> int:
        """A seed from the env's generator, for functions that draw from torch's global generator (Isaac Lab's event
        and noise functions; see ``envs.seeding.global_rng_seeded``)."""
        return int(torch.randint(0, 2**62, (1,), generator=self._gen, device=self.device))

    def _episode_log(self, done: torch.Tensor) -> dict:
        means = [v[done].mean() / self.cfg.episode_length_s for v in self.episode_sums.values()]
        means.append(self.episode_length_buf[done].float().mean() * self.step_dt)
        values = torch.stack(means).tolist()  # one device read for all terms
        keys = [f"Episode_Reward/{k}" for k in self.episode_sums] + ["Episode/length_s"]
        return dict(zip(keys, values))
