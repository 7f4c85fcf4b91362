"""An experiment that is one script run (falling mass, gradient norm vs horizon): its PNG and JSON become results.
``checkpoints`` (optional) names final checkpoints of other experiments' runs, passed as the script's
``--checkpoint``."""

from __future__ import annotations

import json
import os
import shutil

from isaaclab_diffsim.experiments.script_results import summary_table

from .context import ExperimentContext
from .jobs import Job, python, run_jobs
from .training import source_checkpoint


def run(ctx: ExperimentContext, exp: dict) -> dict:
    script = os.path.join(ctx.repo, exp["script"])
    if not os.path.isfile(script):
        raise SystemExit(f"experiment {exp['name']}: script not found: {script}")
    directory = os.path.join(ctx.runs_dir, exp["name"])
    argv = [python(), script, exp["out_flag"], os.path.join(directory, "out")]
    for key, value in exp.get("args", {}).items():
        argv += [f"--{key}", str(value)]
    if exp.get("checkpoints"):  # [experiment, run, seed] of completed training runs, passed as --checkpoint A,B
        argv += ["--checkpoint", ",".join(source_checkpoint(ctx, *source) for source in exp["checkpoints"])]
    argv += ["--device", ctx.size["device"]]
    job = Job(exp["name"], directory, argv)
    if job.is_done():  # a script experiment is cheap: always rerun it
        os.remove(job.done_path)
    run_jobs([job], 1)
    figures, tables = [], []
    for name in exp["outputs"]:
        src = os.path.join(directory, "out", name)
        if not os.path.isfile(src):
            raise RuntimeError(f"experiment {exp['name']}: the script wrote no {name} (log {job.log_path})")
        shutil.copy(src, ctx.path(name))
        if name.endswith(".png"):
            figures.append(name)
        elif name.endswith(".json"):
            with open(src) as f:
                tables.append(summary_table(json.load(f)))
    return {"tables": tables, "figures": figures}
