"""Issue 11 (gradient health): directional derivatives of the 12-step SHAC actor objective against central finite
differences, through stumbling and falling ANYmal C horizons with terminations, in smoothed contact.

The objective J(theta) is SHAC's actor loss (``SHAC.actor_loss``: discounted rewards, the target critic's value taken
as 0 after a failure, V'(terminal obs) after a time-out, V'(s_h) at the horizon's end) of one 12-step horizon of the
registered task's env config (URDF builder, training randomisation off) from a fixed saved env state, with the
policy's sampling noise fixed (the global RNG is reseeded before every evaluation): a deterministic function of all
actor parameters theta (MLP and
log-std). Along each of 30 random unit directions u the analytic derivative a = grad J . u (autograd through the
simulator's adjoint) is compared with the central difference f = (J(theta + eps u) - J(theta - eps u)) / (2 eps).
The issue asks for |a - f| <= 0.1 max(|a|, |f|) on at least 90% of the directions.

J is a sum over envs, J = sum_i J_i, and the envs are independent worlds, so a and f are taken per env (a_i from one
backward pass with per-env copies of the actor's parameters; J_i from SHAC's horizon buffers, checked to sum to
SHAC's loss). Where J_i jumps inside the stencil, f_i measures the jump, not a derivative; such (direction, env)
pairs are left out of that direction's sums, counted and printed (at most ``MAX_LEFT_OUT`` of all pairs):

- termination switch: env i fails or times out at another step at some point of the stencil than at theta;
- non-smooth stencil: env i's central differences at eps and eps/2 differ by more than ``FD_CONSISTENCY`` of the
  direction's gross size sum_j |f_j|. Besides terminations, the forward model has discontinuities of its own that
  stumbling crosses: the saturated branches of ``kernels.drive_and_limit`` (torque-speed envelope, effort limit,
  joint limits) change the implicit term added to H, so the applied torque jumps by the difference of the implicit
  terms times (v+ - v) when a branch switches (observed: a knee at the 7.5 rad/s velocity limit, |dJ| ~ 7e-7, in
  every direction when the switch lies next to theta), and a smoothed contact enters at weight s(margin) (0.018 at
  kappa 200, margin 0.02). This criterion looks at J only, never at the analytic derivative, so it cannot hide a
  wrong adjoint; it only drops pairs whose finite-difference reference is not a derivative. Left out as a whole,
  one such env can fail half of the directions.

The noise of J (float32 physics) is about 1.5e-8 at J ~ 0.1, 1e-5 on f at eps 1e-3, against directional derivatives
of about 1e-3 (unit u among 56k parameters of norm ~12).

Both contact-solve adjoints are tested (``env.solver_cfg.adjoint``: "unrolled" and "implicit"), about 7 s each on one
CPU
core. The check fails, as it should, for a gradient scaled by 0.88 or 1.15, without the critic's value gradient,
and for the implicit adjoint with 4 sweeps (forward not converged) from some start states.
"""

from __future__ import annotations

import contextlib
import math

import pytest
import torch
from torch.func import functional_call, vmap

from isaaclab_diffsim.rl.shac import ShacRunner
from isaaclab_diffsim.solver import ADJOINTS
from isaaclab_diffsim.tasks.direct.locomotion.velocity import DiffVelocityEnv
from isaaclab_diffsim.tasks.direct.locomotion.velocity.config.anymal_c.agents.shac_cfg import AnymalCFlatShacRunnerCfg
from isaaclab_diffsim.tasks.direct.locomotion.velocity.config.anymal_c.flat_env_cfg import AnymalCFlatDiffEnvCfg
from isaaclab_diffsim.tasks.direct.locomotion.velocity.velocity_env_cfg import DiffEventsCfg

NUM_ENVS = 16
HORIZON = 12
NUM_DIRECTIONS = 30
EPS = 1e-3
"""Step along the unit direction (the actor's parameter vector has norm ~12). The float32 noise of J sets the lower
end (1e-5 on f at 1e-3), the model's discontinuities the upper (at 3e-3 most directions straddle one somewhere)."""
TOLERANCE = 0.1  # the issue's: |a - f| <= 0.1 max(|a|, |f|)
MIN_PASS_FRACTION = 0.9  # the issue's: on at least 90% of the directions
FD_CONSISTENCY = 0.02
"""Env i's stencil along u counts as smooth when |f_i(eps) - f_i(eps/2)| <= this share of sum_j |f_j|."""
MAX_LEFT_OUT = 0.15  # share of the (direction, env) pairs that may be left out
WARMUP_STEPS = 40
NOISE_SEED = 1234


pytestmark = pytest.mark.usefixtures("one_torch_thread")


def make_stumbling_setup(adjoint: str, seed: int = 0, num_envs: int = NUM_ENVS, **env_overrides):
    """Env, runner and a saved start state from which the robots stumble, fall and time out within the horizon.

    40 policy steps of uniformly random actions in [-1, 1] (the tanh-squashed policy's range; envs that fall on the
    way are reset, so the batch mixes stumbling robots and robots dropped from the spawn height), then every fourth
    env tilted by 43-52 degrees and falling on at 4-7 rad/s (they fail inside the horizon, where the tilt passes 60
    degrees), and the episode clocks of two envs a few steps before the time limit (time-outs inside the horizon,
    bootstrapped with V'(terminal obs)).
    """
    cfg = AnymalCFlatDiffEnvCfg(num_envs=num_envs, asset_source="urdf", seed=seed)
    nominal = DiffEventsCfg()  # the scenario is tuned on the nominal conditions (training randomisation off)
    for name in ("ground_friction", "foot_friction_range", "motor_strength_range", "action_delay_range"):
        setattr(cfg.events, name, getattr(nominal, name))
    cfg.events.base_mass_add_range, cfg.events.push_velocity = nominal.base_mass_add_range, nominal.push_velocity
    cfg.rewards.feet_air_time = 0.0  # contact timing: stopped gradient and a jump at every touchdown (not in J here)
    cfg.solver_cfg.adjoint = adjoint
    for key, value in env_overrides.items():
        setattr(cfg, key, value)
    env = DiffVelocityEnv(cfg)
    torch.manual_seed(seed)
    runner_cfg = AnymalCFlatShacRunnerCfg()
    assert runner_cfg.horizon == HORIZON
    runner = ShacRunner(env, runner_cfg, device="cpu")
    gen = torch.Generator().manual_seed(seed + 1)
    with torch.no_grad():
        for _ in range(WARMUP_STEPS):
            obs, *_ = env.step(2.0 * torch.rand(num_envs, 12, generator=gen) - 1.0)
            runner.alg.obs_normalizer.update(obs)  # realistic input scaling of the actor
        # every fourth env: tilted 43-52 degrees about a random horizontal axis, falling on at 4-7 rad/s
        kicked = (torch.arange(num_envs) % 4 == 0).nonzero().flatten()
        n = kicked.numel()
        heading = 2.0 * math.pi * torch.rand(n, generator=gen)
        axis = torch.stack([torch.cos(heading), torch.sin(heading), torch.zeros(n)], 1)
        tilt = 0.75 + 0.15 * torch.rand(n, generator=gen)
        rate = 4.0 + 3.0 * torch.rand(n, generator=gen)
        q, qd = env.q.clone(), env.qd.clone()
        turn = torch.cat([torch.sin(0.5 * tilt)[:, None] * axis, torch.cos(0.5 * tilt)[:, None]], 1)
        q[kicked, 3:7] = quat_mul(turn, q[kicked, 3:7])
        q[kicked, 2] += 0.05
        qd[kicked, 3:6] += rate[:, None] * axis
        env.q, env.qd = q, qd
        env.episode_length_buf[1] = env.max_episode_length - 5
        env.episode_length_buf[2] = env.max_episode_length - 9
    env.detach()
    return env, runner, env.get_state()


def quat_mul(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Hamilton product of (x, y, z, w) quaternions (Newton's order)."""
    av, aw, bv, bw = a[:, :3], a[:, 3:], b[:, :3], b[:, 3:]
    return torch.cat([aw * bv + bw * av + torch.cross(av, bv, dim=1), aw * bw - (av * bv).sum(1, keepdim=True)], 1)


def shac_loss_per_env(alg) -> torch.Tensor:
    """SHAC's actor loss of the last horizon split by env, in float64, from its detached buffers (rewards, dones,
    target values): the same recursion as ``SHAC.process_env_step``; the caller checks that it sums to the loss."""
    rew, done, value = (x.double() for x in (alg.rew_buf, alg.done_buf, alg.next_value_buf))
    acc = torch.zeros(alg.num_envs, dtype=torch.float64)
    disc, loss = torch.ones_like(acc), torch.zeros_like(acc)
    for i in range(alg.horizon):
        acc = acc + disc * rew[i]
        loss = loss - done[i] * (acc + alg.gamma * disc * value[i])
        acc = acc * (1.0 - done[i])
        disc = torch.where(done[i] > 0, torch.ones_like(disc), disc * alg.gamma)
    return loss / (alg.horizon * alg.num_envs)


@contextlib.contextmanager
def per_env_actor_copies(policy, num_envs: int):
    """Give every env (row of the observation batch) its own copy of the actor's parameters, equal to the shared ones.

    The envs are independent worlds, so one backward pass of the summed loss then yields each env's own gradient.
    Yields the copies, each (num_envs, *shape), in the order of ``actor_parameters()``."""
    actor, log_std = policy.actor, policy.log_std
    copies = {
        n: p.detach().unsqueeze(0).repeat(num_envs, *[1] * p.dim()).requires_grad_(True)
        for n, p in actor.named_parameters()
    }

    def one_row(params, x):
        return functional_call(actor, params, (x.unsqueeze(0),)).squeeze(0)

    class PerEnvActor(torch.nn.Module):
        def forward(self, obs):
            return vmap(one_row)(copies, obs)

    policy.actor = PerEnvActor()
    policy.log_std = torch.nn.Parameter(log_std.detach().unsqueeze(0).repeat(num_envs, 1))
    try:
        yield [*copies.values(), policy.log_std]
    finally:
        policy.actor, policy.log_std = actor, log_std


class ActorObjective:
    """J(theta) = sum over envs of J_i(theta): SHAC's actor loss of one horizon from ``start``, sampling noise fixed."""

    def __init__(self, env, runner, start):
        self.env, self.runner, self.start = env, runner, start
        self.alg = runner.alg
        self.params = self.alg.policy.actor_parameters()
        self.theta0 = torch.nn.utils.parameters_to_vector(self.params).detach().double()
        self._dones: list[torch.Tensor] = []
        step = env.step

        def recording_step(actions):
            out = step(actions)
            self._dones.append(torch.stack([out[2], out[3]], dim=-1).detach().clone())  # terminated, truncated
            return out

        env.step = recording_step

    def _begin(self, theta: torch.Tensor) -> None:
        with torch.no_grad():
            torch.nn.utils.vector_to_parameters(theta.to(torch.float32), self.params)
        self.env.set_state(self.start)
        torch.manual_seed(NOISE_SEED)
        self._dones.clear()

    def values(self, theta: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(J_i per env (float64), termination pattern (horizon, num_envs, 2): terminated, truncated), no graph."""
        self._begin(theta)
        total = self.runner.compute_actor_loss()
        per_env = shac_loss_per_env(self.alg)
        assert abs(float(per_env.sum()) - total) <= 1e-6 * max(1.0, abs(total)), (float(per_env.sum()), total)
        return per_env, torch.stack(self._dones)

    def _loss_with_graph(self):
        try:
            self.runner._rollout(update_normalizer=False, bookkeeping=False)
            return self.alg.actor_loss
        except BaseException:
            self.alg.abort_horizon()
            raise

    def gradients(self, theta: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """(dJ_i/dtheta per env (num_envs, P) float64, dJ/dtheta with shared parameters (P,) float64, terminations),
        through the simulator's adjoint. The first from per-env parameter copies, the second the plain SHAC path."""
        self._begin(theta)
        loss = self._loss_with_graph()
        shared = torch.autograd.grad(loss, self.params, allow_unused=True)
        self.alg.abort_horizon()
        shared = torch.cat([_or_zeros(g, p).reshape(-1) for g, p in zip(shared, self.params)]).double()
        self._begin(theta)
        with per_env_actor_copies(self.alg.policy, self.env.num_envs) as copies:
            loss = self._loss_with_graph()
            grads = torch.autograd.grad(loss, copies, allow_unused=True)
            self.alg.abort_horizon()
        n = self.env.num_envs
        per_env = torch.cat([_or_zeros(g, p).reshape(n, -1) for g, p in zip(grads, copies)], 1).double()
        return per_env, shared, torch.stack(self._dones)


def _or_zeros(g, p):
    return torch.zeros_like(p) if g is None else g


def directional_derivative_table(
    objective: ActorObjective, num_directions: int = NUM_DIRECTIONS, eps: float = EPS, seed: int = 7
) -> tuple[list[dict], torch.Tensor]:
    """One row per random unit direction u: per env the analytic a_i = grad J_i . u and the central differences f_i
    (eps) and h_i (eps/2), the envs left out and why, and the comparison over the envs kept."""
    theta0 = objective.theta0
    grads, shared, dones0 = objective.gradients(theta0)
    _, dones0_nograd = objective.values(theta0)
    assert torch.isfinite(grads).all() and torch.isfinite(shared).all(), "non-finite actor gradient"
    assert torch.equal(dones0, dones0_nograd), "terminations differ with and without grad"
    gen = torch.Generator().manual_seed(seed)
    rows = []
    for k in range(num_directions):
        u = torch.randn(theta0.numel(), generator=gen, dtype=torch.float64)
        u /= u.norm()
        values, switch = {}, torch.zeros(objective.env.num_envs, dtype=torch.bool)
        for s in (1.0, 0.5, -0.5, -1.0):
            values[s], dones = objective.values(theta0 + s * eps * u)
            switch |= (dones != dones0).any(-1).any(0)
        a = grads @ u
        f = (values[1.0] - values[-1.0]) / (2 * eps)
        h = (values[0.5] - values[-0.5]) / eps
        scale = float(torch.maximum(f.abs(), h.abs()).sum())  # gross size: sum over envs of |f_i|
        jump = ~switch & ((f - h).abs() > FD_CONSISTENCY * scale)
        keep = ~switch & ~jump
        a_keep, f_keep = float(a[keep].sum()), float(f[keep].sum())
        rel = abs(a_keep - f_keep) / max(abs(a_keep), abs(f_keep), 1e-30)
        a_all, f_all = float(a.sum()), float(f.sum())
        rows.append(
            {
                "k": k,
                "a": a_keep,
                "f": f_keep,
                "rel": rel,
                "ok": rel <= TOLERANCE,
                "a_all": a_all,
                "f_all": f_all,
                "rel_all": abs(a_all - f_all) / max(abs(a_all), abs(f_all), 1e-30),
                "a_shared": float(shared @ u),
                "switch": switch.nonzero().flatten().tolist(),
                "jump": jump.nonzero().flatten().tolist(),
                "kept": int(keep.sum()),
            }
        )
    return rows, dones0


def print_table(title: str, rows: list[dict], dones0: torch.Tensor) -> None:
    fails = dones0[..., 0]
    outs = dones0[..., 1] & ~dones0[..., 0]
    print(f"\n{title}")
    print(
        f"  failures per step {fails.sum(1).tolist()} (envs {fails.any(0).nonzero().flatten().tolist()}),"
        f" time-outs per step {outs.sum(1).tolist()} (envs {outs.any(0).nonzero().flatten().tolist()})"
    )
    print(
        f"  {'k':>3} {'a (kept)':>12} {'f (kept)':>12} {'rel':>7}  {'a (all)':>12} {'f (all)':>12} {'rel':>7}"
        f"  kept  left out: termination switch / non-smooth"
    )
    for r in rows:
        print(
            f"  {r['k']:>3} {r['a']:>+12.4e} {r['f']:>+12.4e} {r['rel']:>7.3f}  {r['a_all']:>+12.4e}"
            f" {r['f_all']:>+12.4e} {r['rel_all']:>7.3f}  {r['kept']:>4}  {r['switch']} / {r['jump']}"
            f"{'' if r['ok'] else '  FAIL'}"
        )


@pytest.mark.parametrize("adjoint", ADJOINTS)
def test_actor_objective_directional_derivatives_match_finite_differences(adjoint):
    env, runner, start = make_stumbling_setup(adjoint)
    objective = ActorObjective(env, runner, start)
    rows, dones0 = directional_derivative_table(objective)
    print_table(
        f"SHAC actor objective, {HORIZON} steps, {NUM_ENVS} envs, adjoint={adjoint},"
        f" iterations={env.cfg.solver_cfg.iterations}, eps={EPS:g}",
        rows,
        dones0,
    )
    n_pairs = NUM_ENVS * len(rows)
    left_out = sum(NUM_ENVS - r["kept"] for r in rows)
    failing = dones0[..., 0].any(0).nonzero().flatten().tolist()
    failing_kept = sum(e not in r["switch"] + r["jump"] for r in rows for e in failing)
    passed = sum(r["ok"] and r["kept"] > 0 for r in rows)
    shared_err = max(abs(r["a_shared"] - r["a_all"]) for r in rows) / max(abs(r["a_shared"]) for r in rows)
    print(
        f"  agree within {TOLERANCE:.0%}: {passed}/{len(rows)} directions (envs kept; on all envs:"
        f" {sum(r['rel_all'] <= TOLERANCE for r in rows)}/{len(rows)}); (direction, env) pairs left out {left_out}/"
        f"{n_pairs} ({sum(len(r['switch']) for r in rows)} termination switches); failing envs kept in"
        f" {failing_kept}/{len(failing) * len(rows)}; per-env vs shared-parameter gradient {shared_err:.1e}"
    )

    # The horizon covers failures (segment cut, value 0) and time-outs (bootstrapped from the terminal obs) ...
    assert len(failing) >= 2, "fewer than 2 envs fail inside the horizon"
    assert (dones0[..., 1] & ~dones0[..., 0]).any(), "no time-out inside the horizon"
    # ... and the failing envs take part in the comparison.
    assert failing_kept >= 0.75 * len(failing) * len(rows), "the failing envs were mostly left out"
    # The per-env parameter copies reproduce SHAC's gradient (only float32 rounding of the forward differs).
    assert shared_err <= 0.05, f"per-env gradients do not sum to SHAC's gradient ({shared_err:.2e})"
    assert left_out <= MAX_LEFT_OUT * n_pairs, f"{left_out} of {n_pairs} (direction, env) pairs left out"
    need = math.ceil(MIN_PASS_FRACTION * len(rows))
    assert passed >= need, f"only {passed} of {len(rows)} directions agree within {TOLERANCE:.0%} (need {need})"
