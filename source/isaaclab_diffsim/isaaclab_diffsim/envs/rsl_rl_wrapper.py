"""rsl_rl adapter for :class:`DiffDirectRLEnv`, so rsl_rl's PPO trains on exactly the env SHAC trains on.

The wrapper plays the role of Isaac Lab's ``isaaclab_rl.rsl_rl.RslRlVecEnvWrapper`` (which only accepts
Isaac Lab's ``DirectRLEnv``/``ManagerBasedRLEnv``) for rsl-rl-lib 5.x's :class:`rsl_rl.env.VecEnv` contract:

- observations are a :class:`tensordict.TensorDict` with the single group ``"policy"`` (48-d), so a runner
  config with ``obs_groups = {"actor": ["policy"], "critic": ["policy"]}`` (or an empty mapping, which rsl_rl
  resolves to ``"policy"``) works;
- ``step`` returns ``(obs, rewards, dones, extras)`` with ``dones = terminated | truncated`` as ``long``,
  ``extras["time_outs"]`` (the truncations, which PPO bootstraps) and the env's ``extras["episode"]``
  (per-term episode sums, logged by rsl_rl's :class:`~rsl_rl.utils.logger.Logger` under their own keys); the
  env's other extras (``terminal_obs``) pass through untouched and rsl_rl ignores them;
- ``clip_actions`` clamps actions to ``[-clip, clip]`` before the env sees them, like Isaac Lab's wrapper;
- ``episode_length_buf`` reads and writes the env's buffer (``OnPolicyRunner.learn(init_at_random_ep_len=True)``
  replaces it).

Physics, rewards, terminations and resets are the env's own: every step runs under :func:`torch.no_grad`, so the
bridge takes its forward-only path and nothing differs from SHAC's rollouts except that no graph is kept.

rsl_rl's runner collects rollouts under :func:`torch.inference_mode`. Tensors created there are inference tensors
and could never again enter an autograd graph, which would poison the env's state for a later differentiable use
of the same env (SHAC, gradient checks). The wrapper therefore leaves inference mode for the duration of a step
(still under ``no_grad``), so the env's state stays ordinary tensors; the returned tensors are ordinary tensors too,
which rsl_rl copies into its storage as usual.
"""

from __future__ import annotations

import torch
from rsl_rl.env import VecEnv
from tensordict import TensorDict

from .diff_direct_env import DiffDirectRLEnv


class DiffEnvRslRlWrapper(VecEnv):
    """Wraps a :class:`DiffDirectRLEnv` (bare, or as returned by ``gym.make``) for rsl-rl-lib 5.x runners.

    Args:
        env: The environment, or a gymnasium wrapper around it (``env.unwrapped`` is used).
        clip_actions: If given, actions are clamped to ``[-clip_actions, clip_actions]``; ``None`` leaves them as is.
        reset: Reset the env on construction (rsl_rl's runner never calls ``reset``). Default True.

    Note:
        The env's autograd graph is cut on construction (:meth:`DiffDirectRLEnv.detach`), so a rollout can start
        from a state reached by a differentiable rollout.
    """

    obs_group = "policy"
    """Name of the (only) observation group in the returned TensorDict."""

    def __init__(self, env, clip_actions: float | None = None, reset: bool = True):
        base = getattr(env, "unwrapped", env)
        if not isinstance(base, DiffDirectRLEnv):
            raise ValueError(f"DiffEnvRslRlWrapper: expected a DiffDirectRLEnv, got {type(base).__name__}")
        if clip_actions is not None and clip_actions <= 0.0:
            raise ValueError(f"DiffEnvRslRlWrapper: clip_actions must be positive or None, got {clip_actions}")
        self.env = env
        self.clip_actions = clip_actions
        self.num_envs = base.num_envs
        self.num_actions = base.num_actions
        self.num_obs = base.num_obs
        self.device = base.device
        self.max_episode_length = base.max_episode_length
        with torch.inference_mode(False), torch.no_grad():
            if reset:
                base.reset()
            else:
                base.get_observations()
            base.detach()

    def __str__(self) -> str:
        return f"<{type(self).__name__}{self.unwrapped}>"

    def __repr__(self) -> str:
        return str(self)

    # ------------------------------------------------------------------ properties
    @property
    def unwrapped(self) -> DiffDirectRLEnv:
        """The bare :class:`DiffDirectRLEnv`."""
        return getattr(self.env, "unwrapped", self.env)

    @property
    def cfg(self):
        """The env's configuration (rsl_rl's logger stores it with the run)."""
        return self.unwrapped.cfg

    @property
    def episode_length_buf(self) -> torch.Tensor:
        """The env's episode-length buffer, shape (num_envs,), dtype long."""
        return self.unwrapped.episode_length_buf

    @episode_length_buf.setter
    def episode_length_buf(self, value: torch.Tensor) -> None:
        # rsl_rl randomises initial episode lengths with randint_like(...); keep the env's dtype and device
        with torch.inference_mode(False):
            self.unwrapped.episode_length_buf = value.to(device=self.device, dtype=torch.long).clone()

    @classmethod
    def class_name(cls) -> str:
        return cls.__name__

    # ------------------------------------------------------------------ MDP
    def _obs(self, obs: torch.Tensor) -> TensorDict:
        return TensorDict({self.obs_group: obs}, batch_size=[self.num_envs], device=self.device)

    def seed(self, seed: int = -1) -> int:
        """Reseed the env's sampler (commands, resets, events); ``-1`` keeps the configured seed."""
        base = self.unwrapped
        if seed != -1:
            base.cfg.seed = seed
        base._gen.manual_seed(base.cfg.seed)
        return base.cfg.seed

    def reset(self) -> tuple[TensorDict, dict]:
        """Reset all envs; returns ``(observations, extras)`` like Isaac Lab's wrapper."""
        with torch.inference_mode(False), torch.no_grad():
            obs = self.unwrapped.reset()
        return self._obs(obs), {}

    def get_observations(self) -> TensorDict:
        """Current observations, ``TensorDict({"policy": (num_envs, 48)})``."""
        with torch.inference_mode(False), torch.no_grad():
            obs = self.unwrapped.get_observations().detach()
        return self._obs(obs)

    def step(self, actions: torch.Tensor) -> tuple[TensorDict, torch.Tensor, torch.Tensor, dict]:
        """Step all envs without a graph; returns ``(obs, rewards, dones, extras)`` for rsl_rl."""
        with torch.inference_mode(False), torch.no_grad():
            # an inference tensor from the runner's policy becomes an ordinary tensor here
            actions = actions.to(self.device).clone()
            if self.clip_actions is not None:
                actions = torch.clamp(actions, -self.clip_actions, self.clip_actions)
            obs, rew, terminated, truncated, extras = self.unwrapped.step(actions)
            dones = (terminated | truncated).to(dtype=torch.long)
            extras = dict(extras)
            extras["time_outs"] = truncated
        return self._obs(obs), rew, dones, extras

    def close(self) -> None:
        close = getattr(self.env, "close", None)
        if close is not None:
            close()
