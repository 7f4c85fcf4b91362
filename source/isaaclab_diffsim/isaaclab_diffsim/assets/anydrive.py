"""ANYdrive actuator presets of the differentiable ANYmal C task: PD gains and the joint's passive terms.

The solver steps the PD drive (``joint_target_ke``/``joint_target_kd``) and the passive joint terms (``joint_armature``,
viscous ``joint_damping``, Coulomb ``joint_friction``) implicitly; a preset fills them per joint. Values are
``{joint-name regex: value}`` as in Isaac Lab's actuator configs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field


@dataclass(frozen=True)
class ActuatorPreset:
    """One ANYdrive parameter set (regex keys matched against the joint names)."""

    kp: dict[str, float]
    """PD stiffness [N m/rad]."""
    kd: dict[str, float]
    """PD damping [N m s/rad]."""
    armature: float = 0.0
    """Rotor inertia reflected to the joint [kg m^2] (``joint_armature``)."""
    friction: dict[str, float] = field(default_factory=dict)
    """Coulomb joint friction [N m] (``joint_friction``; smoothed by the solver's friction velocity)."""


ACTUATOR_PRESETS: dict[str, ActuatorPreset] = {
    # ANYmal C's simple DC-motor ANYdrive of the authors' Isaac Lab fork (Isaac Lab's own default: kp 40, kd 5)
    "anydrive_simple": ActuatorPreset(kp={".*": 85.0}, kd={".*": 3.5}),
    # the same fork's system-identified ANYdrive: per-joint D gains, Coulomb friction and the rotor's armature
    "anydrive_sysid": ActuatorPreset(
        kp={".*": 85.0},
        kd={
            "LF_HAA": 2.4304,
            "LH_HAA": 3.3335,
            "RF_HAA": 3.1598,
            "RH_HAA": 3.0478,
            "LF_HFE": 3.6843,
            "LH_HFE": 4.8727,
            "RF_HFE": 3.5460,
            "RH_HFE": 5.0738,
            "LF_KFE": 4.1307,
            "LH_KFE": 3.9806,
            "RF_KFE": 3.7354,
            "RH_KFE": 4.4794,
        },
        armature=0.09,
        friction={
            "LF_HAA": 0.0441,
            "LH_HAA": 0.0248,
            "RF_HAA": 0.0273,
            "RH_HAA": 0.0339,
            "LF_HFE": 0.0393,
            "LH_HFE": 0.0174,
            "RF_HFE": 0.0455,
            "RH_HFE": 0.0087,
            "LF_KFE": 0.1566,
            "LH_KFE": 0.2266,
            "RF_KFE": 0.2357,
            "RH_KFE": 0.1863,
        },
    ),
}
"""Named presets (``env.actuator_preset=<name>``)."""


def per_joint(values: dict[str, float], joint_names: tuple[str, ...], what: str) -> list[float]:
    """One value per joint from ``{regex: value}`` (each joint matched by exactly one key; unmatched joints 0)."""
    out = []
    for name in joint_names:
        hits = [v for pattern, v in values.items() if re.fullmatch(pattern, name)]
        if len(hits) > 1:
            raise ValueError(f"{what}: joint {name!r} matches more than one of {sorted(values)}")
        out.append(float(hits[0]) if hits else 0.0)
    unused = [p for p in values if not any(re.fullmatch(p, n) for n in joint_names)]
    if unused:
        raise ValueError(f"{what}: {unused} match no joint of {list(joint_names)}")
    return out
