"""Does the analytic gradient alone move ANYmal C forward? Open-loop trajectory optimisation through the env.

From a settled standing state with a forward command, an action sequence (horizon h, per env) is optimised by
Adam on the env's own reward summed over the horizon (no policy, no critic): if the physics gradient is
informative, the mean forward base velocity and the tracking reward rise over the iterations. Compares contact
models (the paper's claim 1 in its simplest form). Prints one line per iteration and a summary.

    .venv/bin/python scripts/experiments/open_loop_gradient_descent.py --contact_models smoothed,hard \
        --horizon 32 --iterations 40 --num_envs 16 --command 1.0
"""

from __future__ import annotations

import argparse

import torch

from isaaclab_diffsim.tasks.direct.locomotion.velocity import DiffVelocityEnv
from isaaclab_diffsim.tasks.direct.locomotion.velocity.config.anymal_c.flat_env_cfg import AnymalCFlatDiffEnvCfg
from isaaclab_diffsim.tasks.task_cfgs import apply_overrides


def _load_critic(path: str, num_obs: int):
    """The critic (with the observation normaliser) of a SHAC checkpoint, as a function of raw observations."""
    from isaaclab_diffsim.rl.shac import RunningObsNormalizer, ShacActorCritic, ShacActorCriticCfg

    state = torch.load(path, map_location="cpu", weights_only=False)
    policy_cfg = ShacActorCriticCfg()
    for key, value in state["cfg"]["policy"].items():
        if hasattr(policy_cfg, key):
            setattr(policy_cfg, key, value)
    policy = ShacActorCritic(num_obs, 12, policy_cfg)
    policy.load_state_dict(state["model_state_dict"])
    policy.requires_grad_(False)
    normalizer = RunningObsNormalizer(num_obs)
    if state.get("obs_normalizer_state_dict") is not None:
        normalizer.load_state_dict(state["obs_normalizer_state_dict"])
    return lambda obs: policy.evaluate(normalizer.normalize(obs))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--contact_models", default="smoothed,hard")
    parser.add_argument("--kappa", type=float, default=None)
    parser.add_argument("--horizon", type=int, default=32)
    parser.add_argument("--iterations", type=int, default=40)
    parser.add_argument("--num_envs", type=int, default=16)
    parser.add_argument("--command", type=float, default=1.0, help="forward velocity command [m/s]")
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--settle_steps", type=int, default=50)
    parser.add_argument(
        "--checkpoint",
        default=None,
        help="SHAC checkpoint: add its critic's discounted value of the final state to the objective "
        "(SHAC's actor objective with an open-loop actor)",
    )
    parser.add_argument("--gamma", type=float, default=0.99)
    parser.add_argument("overrides", nargs="*", help="env overrides, e.g. env.gait.period_s=0.6")
    args = parser.parse_args()
    torch.set_num_threads(1)

    summary = {}
    for model in [m for m in args.contact_models.split(",") if m]:
        cfg = AnymalCFlatDiffEnvCfg()
        cfg.num_envs, cfg.solver_cfg.contact_model = args.num_envs, model
        cfg.events.push_interval_s = (1e6, 1e6)
        cfg.events.reset_base_velocity = 0.0
        cfg.events.reset_joint_scale_range = (1.0, 1.0)
        cfg.events.base_mass_add_range = (0.0, 0.0)
        if args.kappa is not None:
            cfg.solver_cfg.kappa = args.kappa
        apply_overrides(args.overrides, env=cfg)
        cfg.validate_values()
        env = DiffVelocityEnv(cfg)
        env.reset(seed=0)
        with torch.no_grad():
            for _ in range(args.settle_steps):
                env.step(torch.zeros(args.num_envs, 12))
        env.commands[:] = torch.tensor([args.command, 0.0, 0.0])
        start = env.get_state()
        critic = _load_critic(args.checkpoint, env.num_obs) if args.checkpoint else None
        actions = torch.zeros(args.horizon, args.num_envs, 12, requires_grad=True)
        opt = torch.optim.Adam([actions], lr=args.lr)
        history = []
        for it in range(args.iterations):
            env.set_state(start)
            env.detach()
            total, vx, falls = 0.0, 0.0, 0
            for t in range(args.horizon):
                _, rew, term, _, _ = env.step(torch.tanh(actions[t]))
                total = total + rew.sum()
                vx += float(env._base_frame(env.q, env.qd)[0][:, 0].mean())
                falls += int(term.sum())
            if critic is not None:
                total = total + args.gamma**args.horizon * critic(env.obs).sum()
            opt.zero_grad()
            (-total / args.num_envs).backward()
            gnorm = float(actions.grad.norm())
            opt.step()
            history.append((float(total) / args.num_envs, vx / args.horizon))
            print(
                f"[{model}] it {it:3d} | return {history[-1][0]:.4f} | mean vx {history[-1][1]:+.3f} m/s | "
                f"|grad| {gnorm:.3g} | falls {falls}",
                flush=True,
            )
        summary[model] = (history[0], history[-1])
        env.close()
    print("\ncontact model | return first -> last | mean forward velocity first -> last [m/s]")
    for model, (first, last) in summary.items():
        print(f"{model:>13} | {first[0]:.4f} -> {last[0]:.4f} | {first[1]:+.3f} -> {last[1]:+.3f}")


if __name__ == "__main__":
    main()
