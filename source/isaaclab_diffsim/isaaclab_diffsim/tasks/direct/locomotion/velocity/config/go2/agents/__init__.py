"""Learning-library configurations of Go2's differentiable flat task."""
