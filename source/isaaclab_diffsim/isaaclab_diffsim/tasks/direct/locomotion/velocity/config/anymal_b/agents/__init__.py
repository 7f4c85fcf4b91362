"""Learning-library configurations of ANYmal B's differentiable flat task."""
