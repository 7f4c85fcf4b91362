"""Task registrations (gymnasium ids ``DiffSim-*``). Importing this package registers them."""

from .locomotion.velocity.config import anymal_c  # noqa: F401
