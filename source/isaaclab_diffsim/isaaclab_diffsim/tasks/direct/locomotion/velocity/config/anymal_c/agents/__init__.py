"""Learning-library configurations of the differentiable ANYmal C task."""
