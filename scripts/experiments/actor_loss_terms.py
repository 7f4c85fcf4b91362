"""Which reward terms move the actor's terrain inputs: the SHAC actor loss of a checkpoint's next horizons split into
one part per reward term and the critic's values at the segments' ends (``values``), and per input group of the actor's
first layer (flat-MDP terms, height scan) each part's gradient against the whole gradient and against the weights
(``isaaclab_diffsim.experiments.loss_terms``). Printed and as JSON.

    .venv/bin/python scripts/experiments/actor_loss_terms.py CKPT [CKPT ...] --horizons 4 [--out F.json] \
        [--task DiffSim-Velocity-Rough-AnymalC-Direct] [--num_envs N --warmup_steps 150] [env.x=... agent.x=...]

The checkpoint is loaded as by ``actor_gradient_snr.py`` (the trailing overrides must give the run's env config; with
the checkpoint's own env count the horizons continue the training run). The policy is fixed and the normaliser frozen;
each horizon is rolled out once per part from the same env and RNG state (the physics backward runs once per rollout),
and the gradients of the horizons are summed. Per part: ``share`` is its projection on the whole gradient (the shares
add up to 1), ``radial`` the projection on the weights (negative: a step down that part's gradient grows the weights);
shares are taken against the sum of the parts. ``additivity_error`` per horizon: ||sum of the parts' gradients - the
whole loss's|| / ||the whole's||, the rounding of the sum (the replays are bitwise). Terms that are 0 throughout
(weight 0) and the termination penalty (constant per failure) have no part. The per-env action-gradient clip
(``agent.algorithm.env_action_grad_clip``) is not linear, so the parts would not add up under it: pass
``agent.algorithm.env_action_grad_clip=null``. ``--reference_term TERM`` also projects every part's gradient (the
whole first layer) on TERM's (``isaaclab_diffsim.experiments.loss_terms.alignment``): e.g. which parts hold back
the tracking term, ``--reference_term track_lin_vel_xy_l2``; the same within each horizon, with its median over the
horizons, which one exploding horizon does not decide (``loss_terms.alignment_per_horizon``).
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
from isaaclab_diffsim.experiments.loss_terms import (
    VALUES,
    RewardTermRecorder,
    alignment,
    alignment_per_horizon,
    gradient_split,
    term_losses,
)
from isaaclab_diffsim.experiments.scan_weights import input_groups
from isaaclab_diffsim.rl.shac.capture import restore_snapshot, take_snapshot

TASK = "DiffSim-Velocity-Rough-AnymalC-Direct"
REPLAY_TOLERANCE = 0.0
"""Relative difference allowed between the loss of a replayed horizon and the first rollout's: none, since a replay
from a snapshot is bitwise (a difference means a state the snapshot does not restore)."""


def parse_args(argv=None):
    parser = checkpoint_parser(__doc__, TASK, 4)
    parser.add_argument("--reference_term", default=None, help="a reward term: every part projected on its gradient")
    return parse_checkpoint_args(parser, argv)


def rollout_part(runner, obs: torch.Tensor, part: str | None) -> tuple[torch.Tensor, float, list[str]]:
    """Roll one horizon out from ``obs`` (the env state restored) and differentiate the named part of its actor loss
    (None: the whole loss) with respect to the actor's first-layer weights: (gradient, loss, the reward terms that
    depend on the actions and are not 0 throughout: a term of weight 0, or the termination penalty, has no part)."""
    weight = runner.alg.policy.actor[0].weight
    with RewardTermRecorder(runner.env, runner.alg) as rec:
        try:
            runner._rollout(update_normalizer=False, bookkeeping=False, obs=obs)
            loss = runner.alg.actor_loss
            parts = term_losses(rec.terms, rec.done, runner.alg.gamma, rec.rewards)
            if part is None:
                target = loss
            elif part == VALUES:
                target = loss - sum(parts.values())
            else:
                target = parts[part]
            (grad,) = torch.autograd.grad(target, [weight], allow_unused=True)
        finally:
            runner.alg.abort_horizon()
    grad = torch.zeros_like(weight) if grad is None else grad.detach()
    live = [
        k
        for k, v in parts.items()
        if v.requires_grad and any(bool(step[k].detach().any()) for step in rec.terms if k in step)
    ]
    return grad, float(loss.detach()), live


def horizon_part_gradients(runner) -> tuple[dict[str, torch.Tensor], float, float]:
    """One horizon's first-layer weight gradient per part of the actor loss, the loss, and how far the parts'
    gradients are from adding up to the whole loss's (relative): the horizon is rolled out once per part from the
    same env and RNG state, since the physics backward runs once per rollout. RuntimeError when a replay's loss is
    off the first rollout's by more than :data:`REPLAY_TOLERANCE` (a state the snapshot does not restore)."""
    snap = take_snapshot(runner)
    whole, loss, names = rollout_part(runner, restore_snapshot(runner, snap), None)
    grads = {}
    for name in [*names, VALUES]:
        grads[name], again, _ = rollout_part(runner, restore_snapshot(runner, snap), name)
        if abs(again - loss) > REPLAY_TOLERANCE * abs(loss):
            raise RuntimeError(f"the replay for {name} gave the loss {again!r}, the first rollout {loss!r}")
    error = float((sum(grads.values()) - whole).norm() / whole.norm().clamp_min(1e-30))
    return grads, loss, error


def main(argv=None) -> dict:
    args = parse_args(argv)
    records = {}
    for path, runner, state in checkpoint_runners(args, "actor_loss_terms.py"):
        if runner.alg.cfg.env_action_grad_clip is not None:
            raise SystemExit(
                "actor_loss_terms.py: the per-env action-gradient clip is on; its parts would not add up "
                "(pass agent.algorithm.env_action_grad_clip=null)"
            )
        groups = input_groups(state["env_cfg"], runner.env.num_obs)
        summed, losses, errors, each = None, [], [], []
        for h in range(args.horizons):
            t0 = time.perf_counter()
            grads, loss, error = horizon_part_gradients(runner)
            losses.append(loss)
            errors.append(error)
            if args.reference_term is not None:
                each.append({name: g.clone() for name, g in grads.items()})
            if summed is None:
                summed = grads
            else:
                for name, g in grads.items():
                    summed[name] = summed.get(name, torch.zeros_like(g)) + g
            print(
                f"[loss_terms] horizon {h}: loss {loss:.4f}, the parts' gradients add up to the whole's to "
                f"{error:.1%} ({time.perf_counter() - t0:.1f} s)"
            )
        weight = runner.alg.policy.actor[0].weight.detach()
        rec = gradient_split(summed, weight, groups)
        records[path] = {
            "num_envs": runner.env.num_envs,
            "horizons": args.horizons,
            "loss": losses,
            "additivity_error": errors,
            **rec,
        }
        for group, r in rec.items():
            print(f"[loss_terms] {path} {group}: |G| {r['norm']:.3g}, |W| {r['weight_norm']:.3g}")
            order = sorted(r["parts"].items(), key=lambda kv: -abs(kv[1]["share"]))
            for name, p in order:
                print(
                    f"[loss_terms]   {name:28s} share {p['share']:+8.3f}  cosine {p['cosine']:+.3f}  "
                    f"|G_k| {p['norm']:.3g}  radial {p['radial']:+.3g}"
                )
        if args.reference_term is not None:
            try:
                aligned = alignment(summed, args.reference_term)
            except KeyError as err:
                raise SystemExit(f"actor_loss_terms.py: --reference_term: {err.args[0]}") from None
            typical = alignment_per_horizon(each, args.reference_term)
            records[path]["along_" + args.reference_term] = aligned
            records[path]["along_" + args.reference_term + "_per_horizon"] = typical
            for name, a in sorted(aligned.items(), key=lambda kv: kv[1]["along"]):
                print(
                    f"[loss_terms] {path} along {args.reference_term}: {name:28s} {a['along']:+.4g}  "
                    f"cosine {a['cosine']:+.3f}  per horizon: median {typical[name]['median']:+.4g}, "
                    f"against in {typical[name]['against']:.0%}"
                )
    write_records(args.out, records)
    return records


if __name__ == "__main__":
    main()
