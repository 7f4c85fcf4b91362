"""Claim 4 and Figure 5: the norm of the analytic policy gradient against the rollout horizon, per robot.

For each task (``--tasks``: ANYmal C's by default; the paper compares it with the light Warp quadruped), contact
model and horizon h, the env is reset from a fixed seed and the policy (SHAC's actor,
freshly initialised from ``--seed`` or loaded from a SHAC checkpoint) is rolled out for h steps with
reparameterised action noise; the loss is SHAC's short-horizon objective without the critic term,
``-(1/N) sum_envs sum_t gamma^t r_t``, and the figure is the L2 norm of its gradient with respect to the
actor's parameters (unclipped), averaged over ``--repeats`` noise seeds. Each task runs its registered env
config (pushes off). Prints a table, writes JSON (results keyed ``"<robot> <contact model>"``) and a PNG.

    .venv/bin/python scripts/experiments/gradient_norm_vs_horizon.py --horizons 2,4,8,16,32,64 \
        --contact_models smoothed,hard --num_envs 32 \
        [--tasks DiffSim-Velocity-Flat-AnymalC-Direct,DiffSim-Velocity-Flat-WarpQuadruped-Direct] \
        [--checkpoint RUN_A/model_1000.pt,RUN_B/model_400.pt]   # one per task
"""

from __future__ import annotations

import argparse
import json
import math
import os
import time

import torch

from isaaclab_diffsim.rl.shac import RunningObsNormalizer, ShacActorCritic, ShacActorCriticCfg
from isaaclab_diffsim.tasks.direct.locomotion.velocity import DiffVelocityEnv
from isaaclab_diffsim.tasks.task_cfgs import load_task_cfgs


def grad_norm(env: DiffVelocityEnv, policy: ShacActorCritic, normalize, horizon: int, gamma: float, seed: int):
    """Gradient norm of the discounted h-step return w.r.t. the actor, from a reset with ``seed``."""
    torch.manual_seed(seed)
    obs = env.reset().detach()
    env.detach()  # the previous rollout's graph must not leak into this one
    policy.zero_grad(set_to_none=True)
    ret = torch.zeros(env.num_envs, device=env.device)
    discount = 1.0
    for _ in range(horizon):
        obs, rew, terminated, truncated, _ = env.step(policy.act(normalize(obs)))
        ret = ret + discount * rew
        discount *= gamma
    loss = -ret.mean()
    loss.backward()
    grads = [p.grad.reshape(-1) for p in policy.actor_parameters() if p.grad is not None]
    norm = float(torch.cat(grads).norm()) if grads else 0.0
    return norm, float(ret.mean()), int(terminated.sum() + truncated.sum())


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tasks", default="DiffSim-Velocity-Flat-AnymalC-Direct", help="comma-separated task ids")
    parser.add_argument("--horizons", default="2,4,8,16,32,64")
    parser.add_argument("--contact_models", default="smoothed,hard")
    parser.add_argument("--kappa", type=float, default=None, help="override the env's kappa (smoothed model)")
    parser.add_argument("--num_envs", type=int, default=32)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--gamma", type=float, default=0.99)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--checkpoint",
        default=None,
        help="SHAC checkpoint (model_*.pt) to take the policy from; with several tasks, one per task, comma-separated",
    )
    parser.add_argument("--out", default="outputs/gradient_norm_vs_horizon")
    parser.add_argument("--torch_threads", type=int, default=1)
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args()
    torch.set_num_threads(args.torch_threads)
    horizons = [int(h) for h in args.horizons.split(",")]
    models = [m for m in args.contact_models.split(",") if m]
    tasks = [t for t in args.tasks.split(",") if t]
    checkpoints = args.checkpoint.split(",") if args.checkpoint else [None] * len(tasks)
    if len(checkpoints) != len(tasks):
        parser.error(f"--checkpoint names {len(checkpoints)} checkpoints for {len(tasks)} tasks")
    missing = [c for c in checkpoints if c is not None and not os.path.isfile(c)]
    if missing:
        parser.error(f"no such checkpoint: {missing[0]}")
    checkpoint_of = dict(zip(tasks, checkpoints))

    results = {}
    for task, model in ((t, m) for t in tasks for m in models):
        cfg = load_task_cfgs(task, "shac_cfg_entry_point")[0]
        label = f"{cfg.robot.name} {model}"
        cfg.num_envs, cfg.solver_cfg.contact_model, cfg.seed, cfg.device = args.num_envs, model, args.seed, args.device
        cfg.events.push_interval_s = (1e6, 1e6)  # no pushes inside the measured rollouts
        if args.kappa is not None:
            cfg.solver_cfg.kappa = args.kappa
        cfg.validate_values()
        env = DiffVelocityEnv(cfg)
        torch.manual_seed(args.seed)
        policy_cfg = ShacActorCriticCfg()
        ckpt = checkpoint_of[task]
        state = torch.load(ckpt, map_location="cpu", weights_only=False) if ckpt else None
        for key, value in (state["cfg"]["policy"] if state else {}).items():
            if hasattr(policy_cfg, key):
                setattr(policy_cfg, key, value)
        policy = ShacActorCritic(env.num_obs, env.num_actions, policy_cfg).to(args.device)
        normalize = lambda x: x  # noqa: E731  (a fresh policy: raw observations)
        if state is not None:
            policy.load_state_dict(state["model_state_dict"])
            if state.get("obs_normalizer_state_dict") is not None:
                normalizer = RunningObsNormalizer(env.num_obs)
                normalizer.load_state_dict(state["obs_normalizer_state_dict"])
                normalize = normalizer.normalize
        rows = []
        for h in horizons:
            t0 = time.perf_counter()
            runs = [grad_norm(env, policy, normalize, h, args.gamma, args.seed + r) for r in range(args.repeats)]
            norms = [r[0] for r in runs]
            mean = sum(norms) / len(norms)
            std = math.sqrt(sum((n - mean) ** 2 for n in norms) / max(len(norms) - 1, 1))
            rows.append(
                {
                    "horizon": h,
                    "grad_norm_mean": mean,
                    "grad_norm_std": std,
                    "grad_norms": norms,
                    "return_mean": sum(r[1] for r in runs) / len(runs),
                    "dones": sum(r[2] for r in runs),
                }
            )
            print(
                f"[{label}] h={h:4d}: |grad| {mean:.4g} +- {std:.2g} (finite: {all(map(math.isfinite, norms))}, "
                f"{time.perf_counter() - t0:.1f} s)",
                flush=True,
            )
        results[label] = rows
        env.close()

    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "gradient_norm_vs_horizon.json"), "w") as f:
        json.dump({"args": vars(args), "results": results}, f, indent=1)
    keys = list(results)
    print("\nhorizon " + " ".join(f"{k:>22}" for k in keys))
    for i, h in enumerate(horizons):
        print(f"{h:>7} " + " ".join(f"{results[k][i]['grad_norm_mean']:>22.4g}" for k in keys))
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(5, 3.5))
        for k in keys:
            ax.errorbar(
                horizons,
                [r["grad_norm_mean"] for r in results[k]],
                yerr=[r["grad_norm_std"] for r in results[k]],
                marker="o",
                linestyle="-" if k.startswith(keys[0].split()[0]) else "--",
                label=k,
                capsize=3,
            )
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("horizon [policy steps]")
        ax.set_ylabel("|d return / d actor params|")
        ax.legend()
        fig.tight_layout()
        fig.savefig(os.path.join(args.out, "gradient_norm_vs_horizon.png"), dpi=120)
    except ImportError:
        print("matplotlib not available: no plot written")
    print(f"written to {args.out}")


if __name__ == "__main__":
    main()
