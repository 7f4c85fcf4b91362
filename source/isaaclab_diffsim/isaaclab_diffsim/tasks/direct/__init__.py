"""Direct-style differentiable tasks (like Isaac Lab's ``direct`` tasks), on
:class:`~isaaclab_diffsim.envs.DiffDirectRLEnv`: :mod:`.locomotion.velocity`."""
