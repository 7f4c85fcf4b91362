"""Table 1: train in one contact model, evaluate in each (return, velocity-tracking error, fall rate over seeds)."""

from __future__ import annotations

import numpy as np

METRICS = (("return", "returns"), ("tracking error [m/s]", "tracking_errors"), ("fall rate [%]", "falls"))


def summarize(exp: dict, evals: dict[tuple[str, int], dict]) -> tuple[str, dict]:
    """Markdown table (mean +- std over seeds of the per-seed means) and the numbers behind it."""
    models = exp["eval_contact_models"]
    rows, numbers = [], {}
    header = "| trained (algo, contact) | evaluated in | " + " | ".join(m for m, _ in METRICS) + " |"
    rows += [header, "| " + " | ".join(["---"] * (2 + len(METRICS))) + " |"]
    for run, spec in exp["runs"].items():
        for model in models:
            cells = []
            for _label, key in METRICS:
                per_seed = []
                for seed in exp["seeds"]:
                    vals = np.asarray(evals[(run, seed)]["models"][model][key], dtype=float)
                    per_seed.append(vals.mean() * (100.0 if key == "falls" else 1.0))
                per_seed = np.array(per_seed)
                numbers.setdefault(run, {}).setdefault(model, {})[key] = per_seed.tolist()
                fmt = "{:.1f}" if key != "tracking_errors" else "{:.3f}"
                seeds = ", ".join(fmt.format(v) for v in per_seed)
                cells.append(f"{fmt.format(per_seed.mean())} +- {fmt.format(per_seed.std())} ({seeds})")
            rows.append(f"| {spec['algo'].upper()}, {spec['contact_model']} | {model} | " + " | ".join(cells) + " |")
    return "\n".join(rows), numbers
