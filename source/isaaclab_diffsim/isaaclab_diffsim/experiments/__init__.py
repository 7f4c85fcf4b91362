"""The paper's experiments, composed from ``configs/`` by ``scripts/experiments/run.py``: training and evaluation
jobs, gait and sim-to-sim measures, and the generated results page."""
