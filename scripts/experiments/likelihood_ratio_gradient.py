"""Whether the likelihood-ratio term (``agent.algorithm.likelihood_ratio_coef``) would add signal to SHAC's actor
gradient at a checkpoint: over consecutive horizons, SHAC's reparameterised gradient and the likelihood-ratio term's
(all the actor's weights, and the first layer's height-scan columns) compared by size, by how well each keeps its
direction from horizon to horizon, and with each other (``isaaclab_diffsim.experiments.estimator_consistency``).
Printed and as JSON.

    .venv/bin/python scripts/experiments/likelihood_ratio_gradient.py CKPT [CKPT ...] --horizons 4 \
        [--num_envs N --warmup_steps 150] [--out F.json] [env.x=... agent.x=...]

The checkpoint is loaded as by ``actor_gradient_snr.py``; the policy is fixed and the normaliser frozen. The
likelihood-ratio term is taken at weight 1 (its gradient scales with the weight) and needs the actions' noise, so
the script sets ``agent.algorithm.likelihood_ratio_coef=1.0`` unless the overrides give another positive value.
"""

from __future__ import annotations

import time

import torch

from isaaclab_diffsim.diagnostics.checkpoint_runner import (
    checkpoint_parser,
    checkpoint_runners,
    parse_checkpoint_args,
    write_records,
)
from isaaclab_diffsim.experiments.estimator_consistency import compare_estimators
from isaaclab_diffsim.experiments.scan_weights import input_groups

TASK = "DiffSim-Velocity-Rough-AnymalC-Direct"
COEF = "agent.algorithm.likelihood_ratio_coef"


def parse_args(argv=None):
    args = parse_checkpoint_args(checkpoint_parser(__doc__, TASK, 4), argv)
    if not any(o.split("=", 1)[0].lstrip("+") == COEF for o in args.overrides):
        args.overrides.append(f"{COEF}=1.0")
    return args


def horizon_gradients(runner) -> tuple[list[torch.Tensor], list[torch.Tensor]]:
    """One horizon's gradients of SHAC's actor loss and of the likelihood-ratio term on the actor's weights (the
    exploration noise's log-std left out: the term holds it fixed)."""
    alg = runner.alg
    params = list(alg.policy.actor.parameters())
    try:
        runner._rollout(update_normalizer=False, bookkeeping=False)
        shac = torch.autograd.grad(alg.actor_loss, params)
        ratio = torch.autograd.grad(alg.likelihood_ratio_term(), params)
    finally:
        alg.abort_horizon()
    return [g.detach() for g in shac], [g.detach() for g in ratio]


def main(argv=None) -> dict:
    args = parse_args(argv)
    records = {}
    for path, runner, state in checkpoint_runners(args, "likelihood_ratio_gradient.py"):
        if runner.alg.noise_buf is None:
            raise SystemExit(f"likelihood_ratio_gradient.py: {COEF} must be positive")
        scan = input_groups(state["env_cfg"], runner.env.num_obs).get("scan")
        whole, scan_cols = ([], []), ([], [])
        for h in range(args.horizons):
            t0 = time.perf_counter()
            shac, ratio = horizon_gradients(runner)
            for i, grads in enumerate((shac, ratio)):
                whole[i].append(torch.cat([g.reshape(-1) for g in grads]))
                if scan is not None:
                    scan_cols[i].append(grads[0][:, scan])
            print(
                f"[likelihood_ratio] horizon {h}: |G_shac| {whole[0][-1].norm():.4g}, |G_lr| {whole[1][-1].norm():.4g}"
                f" ({time.perf_counter() - t0:.1f} s)"
            )
        rec = {"num_envs": runner.env.num_envs, "horizons": args.horizons, "all": compare_estimators(*whole)}
        if scan is not None:
            rec["scan"] = compare_estimators(*scan_cols)
        records[path] = rec
        for group in ("all", "scan"):
            if group not in rec:
                continue
            r = rec[group]
            for name, key in (("shac", "first"), ("likelihood ratio", "second")):
                s = r[key]
                print(
                    f"[likelihood_ratio] {path} {group}: {name:16s} mean |G| {s['mean_norm']:.4g}, consistency "
                    f"{s['consistency']:+.3f}, sum ratio {s['sum_ratio']:.2f}"
                )
            print(
                f"[likelihood_ratio] {path} {group}: norm ratio {r['norm_ratio']:.3g}, cosine of the sums "
                f"{r['cosine_of_sums']:+.3f}"
            )
    write_records(args.out, records)
    return records


if __name__ == "__main__":
    main()
