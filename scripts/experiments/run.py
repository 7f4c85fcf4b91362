"""Run one of the paper's experiments from its config, write its results and regenerate the results page.

    .venv/bin/python scripts/experiments/run.py experiment=table1            # CPU-sized (configs/size/cpu.yaml)
    .venv/bin/python scripts/experiments/run.py experiment=table1 size=gpu   # GPU-sized
    .venv/bin/python scripts/experiments/run.py experiment=gait experiment.command=0.8

Configs are composed by hydra from configs/run.yaml, configs/experiment/<name>.yaml and configs/size/<name>.yaml;
any key can be overridden (``key=value``; unknown keys are refused). Training runs live in
logs/experiments/<experiment>/ and are reused when complete (an interrupted run resumes from its latest checkpoint);
results land in results/<experiment>/ (result.json, PNGs, the composed config) and in docs/results.md. Each
experiment kind's driver (the jobs it runs) is a module of orchestration/ beside this script; the tables and
figures come from ``isaaclab_diffsim.experiments``.
"""

from __future__ import annotations

import importlib
import os
import sys
import time

from hydra import compose, initialize_config_dir
from hydra.errors import HydraException
from omegaconf import OmegaConf

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
KINDS = {
    "table1": "orchestration.table1",
    "gait": "orchestration.gait",
    "script": "orchestration.script_experiment",
    "sample_efficiency": "orchestration.sample_efficiency",
    "recipe": "orchestration.recipe",
    "deployability": "orchestration.deployability",
}


def job_times(directory: str) -> dict:
    """Number and summed wall time of the completed jobs under ``directory`` (reused ones included)."""
    import glob
    import json

    walls = []
    for path in glob.glob(os.path.join(directory, "**", "done.json"), recursive=True):
        with open(path) as f:
            walls.append(float(json.load(f).get("wall_s", 0.0)))
    return {"count": len(walls), "wall_s": sum(walls)}


def experiment_names() -> list[str]:
    return sorted(
        f[: -len(".yaml")] for f in os.listdir(os.path.join(REPO, "configs", "experiment")) if f.endswith(".yaml")
    )


def main(argv: list[str]) -> None:
    if any(a in ("-h", "--help") for a in argv):
        print(__doc__)
        print("experiments: " + ", ".join(experiment_names()))
        return
    if not any(a.startswith(("experiment=", "+experiment=")) for a in argv):
        raise SystemExit(
            "choose an experiment: scripts/experiments/run.py experiment=<name> (each trains for up to "
            "hours); experiments: " + ", ".join(experiment_names())
        )
    try:
        with initialize_config_dir(config_dir=os.path.join(REPO, "configs"), version_base="1.3"):
            cfg = compose(config_name="run", overrides=argv)
    except HydraException as err:
        raise SystemExit(f"bad experiment config or override: {err}") from err
    exp = OmegaConf.to_container(cfg.experiment, resolve=True)
    size = OmegaConf.to_container(cfg.size, resolve=True)
    kind = exp.get("kind")
    if kind not in KINDS:
        raise SystemExit(f"experiment {exp.get('name')!r}: unknown kind {kind!r} (known: {sorted(KINDS)})")

    from orchestration.context import ExperimentContext

    from isaaclab_diffsim.experiments.results_page import machine_description, write_result, write_results_page

    out_dir = os.path.join(REPO, cfg.results_dir, exp["name"])
    ctx = ExperimentContext(REPO, os.path.join(REPO, cfg.runs_dir), out_dir, size)
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "config.yaml"), "w") as f:
        f.write(OmegaConf.to_yaml(cfg))
    command = "scripts/experiments/run.py " + " ".join(argv)
    print(f"[experiment] {exp['name']} ({size['name']}-sized): {command}", flush=True)
    t0 = time.time()
    result = importlib.import_module(KINDS[kind]).run(ctx, exp)
    result.update(
        name=exp["name"],
        description=exp.get("description") or "",
        command=command,
        config=OmegaConf.to_yaml(cfg),
        machine=machine_description(size["device"]),
        wall_s=time.time() - t0,
        jobs=job_times(os.path.join(ctx.runs_dir, exp["name"])),
    )
    write_result(out_dir, result)
    page = write_results_page(os.path.join(REPO, cfg.results_dir), os.path.join(REPO, cfg.results_page))
    print(f"[experiment] {exp['name']} done in {(time.time() - t0) / 60:.1f} min; results in {out_dir}, page {page}")


if __name__ == "__main__":
    try:
        main(sys.argv[1:])
    except KeyboardInterrupt:
        print(
            "[experiment] interrupted: completed runs are kept, interrupted ones saved their last iteration; rerun "
            "the same command to continue",
            file=sys.stderr,
        )
        sys.exit(130)
