"""Kernel launches recorded on the active ``wp.Tape`` with prebuilt adjoints of their struct arguments.

When Warp's tape replays a launch backwards it builds, for every struct argument, a new struct of the fields'
gradients (about 0.1 ms for the solver's 57-field Topology, on each of the ~6 launches per step). The solver's
structs are constant during a step, so :func:`launch` records the launch as a :class:`TapedLaunch` holding an
adjoint struct built once (:func:`struct_adjoint`, the same fields Warp's tape would fill) and otherwise maps the
arguments to their adjoints as the tape does: the same adjoint launch on the same buffers, in the same order.
"""

from __future__ import annotations

import warp as wp
import warp._src.context as _warp_context  # the active wp.Tape (runtime.tape) has no public accessor


def struct_adjoint(value):
    """The adjoint Warp's tape builds for struct ``value`` (array fields' gradients, None where there is none)."""
    return wp.Tape().get_adjoint(value)


def _adjoint(arg, struct_adjoints: dict):
    if wp.types.is_array(arg):
        return arg.grad if arg.grad else None
    held = struct_adjoints.get(id(arg))
    if held is not None and held[0] is arg:
        return held[1]
    return wp.Tape().get_adjoint(arg)  # a value type's default, None, or a struct not prebuilt


class TapedLaunch:
    """A forward launch's backward, as a tape function (``tape.record_func``): its adjoint kernel launch."""

    def __init__(self, kernel, dim, inputs, outputs, device, struct_adjoints: dict):
        self.kernel, self.dim, self.device = kernel, dim, device
        self.inputs, self.outputs = list(inputs), list(outputs)
        self.struct_adjoints = struct_adjoints

    def arrays(self) -> list:
        """The launch's array arguments (what :func:`isaaclab_diffsim.bridge.tape_nbytes` counts)."""
        return [a for a in (*self.inputs, *self.outputs) if wp.types.is_array(a)]

    def __call__(self) -> None:
        wp.launch(
            self.kernel,
            dim=self.dim,
            inputs=self.inputs,
            outputs=self.outputs,
            adj_inputs=[_adjoint(a, self.struct_adjoints) for a in self.inputs],
            adj_outputs=[_adjoint(a, self.struct_adjoints) for a in self.outputs],
            device=self.device,
            adjoint=True,
        )


def record(tape, backward) -> None:
    """Put ``backward`` (a tape function with an ``arrays()`` method: its forward launch's arrays) on ``tape``, with
    the arrays that carry gradients (the ones ``tape.zero()`` clears)."""
    tape.record_func(backward, [a for a in backward.arrays() if a.grad])


def launch(kernel, dim, inputs, outputs, device, struct_adjoints: dict, record_tape: bool = True, tape=None) -> None:
    """``wp.launch``; under an active tape (and ``record_tape``) the backward is recorded as a :class:`TapedLaunch`
    whose structs found in ``struct_adjoints`` (id -> (struct, its adjoint)) use the prebuilt adjoints. ``tape``:
    where to record instead of the active tape (anything with ``record_func``)."""
    if tape is None:
        tape = _warp_context.runtime.tape
    if not record_tape:
        tape = None
    wp.launch(kernel, dim=dim, inputs=inputs, outputs=outputs, device=device, record_tape=False)
    if tape is not None:
        record(tape, TapedLaunch(kernel, dim, inputs, outputs, device, struct_adjoints))
