"""Learning-library configurations of the ANYmal C tasks."""
