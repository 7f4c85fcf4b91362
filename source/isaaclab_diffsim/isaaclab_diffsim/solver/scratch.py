"""Per-step intermediate arrays of SolverMoreauGS.

All arrays of a set are typed views into one flat buffer (and, with gradients, their gradients into a second one),
so a set is made with two allocations and made ready for another step with at most two memsets: the accumulators
(one contiguous region) and, with gradients, the whole gradient buffer. Without gradients the solver reuses one set;
under a wp.Tape every step needs a set of its own until its backward has run (the solver pools the returned ones).
:meth:`nbytes` is the tape memory each step keeps alive.
"""

from __future__ import annotations

import warp as wp

from .topology import Layout

_ALIGN = 64  # bytes: every view starts on a cache line


class StepScratch:
    """Arrays written by one solver step: views into one buffer; the accumulators form one contiguous region."""

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
        self.layout, self.sweep_slots, self.requires_grad = layout, int(sweep_slots), bool(requires_grad)
        arrays = {
            "q_mid": (max(coord_count, 1), float),
            "body_X": (B, wp.transform),
            "body_V": (B, wp.spatial_vector),
            "body_A": (B, wp.spatial_vector),
            "body_F": (B, wp.spatial_vector),
            "body_m": (B, float),
            "body_h": (B, wp.vec3),
            "body_I": (B, wp.mat33),
            "body_phi": (B, wp.spatial_vector),  # dynamics_adjoint's per-body working wrench
            "S": (D, wp.spatial_vector),
            "H": (layout.h_size, float),
            "L": (layout.h_size, float),
            "hvec": (D, float),
            "y": (D, float),
            "acc": (D, float),
            "dist": (C, float),
            "cpoint": (C, wp.vec3),
            "weight": (C, float),
            "J": (layout.j_size, float),
            "Z": (layout.j_size, float),
            "w": (D, float),
            "dv": (D, float),
            "impulse": (3 * C, float),
            "v_contact": (3 * C, float),
            "p_hist": (sweep_slots * 3 * C, float),
            "p_final": (3 * C, float),
            "solve_residual": (max(layout.articulation_count, 1), float),
        }
        if layout.terrain is not None:  # per-step frames (n, origin, t1, t2), written by terrain_frames.contact_frames
            arrays.update({name: (C, wp.vec3) for name in ("frame_n", "frame_origin", "frame_t1", "frame_t2")})
        accumulators = {  # zeroed before every step (kernels add into them)
            "L_acc": layout.h_size,
            "y_acc": D,
            "x_acc": D,
            "dv_acc": D,
            "Z_acc": layout.j_size,
            "G": layout.g_size,
            "c_free": 3 * C,
            "res": max(sweep_slots - 1, 1) * 3 * C,
        }
        offsets, total = {}, 0
        for name, (n, dtype) in arrays.items():
            offsets[name] = total
            total += -(-max(n, 1) * wp.types.type_size_in_bytes(dtype) // _ALIGN) * _ALIGN
        acc_count = sum(accumulators.values())
        acc_offset, total = total, total + 4 * acc_count
        words = -(-total // 4)
        self._data = wp.zeros(words, dtype=float, device=device)
        self._grad = wp.zeros(words, dtype=float, device=device) if requires_grad else None

        def view(offset: int, n: int, dtype):
            # a view does not own its memory: _ref keeps the buffer alive as long as any view (a tape holds views)
            grad = None
            if self._grad is not None:
                grad = wp.array(ptr=self._grad.ptr + offset, dtype=dtype, shape=(n,), device=device)
                grad._ref = self._grad
            a = wp.array(
                ptr=self._data.ptr + offset,
                dtype=dtype,
                shape=(n,),
                device=device,
                grad=grad,
                requires_grad=requires_grad,
            )
            a._ref = self._data
            return a

        for name, (n, dtype) in arrays.items():
            setattr(self, name, view(offsets[name], n, dtype))
        self._acc = view(acc_offset, acc_count, float)
        t = layout.topo
        if layout.terrain is None:  # every frame is a plane's: the fixed ones (not counted by nbytes)
            self.frames = (t.cand_normal, t.cand_origin, t.cand_t1, t.cand_t2)
        else:
            self.frames = (self.frame_n, self.frame_origin, self.frame_t1, self.frame_t2)
        start = 0
        for name, size in accumulators.items():
            setattr(self, name, self._acc[start : start + size])
            start += size

    def zero_accumulators(self):
        self._acc.zero_()

    def prepare_reuse(self) -> None:
        """Ready a set whose step is finished (its backward run, if taped) for another step: accumulators and
        gradients zeroed; the other arrays are written by the step before they are read."""
        self._acc.zero_()
        if self._grad is not None:
            self._grad.zero_()

    def nbytes(self) -> int:
        """Bytes held by this step's arrays (gradient buffers included when allocated)."""
        return self._data.capacity * (2 if self._grad is not None else 1)
