"""Per-step intermediate arrays of SolverMoreauGS.

Without gradients one set is reused (accumulators re-zeroed by a single memset of one flat buffer).
Under a wp.Tape every step needs its own set so the recorded launches can be replayed backwards;
:meth:`nbytes` is the tape memory each step keeps alive.
"""

from __future__ import annotations

import warp as wp

from .topology import Layout


class StepScratch:
    """Arrays written by one solver step. Accumulators are views into one zeroed float buffer."""

    def __init__(
        self,
        layout: Layout,
        coord_count: int,
        body_count: int,
        sweep_slots: int,
        device,
        requires_grad: bool,
    ):
        """``sweep_slots``: Gauss-Seidel sweeps stored (iterations + 1 for the unrolled adjoint, else 2)."""
        D = max(layout.dof_count, 1)
        B = max(body_count, 1)
        C = max(layout.candidate_count, 1)

        def zeros(n, dtype=float):
            return wp.zeros(n, dtype=dtype, device=device, requires_grad=requires_grad)

        self.q_mid = zeros(max(coord_count, 1))
        self.body_X = zeros(B, wp.transform)
        self.body_V = zeros(B, wp.spatial_vector)
        self.body_A = zeros(B, wp.spatial_vector)
        self.body_F = zeros(B, wp.spatial_vector)
        self.body_m = zeros(B)
        self.body_h = zeros(B, wp.vec3)
        self.body_I = zeros(B, wp.mat33)
        self.S = zeros(D, wp.spatial_vector)
        self.H = zeros(layout.h_size)
        self.L = zeros(layout.h_size)
        self.hvec = zeros(D)
        self.y = zeros(D)
        self.acc = zeros(D)
        self.dist = zeros(C)
        self.cpoint = zeros(C, wp.vec3)
        self.weight = zeros(C)
        self.J = zeros(layout.j_size)
        self.Z = zeros(layout.j_size)
        self.w = zeros(D)
        self.dv = zeros(D)
        self.impulse = zeros(3 * C)
        self.v_contact = zeros(3 * C)
        self.p_hist = zeros(sweep_slots * 3 * C)
        self.p_final = zeros(3 * C)
        self.solve_residual = zeros(max(layout.articulation_count, 1))
        t = layout.topo
        if layout.terrain is None:  # every frame is a plane's: the fixed ones (not counted by nbytes)
            self.frames = (t.cand_normal, t.cand_origin, t.cand_t1, t.cand_t2)
        else:  # per-step frames (n, origin, t1, t2), written by terrain_frames.contact_frames
            self.frame_n, self.frame_origin, self.frame_t1, self.frame_t2 = (zeros(C, wp.vec3) for _ in range(4))
            self.frames = (self.frame_n, self.frame_origin, self.frame_t1, self.frame_t2)

        sizes = {
            "L_acc": layout.h_size,
            "y_acc": D,
            "x_acc": D,
            "dv_acc": D,
            "Z_acc": layout.j_size,
            "G": layout.g_size,
            "c_free": 3 * C,
            "res": max(sweep_slots - 1, 1) * 3 * C,
        }
        self._acc = zeros(sum(sizes.values()))
        start = 0
        for name, size in sizes.items():
            setattr(self, name, self._acc[start : start + size])
            start += size

    def zero_accumulators(self):
        self._acc.zero_()

    def nbytes(self) -> int:
        """Bytes held by this step's arrays (gradient buffers included when allocated)."""
        total = 0
        for value in vars(self).values():
            if isinstance(value, wp.array) and value.is_contiguous and value.ptr is not None:
                if value is self._acc or not _is_view_of(value, self._acc):
                    mult = 2 if value.requires_grad else 1
                    total += value.capacity * mult
        return total


def _is_view_of(arr: wp.array, base: wp.array) -> bool:
    return arr is not base and base.ptr <= arr.ptr < base.ptr + base.capacity
