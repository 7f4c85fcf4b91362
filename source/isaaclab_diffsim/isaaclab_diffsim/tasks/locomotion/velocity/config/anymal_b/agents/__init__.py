"""Learning-library configurations of the manager-based ANYmal B task."""
