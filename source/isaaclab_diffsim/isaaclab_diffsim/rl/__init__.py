"""Learning algorithms on differentiable environments (layer 5). PPO comes from rsl_rl; SHAC lives here.

``from isaaclab_diffsim.rl.shac import ShacRunner, ShacRunnerCfg``.
"""

__all__ = ["shac"]
