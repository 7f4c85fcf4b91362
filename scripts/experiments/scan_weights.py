"""How much SHAC policies read their height scan: per checkpoint, the first layers' weights on the scan's inputs
against those on the flat-MDP inputs and the consistency of the actor's gradient on each (from Adam's moments),
printed and as JSON.

    .venv/bin/python scripts/experiments/scan_weights.py CKPT [CKPT ...] [--out scan_weights.json]

A warm-started terrain stage starts the scan's weights at zero, so their norm is what training gave them.
``actor_scan_per_m`` is the actor's first-layer response to 1 m of one scan point (weight over the normaliser's
std); the fields are ``isaaclab_diffsim.experiments.scan_weights.SCAN_WEIGHT_FIELDS``.
"""

from __future__ import annotations

import argparse
import json
import os

from isaaclab_diffsim.experiments.scan_weights import SCAN_WEIGHT_FIELDS, scan_weight_record
from isaaclab_diffsim.rl.checkpoints import load_checkpoint

REQUIRED = ("model_state_dict", "obs_normalizer_state_dict", "actor_optimizer_state_dict", "env_cfg")


def main(argv: list[str] | None = None) -> dict:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("checkpoints", nargs="+")
    p.add_argument("--out", default=None, help="JSON file for the records (none: print only)")
    args = p.parse_args(argv)
    records = {}
    for path in args.checkpoints:
        try:
            records[path] = scan_weight_record(load_checkpoint(path, REQUIRED, "SHAC runner", map_location="cpu"))
        except (ValueError, KeyError) as err:
            raise SystemExit(f"scan_weights.py: {path}: {err}") from None
        print(f"[scan_weights] {path}: " + ", ".join(f"{k} {records[path][k]:.3f}" for k in SCAN_WEIGHT_FIELDS))
    if args.out:
        os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
        with open(args.out, "w") as f:
            json.dump(records, f, indent=1)
    return records


if __name__ == "__main__":
    main()
