"""Small shared utilities (command line)."""
