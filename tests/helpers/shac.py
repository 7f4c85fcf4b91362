"""A differentiable toy env (2-D point masses tracking target velocities), small SHAC runners on it, and a
bitwise comparison of nested tensors."""

import torch

from isaaclab_diffsim.rl.shac import ShacRunner, ShacRunnerCfg


class PointMassEnv:
    """Batch of 2-D point masses, force-controlled, rewarded for tracking a per-episode target velocity.

    Implements the differentiable-env interface the SHAC runner expects: the graph is kept across steps,
    done envs are reset inside ``step`` (graph cut there), ``extras["terminal_obs"]`` has the pre-reset obs.
    Leaving a disc of radius 2 is a failure (terminated); episodes time out after ``max_episode_length``.
    """

    def __init__(self, num_envs: int = 4, max_episode_length: int = 16, dt: float = 0.1, device: str = "cpu"):
        self.num_envs, self.num_obs, self.num_actions = num_envs, 6, 2
        self.max_episode_length, self.dt, self.device = max_episode_length, dt, torch.device(device)
        self.inject_nan = False
        self.raise_fp = False
        z = torch.zeros(num_envs, 2, device=self.device)
        self.pos, self.vel, self.target = z.clone(), z.clone(), z.clone()
        self.ep_len = torch.zeros(num_envs, dtype=torch.long, device=self.device)
        self.ep_sum = torch.zeros(num_envs, device=self.device)

    def _sample(self, n: int):
        pos = (torch.rand(n, 2, device=self.device) * 2 - 1) * 0.5
        vel = torch.randn(n, 2, device=self.device) * 0.1
        target = torch.rand(n, 2, device=self.device) * 2 - 1
        return pos, vel, target

    def _obs(self) -> torch.Tensor:
        return torch.cat([self.pos, self.vel, self.target], dim=-1)

    def reset(self) -> torch.Tensor:
        self.pos, self.vel, self.target = self._sample(self.num_envs)
        self.ep_len.zero_()
        self.ep_sum.zero_()
        return self._obs()

    def get_observations(self) -> torch.Tensor:
        return self._obs()

    def step(self, actions: torch.Tensor):
        if self.raise_fp:
            raise FloatingPointError("non-finite state")
        self.vel = self.vel + self.dt * (2.0 * actions - 0.5 * self.vel)
        self.pos = self.pos + self.dt * self.vel
        reward = 1.0 - (self.vel - self.target).square().sum(-1)
        if self.inject_nan:
            reward = reward.clone()
            reward[0] = float("nan")
        self.ep_len += 1
        terminated = self.pos.norm(dim=-1) > 2.0
        truncated = self.ep_len >= self.max_episode_length
        done = terminated | truncated
        extras = {"terminal_obs": self._obs(), "time_outs": truncated}
        with torch.no_grad():
            self.ep_sum += reward.detach()
            if bool(done.any()):
                extras["episode"] = {
                    "rew_tracking": self.ep_sum[done].mean(),
                    "Episode_Termination/failure": terminated.float().mean(),
                }
        if bool(done.any()):
            pos, vel, target = self._sample(self.num_envs)
            d = done.unsqueeze(-1)
            self.pos = torch.where(d, pos, self.pos)
            self.vel = torch.where(d, vel, self.vel)
            self.target = torch.where(d, target, self.target)
            self.ep_len = torch.where(done, torch.zeros_like(self.ep_len), self.ep_len)
            self.ep_sum = torch.where(done, torch.zeros_like(self.ep_sum), self.ep_sum)
        return self._obs(), reward, terminated, truncated, extras

    def detach(self) -> None:
        self.pos, self.vel, self.target = self.pos.detach(), self.vel.detach(), self.target.detach()

    def get_state(self) -> dict:
        return {k: getattr(self, k).clone() for k in ("pos", "vel", "target", "ep_len", "ep_sum")}

    def set_state(self, state: dict) -> None:
        for k, v in state.items():
            setattr(self, k, v.clone())


def small_cfg(**overrides) -> ShacRunnerCfg:
    cfg = ShacRunnerCfg()
    cfg.horizon = 8
    cfg.max_iterations = 50
    cfg.save_interval = 2
    cfg.policy.actor_hidden_dims = [32, 32]
    cfg.policy.critic_hidden_dims = [32, 32]
    cfg.algorithm.critic_iterations = 4
    for k, v in overrides.items():
        setattr(cfg, k, v)
    return cfg


def make_runner(seed=0, log_dir=None, **overrides):
    torch.manual_seed(seed)
    env = PointMassEnv(num_envs=4)
    return env, ShacRunner(env, small_cfg(**overrides), log_dir=log_dir, device="cpu")


def full_state(runner: ShacRunner) -> dict:
    s = runner.alg.state_dict()
    return {
        "model": s["model_state_dict"],
        "target": s["target_critic_state_dict"],
        "norm": s["obs_normalizer_state_dict"],
        "actor_opt": s["actor_optimizer_state_dict"]["state"],
        "critic_opt": s["critic_optimizer_state_dict"]["state"],
    }


def assert_bitwise_equal(a, b, path="") -> None:
    if isinstance(a, torch.Tensor):
        assert torch.equal(a, b), f"differs at {path}"
    elif isinstance(a, dict):
        assert a.keys() == b.keys(), path
        for k in a:
            assert_bitwise_equal(a[k], b[k], f"{path}/{k}")
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), path
        for i, (x, y) in enumerate(zip(a, b)):
            assert_bitwise_equal(x, y, f"{path}[{i}]")
    else:
        assert a == b, path
