"""The results table of an experiment that is one script run (falling mass, gradient norm vs horizon)."""

from __future__ import annotations


def summary_table(data: dict) -> str:
    """Markdown table of a script's JSON: its ``summary`` (measure, value) or its ``results`` per horizon."""
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
        rows = [
            "| horizon | " + " | ".join(f"{m}: grad norm mean +- std" for m in models) + " |",
            "| --- |" + " --- |" * len(models),
        ]
        for i, h in enumerate(horizons):
            cells = [
                f"{data['results'][m][i]['grad_norm_mean']:.4g} +- {data['results'][m][i]['grad_norm_std']:.2g}"
                for m in models
            ]
            rows.append(f"| {h} | " + " | ".join(cells) + " |")
        if len(horizons) > 1:  # how fast the norm grows over the horizons measured
            growth = [
                data["results"][m][-1]["grad_norm_mean"] / data["results"][m][0]["grad_norm_mean"] for m in models
            ]
            rows.append(f"| growth {horizons[-1]} / {horizons[0]} | " + " | ".join(f"{g:.3g}x" for g in growth) + " |")
        return "\n".join(rows)
    raise ValueError(f"no summary or results in the script's JSON (keys {sorted(data)})")
