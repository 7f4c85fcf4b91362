"""Learning-library configurations of the other quadrupeds' differentiable flat tasks."""
