"""Learning-library configurations of the manager-based Go2 task."""
