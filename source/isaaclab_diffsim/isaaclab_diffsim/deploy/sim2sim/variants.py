"""Named test conditions: ``nominal``, ``friction<mu>``, ``payload<kg>``, ``latency<k>``, ``push<v>``,
``motor<scale>``, ``noise`` and ``cmd<vx>``."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

NOMINAL_FRICTION = 0.9
"""Effective foot-ground friction of training: feet 0.8, ground 1.0, combined by our solver as their mean."""

PUSH_INTERVAL_S = 5.0
"""Pushes of ``push<v>`` come every this many seconds of an episode."""

_PATTERN = re.compile(r"^(friction|payload|latency|push|motor|cmd)(-?[0-9]*\.?[0-9]+)$")
_SIGNED = ("payload", "cmd")
_FORMS = (
    "nominal, friction<mu> (e.g. friction0.5), payload<kg> (payload10, payload-5), latency<control steps> "
    "(latency1), push<m/s> (push1.0), motor<strength scale> (motor0.8), noise, cmd<vx m/s> (cmd1.0)"
)


@dataclass(frozen=True)
class Variant:
    """One condition: ``friction`` None keeps the simulator's nominal contact; ``payload`` kg added to the base;
    ``latency`` control steps by which the actions reach the drives; ``push`` m/s: base x and y velocity changes
    uniform in +-push every :data:`PUSH_INTERVAL_S`; ``motor`` scales the PD gains and the torque envelope (effort
    limit and saturation torque); ``noise`` adds the task's observation noise to the measurements; ``command_vx``
    (not None) replaces every episode's drawn command by (vx, 0, 0)."""

    name: str
    friction: float | None = None
    payload: float = 0.0
    latency: int = 0
    push: float = 0.0
    motor: float = 1.0
    noise: bool = False
    command_vx: float | None = None


def parse_variant(name: str) -> Variant:
    """The :class:`Variant` named ``name``; ValueError listing the accepted forms for anything else."""
    name = name.strip()
    if name == "nominal":
        return Variant("nominal")
    if name == "noise":
        return Variant("noise", noise=True)
    m = _PATTERN.match(name)
    if m is None or (m.group(2).startswith("-") and m.group(1) not in _SIGNED):
        raise ValueError(f"unknown variant {name!r}: use {_FORMS}")
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
    if kind == "motor":
        if not value > 0:
            raise ValueError(f"variant {name!r}: motor strength scale must be > 0")
        return Variant(name, motor=value)
    if kind == "cmd":
        return Variant(name, command_vx=value)
    return Variant(name, push=value)


def parse_variants(text: str) -> list[Variant]:
    """Comma-separated variant names, e.g. ``nominal,friction0.4,payload10``; ValueError on repeated names."""
    names = [n.strip() for n in text.split(",") if n.strip()]
    if not names:
        raise ValueError("no variant given")
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise ValueError(f"variants named more than once: {repeated}")
    return [parse_variant(n) for n in names]
