"""Helpers shared by test files (importable as ``helpers.<module>``: tests/ is on pytest's pythonpath)."""
