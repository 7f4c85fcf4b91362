"""Task package."""
