"""The training stack in :func:`.episodes.run_episodes`'s interface: the manager-based env and its rsl_rl policy.

For the comparison of a LEAPP deployment with the stack it was exported from: the same task config, episode
loop and metrics, but Isaac Lab's managers compute the observations and apply the actions.
"""

from __future__ import annotations

import torch


class TrainingStackEpisodes:
    """``reset()``/``step()`` of a one-env :class:`isaaclab_rl.rsl_rl.RslRlVecEnvWrapper` driven by ``policy``.

    The env resets itself when a termination fires; ``ended`` tells :func:`.episodes.run_episodes` so (the state it
    then reads is already the next episode's).
    """

    def __init__(self, env, policy):
        self.env, self.policy = env, policy
        unwrapped = env.unwrapped
        self.scene, self.command_manager, self.step_dt = unwrapped.scene, unwrapped.command_manager, unwrapped.step_dt
        self.ended = False
        self._obs = None

    def reset(self):
        self._obs = self.env.reset()[0]
        self.ended = False

    def step(self):
        with torch.inference_mode():
            self._obs, _, dones, _ = self.env.step(self.policy(self._obs))
        self.ended = bool(dones.any())
