"""The drives io.yaml declares, in numpy: PD clipped by the effort limit and the DC-motor torque-speed envelope."""

from __future__ import annotations

import numpy as np


class DcMotor:
    """``tau = clip(kp (target - q) - kd qd, lo, hi)`` with ``hi = min(effort, sat (1 - qd / v_max))`` and ``lo =
    max(-effort, sat (-1 - qd / v_max))`` (no envelope when io.yaml declares no ``actuator_saturation``).
    ``strength`` scales kp, kd, the effort limit and the saturation torque (a weaker or stronger motor)."""

    def __init__(self, robot: dict, strength: float = 1.0):
        self.kp = strength * np.asarray(robot["default_joint_stiffness"], dtype=np.float64)
        self.kd = strength * np.asarray(robot["default_joint_damping"], dtype=np.float64)
        self.effort = strength * np.asarray(robot["effort_limit"], dtype=np.float64)
        sat = robot.get("actuator_saturation")
        self.sat = None if sat is None else strength * float(sat)
        self.v_max = np.asarray(robot.get("velocity_limit", [np.inf] * len(self.kp)), dtype=np.float64)

    def torque(self, target, q, qd):
        tau = self.kp * (target - q) - self.kd * qd
        hi, lo = self.effort, -self.effort
        if self.sat is not None:
            hi = np.minimum(hi, self.sat * (1.0 - qd / self.v_max))
            lo = np.maximum(lo, self.sat * (-1.0 - qd / self.v_max))
        return np.minimum(np.maximum(tau, lo), hi)
