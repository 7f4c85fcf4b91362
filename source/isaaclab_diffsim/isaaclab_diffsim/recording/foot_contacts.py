"""Per-foot contact state of a :class:`~isaaclab_diffsim.envs.DiffDirectRLEnv` after a step, read from its solver.

Forces come from the solver's own report (``SolverMoreauGS.update_contacts``: impulse / dt in world frame, the
last substep of the policy step), signed distances from ``last_contact_distances`` (same substep, midpoint
configuration), and the weight of each contact follows the solver's contact model.
"""

from __future__ import annotations

from dataclasses import dataclass

import newton
import numpy as np
import torch
import warp as wp

from ..envs.rotations import quat_rotate
from ..solver.kernels import SIGMOID_EXP_CLAMP


def contact_weights(distance: np.ndarray, contact_model: str, kappa: float, margin: float) -> np.ndarray:
    """Weight the solver gives a candidate at signed distance ``distance`` [m]: the sigmoid
    s(d) = 1 / (1 + exp(kappa d)) (exponent clamped as in the kernels) for candidates within ``margin`` in
    ``smoothed`` mode, 1 for active candidates (d <= margin in ``hard``, d < 0 in ``soft`` and ``penalty``)
    otherwise, 0 elsewhere."""
    d = np.asarray(distance, dtype=np.float64)
    if contact_model == "smoothed":
        e = np.clip(kappa * d, -float(SIGMOID_EXP_CLAMP), float(SIGMOID_EXP_CLAMP))
        return np.where(d <= margin, 1.0 / (1.0 + np.exp(e)), 0.0)
    if contact_model == "hard":
        return (d <= margin).astype(np.float64)
    if contact_model in ("soft", "penalty"):
        return (d < 0.0).astype(np.float64)
    raise ValueError(f"unknown contact model {contact_model!r}")


@dataclass
class FootContactFrame:
    """One policy step, arrays (num_envs, 4, ...) in the env's foot order (``LEGS``)."""

    point: np.ndarray  # (n, 4, 3) foot sphere's lowest point [m], world frame
    force: np.ndarray  # (n, 4, 3) ground force on the foot [N], world frame
    distance: np.ndarray  # (n, 4) signed distance [m]
    weight: np.ndarray  # (n, 4) contact weight


class FootContactReader:
    """Reads :class:`FootContactFrame` s from an env's solver; maps contact candidates to feet once."""

    def __init__(self, env):
        self.env = env
        model = env.model
        self._contacts = None
        self._foot_of_candidate = None
        self._feet = np.asarray(env.layout.foot_shapes).reshape(env.num_envs, 4)
        self._state = model.state()

    def _ensure_contacts(self, count: int):
        if self._contacts is None or self._contacts.rigid_contact_max < count:
            self._contacts = newton.Contacts(count, 0, device=self.env.model.device)

    def body_q(self) -> np.ndarray:
        """Body poses (body_count, 7: position, quaternion xyzw) of the env's current state, by forward kinematics,
        with each robot at its env origin (world frame)."""
        env = self.env
        q = wp.from_torch(env.joint_q_w().reshape(-1).contiguous())
        qd = wp.from_torch(env.qd.detach().reshape(-1).contiguous())
        newton.eval_fk(env.model, q, qd, self._state)
        return self._state.body_q.numpy().reshape(-1, 7)

    def read(self, body_q: np.ndarray | None = None) -> FootContactFrame:
        """The feet's contact state of the last step; ``body_q`` (from :meth:`body_q`) places the feet."""
        env = self.env
        solver = env.sim.solver
        dist = solver.last_contact_distances().numpy()
        count = dist.shape[0]
        self._ensure_contacts(count)
        solver.update_contacts(self._contacts)
        shape0 = self._contacts.rigid_contact_shape0.numpy()[:count]
        force = self._contacts.rigid_contact_force.numpy()[:count]
        if self._foot_of_candidate is None:
            index = {int(s): k for k, s in enumerate(self._feet.reshape(-1))}
            missing = set(index) - set(int(s) for s in shape0)
            if missing:
                raise RuntimeError(f"foot shapes {sorted(missing)} have no contact candidate in the solver")
            self._foot_of_candidate = np.array([index.get(int(s), -1) for s in shape0])
        sel = self._foot_of_candidate >= 0
        slots = self._foot_of_candidate[sel]
        n = env.num_envs
        f = np.zeros((n * 4, 3))
        d = np.zeros(n * 4)
        f[slots] = force[sel]
        d[slots] = dist[sel]
        w = contact_weights(d, solver.contact_model, solver.kappa, solver.margin)
        body_q = self.body_q() if body_q is None else body_q
        pose = torch.as_tensor(body_q[env.foot_bodies.reshape(-1).cpu().numpy()], dtype=torch.float32)
        centre = pose[:, :3] + quat_rotate(pose[:, 3:7], env.foot_centers.cpu().float())
        point = centre.numpy() - np.array([0.0, 0.0, env.foot_radius])
        return FootContactFrame(point.reshape(n, 4, 3), f.reshape(n, 4, 3), d.reshape(n, 4), w.reshape(n, 4))
