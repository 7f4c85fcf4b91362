"""Non-finite value checks for vectorised envs: name the first bad quantity, the step and the env ids."""

from __future__ import annotations

import torch

from ..utils.leapp_support import tracing


def nonfinite_envs(x: torch.Tensor) -> torch.Tensor:
    """Boolean (num_envs,) mask of the rows (envs) of ``x`` with a NaN or inf entry."""
    return ~torch.isfinite(x.detach()).reshape(x.shape[0], -1).all(dim=1)


def check_finite(quantities: dict[str, torch.Tensor], step: int, episode_step: torch.Tensor | None = None) -> None:
    """Raise FloatingPointError for the first of ``quantities`` (in order) with a non-finite entry.

    The message names the quantity, ``step`` and the env ids (with their episode steps if ``episode_step`` is
    given). One device synchronisation when everything is finite. Skipped while a LEAPP export traces the env:
    a branch on traced values cannot be part of the exported graph.
    """
    if tracing():
        return
    flags = torch.stack([torch.isfinite(x.detach()).all() for x in quantities.values()])
    if bool(flags.all()):
        return
    for name, x in quantities.items():
        bad = nonfinite_envs(x)
        if bool(bad.any()):
            ids = bad.nonzero().flatten().tolist()
            shown = ", ".join(str(i) for i in ids[:16]) + (", ..." if len(ids) > 16 else "")
            where = f"in {len(ids)} of {x.shape[0]} envs [{shown}]"
            if episode_step is not None:
                steps = episode_step[bad].flatten().tolist()[:16]
                where += f" (their episode steps {steps})"
            raise FloatingPointError(f"non-finite {name} at step {step} {where}")
