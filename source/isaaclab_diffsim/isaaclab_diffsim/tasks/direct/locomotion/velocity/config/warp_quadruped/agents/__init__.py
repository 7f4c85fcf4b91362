"""Learning-library configurations of the Warp quadruped's differentiable flat task."""
