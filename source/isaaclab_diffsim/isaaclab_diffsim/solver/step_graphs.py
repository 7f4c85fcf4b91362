"""``StepGraphs``: a fixed sequence of solver steps and its tape's backward, captured into Warp graphs (CPU) and
replayed with the articulation shards on their threads at once.

One graph per :meth:`SolverMoreauGS.step_parts` part: the scratch memsets, each shard's launches over every step of
the sequence, the forward kinematics. Shards share no data, so their graphs can run at once; the others order them.
The backward of the sequence's tape splits the same way: the adjoint of the forward kinematics (recorded last, so
replayed first), then each shard's records of every step (the tape's ``ShardedBackward`` entries, in reverse).
Replays launch the same kernels on the same buffers in the same order per articulation as the eager steps, so the
results are bitwise theirs. With one shard there is one graph each way.
"""

from __future__ import annotations

from functools import partial

import warp as wp

from .shards import ShardedBackward


class StepGraphs:
    """Forward and backward graphs of one step sequence of ``solver`` on its buffers (see the module doc)."""

    def __init__(self, solver):
        self.solver = solver
        self.parts = solver.step_parts()
        self.forward_graphs: list | None = None
        self.backward_graphs: list | None = None

    def _capture(self, run) -> wp.Graph:
        with wp.ScopedCapture(device=self.solver.model.device) as cap:  # records without running
            run()
        return cap.graph

    def capture(self, prepare, steps) -> None:
        """Capture ``prepare()`` (the caller's memsets) and ``steps()`` (the solver steps), one graph per part."""
        graphs = []
        for part in self.parts:

            def run(part=part):
                if part in (None, "prepare"):
                    prepare()
                with self.solver.step_part(part):
                    steps()

            graphs.append(self._capture(run))
        self.forward_graphs, self.backward_graphs = graphs, None

    def launch(self) -> None:
        """Replay the captured steps."""
        self._replay(self.forward_graphs)

    def capture_backward(self, tape: wp.Tape) -> None:
        """Capture ``tape``'s backward (the tape the captured steps recorded when they ran eagerly)."""
        if self.parts == (None,):
            self.backward_graphs = [self._capture(tape.backward)]
            return
        sharded = [i for i, e in enumerate(tape.launches) if isinstance(e, ShardedBackward)]
        if not sharded or sharded != list(range(len(sharded))):
            raise RuntimeError("StepGraphs: the tape does not hold the shards' records first and the rest after")
        records = [tape.launches[i] for i in reversed(sharded)]
        if any(r.sums for r in records):
            raise RuntimeError("StepGraphs: per-shard gradient sums (a differentiated kappa) run on the host")
        rest = wp.Tape()
        rest.launches = tape.launches[len(sharded) :]
        graphs = [self._capture(rest.backward)]
        for k in range(len(self.parts) - 2):
            graphs.append(self._capture(partial(_backward_shard, records, k)))
        self.backward_graphs = graphs

    def launch_backward(self) -> None:
        """Replay the captured backward."""
        graphs = self.backward_graphs
        wp.capture_launch(graphs[0])
        if len(graphs) > 1:
            self.solver.run_shards([partial(wp.capture_launch, g) for g in graphs[1:]], backward=True)

    def _replay(self, graphs) -> None:
        wp.capture_launch(graphs[0])
        if len(graphs) > 1:
            self.solver.run_shards([partial(wp.capture_launch, g) for g in graphs[1:-1]])
            wp.capture_launch(graphs[-1])


def _backward_shard(records, k: int) -> None:
    for record in records:
        record.tapes[k].backward()
