"""Named test conditions: ``nominal``, ``friction<X>``, ``payload<kg>``, ``latency<k>``, ``push<v>``."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

NOMINAL_FRICTION = 0.9
"""Effective foot-ground friction of training: feet 0.8, ground 1.0, combined by our solver as their mean."""

PUSH_INTERVAL_S = 5.0
"""Pushes of ``push<v>`` come every this many seconds of an episode."""

_PATTERN = re.compile(r"^(friction|payload|latency|push)([0-9]*\.?[0-9]+)$")


@dataclass(frozen=True)
class Variant:
    """One condition: ``friction`` None keeps the simulator's nominal contact; ``payload`` kg added to the base;
    ``latency`` control steps by which the actions reach the drives; ``push`` m/s: base x and y velocity changes
    uniform in +-push every :data:`PUSH_INTERVAL_S`."""

    name: str
    friction: float | None = None
    payload: float = 0.0
    latency: int = 0
    push: float = 0.0


def parse_variant(name: str) -> Variant:
    """The :class:`Variant` named ``name``; ValueError listing the accepted forms for anything else."""
    name = name.strip()
    if name == "nominal":
        return Variant("nominal")
    m = _PATTERN.match(name)
    if m is None:
        raise ValueError(
            f"unknown variant {name!r}: use nominal, friction<mu> (e.g. friction0.5), payload<kg> (payload10), "
            "latency<control steps> (latency1) or push<m/s> (push1.0)"
        )
    kind, value = m.group(1), float(m.group(2))
    if kind == "friction":
        if not (value > 0 and math.isfinite(value)):
            raise ValueError(f"variant {name!r}: friction must be > 0")
        return Variant(name, friction=value)
    if kind == "payload":
        return Variant(name, payload=value)
    if kind == "latency":
        if value != int(value):
            raise ValueError(f"variant {name!r}: latency counts whole control steps")
        return Variant(name, latency=int(value))
    return Variant(name, push=value)


def parse_variants(text: str) -> list[Variant]:
    """Comma-separated variant names, e.g. ``nominal,friction0.4,payload10``."""
    names = [n for n in text.split(",") if n.strip()]
    if not names:
        raise ValueError("no variant given")
    return [parse_variant(n) for n in names]
