"""The terrain-level distribution over a rough-task SHAC run: per checkpoint, the mean level and the share of envs
at each level, as JSON.

    .venv/bin/python scripts/experiments/terrain_levels.py RUN_DIR --out terrain_levels.json

Reads every ``model_<it>.pt`` of RUN_DIR (interrupted ones, ``model_<it>_interrupted.pt``, are left out): the
envs' levels (``env_state.terrain_level``), the iteration, the samples and the number of levels (the terrain
generator's rows, from ``env_cfg``). The record is ``isaaclab_diffsim.experiments.terrain.level_record``'s.
"""

from __future__ import annotations

import argparse
import json
import os

from isaaclab_diffsim.experiments.terrain import level_record
from isaaclab_diffsim.rl.checkpoints import load_checkpoint, periodic_checkpoints


def read_levels(path: str) -> tuple[int, int, object, int | None]:
    """(iteration, samples, levels or None, number of levels or None) of one checkpoint."""
    ck = load_checkpoint(path, ("iter", "total_samples", "env_state"), "SHAC runner", map_location="cpu")
    terrain = (ck.get("env_cfg") or {}).get("terrain")
    num_levels = terrain["generator"]["num_rows"] if terrain else None
    return int(ck["iter"]), int(ck["total_samples"]), ck["env_state"].get("terrain_level"), num_levels


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("run_dir")
    p.add_argument("--out", required=True)
    args = p.parse_args(argv)
    paths = [path for _, path in periodic_checkpoints(args.run_dir)]
    if not paths:
        raise SystemExit(f"terrain_levels.py: no model_<iteration>.pt checkpoint in {args.run_dir}")
    try:
        record = level_record([read_levels(path) for path in paths])
    except ValueError as err:
        raise SystemExit(f"terrain_levels.py: {args.run_dir}: {err}") from None
    record = {"run_dir": os.path.abspath(args.run_dir), **record}
    for c in record["checkpoints"]:
        print(f"[terrain_levels] iteration {c['iteration']:5d}: mean level {c['mean_level']:.3f}", flush=True)
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(record, f, indent=1)


if __name__ == "__main__":
    main()
