"""An experiment that is one script run (falling mass, gradient norm vs horizon): its PNG and JSON become results."""

from __future__ import annotations

import json
import os
import shutil

from .context import ExperimentContext
from .jobs import Job, python, run_jobs


def _summary_table(data: dict) -> str:
    if "summary" in data:  # falling_mass.py
        rows = ["| measure | value |", "| --- | --- |"]
        for key, value in data["summary"].items():
            if isinstance(value, dict):
                value = ", ".join(f"{k} {v:.4g}" for k, v in value.items())
            elif isinstance(value, float):
                value = f"{value:.4g}"
            rows.append(f"| {key} | {value} |")
        return "\n".join(rows)
    if "results" in data:  # gradient_norm_vs_horizon.py
        models = list(data["results"])
        horizons = [r["horizon"] for r in data["results"][models[0]]]
        rows = ["| horizon | " + " | ".join(f"{m}: grad norm mean +- std" for m in models) + " |",
                "| --- |" + " --- |" * len(models)]  # fmt: skip
        for i, h in enumerate(horizons):
            cells = [f"{data['results'][m][i]['grad_norm_mean']:.4g} +- {data['results'][m][i]['grad_norm_std']:.2g}"
                     for m in models]  # fmt: skip
            rows.append(f"| {h} | " + " | ".join(cells) + " |")
        return "\n".join(rows)
    raise ValueError(f"no summary or results in the script's JSON (keys {sorted(data)})")


def run(ctx: ExperimentContext, exp: dict) -> dict:
    script = os.path.join(ctx.repo, exp["script"])
    if not os.path.isfile(script):
        raise SystemExit(f"experiment {exp['name']}: script not found: {script}")
    directory = os.path.join(ctx.runs_dir, exp["name"])
    argv = [python(), script, exp["out_flag"], os.path.join(directory, "out")]
    for key, value in exp.get("args", {}).items():
        argv += [f"--{key}", str(value)]
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
                tables.append(_summary_table(json.load(f)))
    return {"tables": tables, "figures": figures}
