"""The experiment drivers of ``scripts/experiments/run.py``: subprocess jobs (training, evaluation, rollouts,
scripts) built from the composed config, run a few at a time and reused once complete; their outputs are summarised
by ``isaaclab_diffsim.experiments``."""
