"""Solver settings that tests run every check on."""

CONTACT_CASES = [
    ("smoothed", "implicit"),
    ("smoothed", "unrolled"),
    ("hard", "implicit"),
    ("soft", "implicit"),
    ("penalty", "implicit"),
]
"""(contact_model, adjoint) pairs: every contact model, and the smoothed one with both contact adjoints."""
