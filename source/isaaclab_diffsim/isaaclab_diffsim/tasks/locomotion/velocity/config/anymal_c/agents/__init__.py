"""Learning-library configurations of the manager-based ANYmal C task."""
