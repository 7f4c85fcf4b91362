"""Actor gradients of consecutive SHAC horizons from a checkpoint, to compare two checkouts late in training.

    .venv/bin/python scripts/tools/actor_gradient.py logs/main_seed39/model_800.pt --out /tmp/after.pt
    PYTHONPATH=<other checkout>/source/isaaclab_diffsim .venv/bin/python scripts/tools/actor_gradient.py \
        logs/main_seed39/model_800.pt --out /tmp/before.pt --compare /tmp/after.pt

Loads the checkpoint into a fresh env of its task (policy, normaliser, RNG and env state, as a resume does), rolls
out ``--horizons`` horizons one after the other (the policy fixed; the env advances by each rollout, pushes and
resets included) and saves, per horizon, the actor loss and its gradient with respect to the actor's parameters.
``--compare`` prints per horizon whether the two losses are bitwise equal, the gradients' relative difference and
their cosine. Trailing ``env.*`` / ``agent.*`` overrides apply to the env and agent configs (default: the task's).
"""

from __future__ import annotations

import argparse

import torch

from isaaclab_diffsim.diagnostics import build_runner

TASK = "DiffSim-Velocity-Flat-AnymalC-Direct"


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("checkpoint")
    p.add_argument("--out", required=True, help="file the losses and gradients are saved to (torch.save)")
    p.add_argument("--compare", default=None, help="a file of another run of this script")
    p.add_argument("--horizons", type=int, default=3)
    p.add_argument("--task", default=TASK)
    p.add_argument("--num_envs", type=int, default=None, help="default: the task's")
    p.add_argument("--torch_threads", type=int, default=1, help="as scripts/train.py")
    p.add_argument("overrides", nargs="*", help="env.<field>=value / agent.<field>=value")
    args = p.parse_intermixed_args(argv)
    if args.horizons < 1:
        p.error(f"--horizons must be at least 1, got {args.horizons}")
    return args


def horizon_gradients(runner, horizons: int) -> list[dict]:
    """Per horizon: {"loss": the actor loss, "grad": d loss / d actor parameters, flattened}."""
    out = []
    for h in range(horizons):
        # ShacRunner.actor_gradient's steps, which return only the norm; older checkouts have the same private rollout
        try:
            runner._rollout(update_normalizer=False, bookkeeping=False)
            loss = runner.alg.actor_loss
            params = list(runner.alg.policy.actor_parameters())
            grads = torch.autograd.grad(loss, params, allow_unused=True)
        finally:
            runner.alg.abort_horizon()
        flat = torch.cat([(g if g is not None else torch.zeros_like(p)).reshape(-1) for g, p in zip(grads, params)])
        out.append({"loss": loss.detach().clone(), "grad": flat.detach().clone()})
        print(
            f"[actor_gradient] horizon {h}: loss {float(loss.detach()):.9g}, gradient norm {float(flat.norm()):.9g}",
            flush=True,
        )
    return out


def compare(ours: list[dict], theirs: list[dict]) -> list[tuple[bool, float, float]]:
    """Per horizon (the losses bitwise equal, the gradients' relative difference, their cosine)."""
    if len(ours) != len(theirs):
        raise ValueError(f"--compare: {len(theirs)} horizons there, {len(ours)} here")
    rows = []
    for a, b in zip(ours, theirs):
        x, y = a["grad"].double(), b["grad"].double()
        if x.shape != y.shape:
            raise ValueError(f"--compare: gradients of {tuple(y.shape)} there, {tuple(x.shape)} here")
        rel = float((x - y).norm() / y.norm().clamp_min(1e-300))
        cos = float(x @ y / (x.norm() * y.norm()).clamp_min(1e-300))
        rows.append((bool(torch.equal(a["loss"], b["loss"])), rel, cos))
    return rows


def main(argv=None) -> None:
    args = parse_args(argv)
    torch.set_num_threads(args.torch_threads)
    runner = build_runner(args.task, overrides=args.overrides, num_envs=args.num_envs)
    runner.load(args.checkpoint)
    results = horizon_gradients(runner, args.horizons)
    torch.save(results, args.out)
    if args.compare is not None:
        for h, (same_loss, rel, cos) in enumerate(compare(results, torch.load(args.compare))):
            loss = "equal" if same_loss else "different"
            print(
                f"[actor_gradient] horizon {h}: loss {loss}, gradient relative difference {rel:.3g}, cosine {cos:.9f}"
            )


if __name__ == "__main__":
    main()
