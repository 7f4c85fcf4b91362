"""Whether a bigger batch would give the actor's terrain inputs a gradient that keeps its direction: per input group of
the actor's first layer (flat-MDP terms, height scan, inputs after the scan), the per-env signal |E G|^2 and noise of
the SHAC actor gradient, and the batch at which two independent batches' gradients reach a cosine of 0.5
(``isaaclab_diffsim.experiments.gradient_snr``). Printed and as JSON.

    .venv/bin/python scripts/experiments/actor_gradient_snr.py CKPT [CKPT ...] --horizons 8 [--out F.json] \
        [--task DiffSim-Velocity-Rough-AnymalC-Direct] [--num_envs N --warmup_steps 150] [env.x=... agent.x=...]

Each checkpoint is loaded into a fresh env of ``--task`` with the trailing overrides, which must give the env config
stored in the checkpoint (the run's own overrides; seed and env count aside) except in the fields they name (a
variant to measure): another difference is refused, naming the fields. With the checkpoint's own number of envs its
env and RNG state are restored, so the horizons continue the training run from that iteration; with another
``--num_envs`` the envs start from a reset and the policy runs ``--warmup_steps`` steps first. Then ``--horizons``
consecutive SHAC horizons are rolled out and differentiated with the policy fixed and the normaliser frozen (no
update). Per horizon it also records which envs terminated (fell) in it: their share of the envs, of sum |G_n|^2,
and of the envs with the largest gradients.
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
from isaaclab_diffsim.experiments.gradient_snr import (
    LayerGradientCapture,
    combine_horizons,
    envs_share,
    horizon_moments,
    largest_envs,
    per_weight_moments,
    weight_envs_needed,
)
from isaaclab_diffsim.experiments.scan_weights import input_groups

TASK = "DiffSim-Velocity-Rough-AnymalC-Direct"
OUTLIER_FRACTION = 0.01
"""Share of the envs with the largest gradients that the trimmed figures leave out."""
REPORT_ENVS = (1024, 4096)
"""Batch sizes whose expected cosine is reported (the CPU recipe's and Isaac Lab's rough-task env counts)."""


def parse_args(argv=None):
    return parse_checkpoint_args(checkpoint_parser(__doc__, TASK, 8), argv)


class TerminationRecorder:
    """Inside the block, which envs terminated (``terminated`` of the env's step, not a time-out): ``mask`` (N,)."""

    def __init__(self, env):
        self.env = env
        self.mask = torch.zeros(env.num_envs, dtype=torch.bool)

    def _step(self, actions):
        out = type(self.env).step(self.env, actions)
        self.mask |= out[2].detach().bool().reshape(-1).cpu()
        return out

    def __enter__(self):
        self.env.step = self._step
        return self

    def __exit__(self, *exc):
        del self.env.step


def measure(runner, groups: dict[str, slice], horizons: int) -> tuple[dict, dict, list[float], dict, list[dict]]:
    """Per group, each horizon's (unbiased |E G|^2, E|G|^2) of the actor's first-layer weight gradient, with all
    envs and without the largest ``OUTLIER_FRACTION``; each horizon's share of those envs; per group, the sums over
    the horizons of :func:`per_weight_moments`' three tensors; per horizon, the envs that terminated in it: their
    share of the envs (``envs``), of sum |G_n|^2 (``gradient``) and of the largest envs (``largest``)."""
    layer = runner.alg.policy.actor[0]
    params = runner.alg.policy.actor_parameters()
    moments = {name: [] for name in groups}
    trimmed = {name: [] for name in groups}
    shares = []
    weights = {name: None for name in groups}
    falls = []
    signs = torch.Generator().manual_seed(0)
    for h in range(horizons):
        t0 = time.perf_counter()
        with LayerGradientCapture(layer) as cap, TerminationRecorder(runner.env) as fell:
            try:
                runner._rollout(update_normalizer=False, bookkeeping=False)
                loss = runner.alg.actor_loss
                (weight_grad,) = torch.autograd.grad(loss, [params[0]])
            finally:
                runner.alg.abort_horizon()
        x, delta = cap.factors()
        # the per-env factors must add up to the layer's gradient (a missed call would break the statistics)
        check = torch.einsum("tno,tni->oi", delta.double(), x.double())
        err = float((check - weight_grad.double()).norm() / weight_grad.double().norm().clamp_min(1e-300))
        if err > 1e-6:
            raise RuntimeError(f"the captured factors give the first layer's gradient to {err:.2e} only")
        top, share = largest_envs(x, delta, OUTLIER_FRACTION)
        shares.append(share)
        falls.append(
            {
                "envs": float(fell.mask.double().mean()),
                "gradient": envs_share(x, delta, fell.mask),
                "largest": float(fell.mask[top.cpu()].double().mean()),
            }
        )
        keep = torch.ones(x.shape[1], dtype=torch.bool)
        keep[top] = False
        for name, cols in groups.items():
            moments[name].append(horizon_moments(x, delta, cols))
            trimmed[name].append(horizon_moments(x[:, keep], delta[:, keep], cols, loss_envs=x.shape[1]))
            w = per_weight_moments(x, delta, cols, generator=signs)
            weights[name] = w if weights[name] is None else tuple(a + b for a, b in zip(weights[name], w))
        line = ", ".join(f"{n} cos@1024 {combine_horizons(m[-1:]).cosine(1024):.3f}" for n, m in moments.items())
        print(
            f"[gradient_snr] horizon {h}: loss {float(loss.detach()):.4f}, {line}, largest "
            f"{OUTLIER_FRACTION:.0%} of envs hold {share:.1%} of sum |G_n|^2; the {falls[-1]['envs']:.1%} of the "
            f"envs that fell hold {falls[-1]['gradient']:.1%} of it and are {falls[-1]['largest']:.0%} of the largest "
            f"({time.perf_counter() - t0:.1f} s)"
        )
    return moments, trimmed, shares, weights, falls


def record(moments: dict, trimmed: dict, shares: list[float], weights: dict, falls: list[dict], num_envs: int) -> dict:
    horizons = len(shares)
    out = {"num_envs": num_envs, "horizons": horizons, "outlier_share": sum(shares) / horizons}
    for key in ("envs", "gradient", "largest"):
        out[f"fallen_{key}_share"] = sum(f[key] for f in falls) / horizons
    for name, m in moments.items():
        sig, trim = combine_horizons(m), combine_horizons(trimmed[name])
        signal, second, null = (t / horizons for t in weights[name])
        envs, null_envs = weight_envs_needed(signal, second), weight_envs_needed(null, second)
        out[name] = {
            "signal": sig.signal,
            "signal_sem": sig.signal_sem,
            "second_moment": sig.second_moment,
            "envs_for_cosine_0.5": sig.envs_for_cosine(0.5),
            **{f"cosine@{n}": sig.cosine(n) for n in REPORT_ENVS},
            "trimmed_envs_for_cosine_0.5": trim.envs_for_cosine(0.5),
            **{f"trimmed_cosine@{n}": trim.cosine(n) for n in REPORT_ENVS},
            "weight_envs_median": float(envs.median()),
            **{f"weights_snr1@{n}": float((envs <= n).double().mean()) for n in REPORT_ENVS},
            **{f"null_weights_snr1@{n}": float((null_envs <= n).double().mean()) for n in REPORT_ENVS},
        }
    return out


def main(argv=None) -> dict:
    args = parse_args(argv)
    records = {}
    for path, runner, state in checkpoint_runners(args, "actor_gradient_snr.py"):
        groups = input_groups(state["env_cfg"], runner.env.num_obs)
        records[path] = record(*measure(runner, groups, args.horizons), runner.env.num_envs)
        print(
            f"[gradient_snr] {path}: the largest {OUTLIER_FRACTION:.0%} of the envs' gradients hold "
            f"{records[path]['outlier_share']:.1%} of sum |G_n|^2 (mean over the horizons); the envs that fell in a "
            f"horizon ({records[path]['fallen_envs_share']:.1%} of the envs) hold "
            f"{records[path]['fallen_gradient_share']:.1%} of it and are {records[path]['fallen_largest_share']:.1%} "
            "of the largest"
        )
        for name in groups:
            r = records[path][name]
            print(
                f"[gradient_snr] {path} {name}: signal {r['signal']:.3g} +- {r['signal_sem']:.2g}, second moment "
                f"{r['second_moment']:.3g}, envs for cosine 0.5: {r['envs_for_cosine_0.5']:.3g}, "
                + ", ".join(f"cosine at {n} envs {r[f'cosine@{n}']:.3f}" for n in REPORT_ENVS)
                + f"; without the largest {OUTLIER_FRACTION:.0%}: envs for cosine 0.5 "
                + f"{r['trimmed_envs_for_cosine_0.5']:.3g}, "
                + ", ".join(f"cosine at {n} envs {r[f'trimmed_cosine@{n}']:.3f}" for n in REPORT_ENVS)
                + "; weights with a gradient mean above its spread at "
                + ", ".join(
                    f"{n} envs {r[f'weights_snr1@{n}']:.1%} (sign-flipped null {r[f'null_weights_snr1@{n}']:.1%})"
                    for n in REPORT_ENVS
                )
            )
    write_records(args.out, records)
    return records


if __name__ == "__main__":
    main()
