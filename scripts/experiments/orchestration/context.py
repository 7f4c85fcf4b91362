"""Where an experiment reads and writes, and how big its runs are (from the composed config)."""

from __future__ import annotations

import os
from dataclasses import dataclass


@dataclass
class ExperimentContext:
    repo: str  # repository root (scripts/ lives there)
    runs_dir: str  # training and evaluation jobs: <runs_dir>/<experiment>/...
    out_dir: str  # this experiment's results: result.json, PNGs, config.yaml
    size: dict  # the size group: device, num_envs, parallel_jobs, iterations, eval_envs

    def path(self, name: str) -> str:
        """A file in this experiment's results directory."""
        os.makedirs(self.out_dir, exist_ok=True)
        return os.path.join(self.out_dir, name)
