"""Analysis of the paper's experiments, pure functions on their outputs: gait and sim-to-sim measures, the tables and
figures of each experiment, and the generated results page (the jobs that produce the outputs are run by
``scripts/experiments/run.py``)."""
