"""``DiffDirectRLEnv`` on its own: a minimal task (hold the base at a height) written only with the DirectRLEnv hooks
gets gym-style stepping, time-outs with terminal observations, resets that cut the graph, gradients through the
step and bit-exact get_state/set_state from the base class."""

import pytest
import torch

from isaaclab_diffsim.assets import build_anymal_c_model
from isaaclab_diffsim.envs import DiffDirectRLEnv, DiffDirectRLEnvCfg
from isaaclab_diffsim.solver import SolverMoreauGS


class HoldHeightEnv(DiffDirectRLEnv):
    """Observation: base height; actions: leg joint offsets; reward -(h - 0.5)^2; time-outs only."""

    STATE_FIELDS = (*DiffDirectRLEnv.STATE_FIELDS, "last_actions")

    def __init__(self, cfg):
        super().__init__(cfg)
        self.default_q = self.q[0].clone()
        self.last_actions = torch.zeros(self.num_envs, 12)
        self.episode_sums = {"height": torch.zeros(self.num_envs)}

    def _setup_scene(self):
        model, layout = build_anymal_c_model(self.cfg.num_envs, requires_grad=True)
        return model, layout, SolverMoreauGS(model, **self.cfg.solver_cfg.solver_kwargs())

    def _pre_physics_step(self, actions):
        self.actions = actions

    def _apply_action(self):
        return torch.cat([self.q.new_zeros(self.num_envs, 7), self.default_q[7:] + 0.3 * self.actions], 1)

    def _get_dones(self):
        return torch.zeros_like(
            self.episode_length_buf, dtype=torch.bool
        ), self.episode_length_buf >= self.max_episode_length

    def _get_rewards(self):
        self.last_actions = self.actions
        terms = {"height": -((self.q[:, 2] - 0.5) ** 2)}
        return terms["height"], terms

    def _get_observations(self):
        return torch.cat([self.q[:, 2:3], self.last_actions], 1)

    def _reset_idx(self, envs):
        d = envs[:, None]
        q = self.default_q.expand(self.num_envs, -1).clone()
        q[:, 2] += self._uniform((self.num_envs,), 0.0, 0.05)
        self.q = torch.where(d, q, self.q)
        self.qd = torch.where(d, torch.zeros_like(self.qd), self.qd)
        self.last_actions = torch.where(d, torch.zeros_like(self.last_actions), self.last_actions)
        self.episode_length_buf = torch.where(envs, 0, self.episode_length_buf)


def make(**kw):
    cfg = DiffDirectRLEnvCfg(num_envs=3, episode_length_s=0.06, observation_space=13, action_space=12, **kw)
    cfg.solver_cfg.contact_model = "hard"
    return HoldHeightEnv(cfg)


def test_hooks_make_a_working_env():
    env = make()
    assert env.observation_space.shape == (3, 13) and env.action_space.shape == (3, 12)
    obs = env.reset(seed=1)
    assert obs.shape == (3, 13) and env.max_episode_length == 3
    a = torch.zeros(3, 12, requires_grad=True)
    obs, rew, term, trunc, extras = env.step(a)
    (g,) = torch.autograd.grad(rew.sum(), a)
    assert torch.count_nonzero(g) > 0  # the reward is a differentiable function of the action through the solver
    snap = env.get_state()
    ref = [env.step(0.1 * torch.ones(3, 12)) for _ in range(3)]
    assert ref[1][3].all() and "episode" in ref[1][4]  # time-out at the third step: reset, logged
    assert torch.equal(ref[1][4]["terminal_obs"][:, 1:], 0.1 * torch.ones(3, 12))  # before the reset
    assert torch.equal(ref[1][0][:, 1:], torch.zeros(3, 12))  # after it
    env.set_state(snap)
    again = [env.step(0.1 * torch.ones(3, 12)) for _ in range(3)]
    for r, s in zip(ref, again):
        assert torch.equal(r[0], s[0]) and torch.equal(r[1], s[1])
    with pytest.raises(ValueError, match="actions must have shape"):
        env.step(torch.zeros(3, 11))


def test_base_config_is_validated_and_hooks_are_required():
    with pytest.raises(ValueError, match="decimation must be a positive"):
        make(decimation=0)
    with pytest.raises(ValueError, match="kappa"):
        cfg = DiffDirectRLEnvCfg(num_envs=1)
        cfg.solver_cfg.kappa = -1.0
        DiffDirectRLEnv(cfg)
    with pytest.raises(NotImplementedError):
        DiffDirectRLEnv(DiffDirectRLEnvCfg(num_envs=1))
