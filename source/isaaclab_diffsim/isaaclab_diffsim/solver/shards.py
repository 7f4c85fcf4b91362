"""Articulation shards of a solver step, stepped on threads of their own on the CPU.

Every kernel of a step reads and writes only its own articulation's entries (the Gauss-Seidel early exit is per
articulation too), so contiguous ranges of articulations can be stepped independently: a shard's Topology is the
full one with its per-articulation arrays replaced by views of its range, per-articulation kernels are launched
over the range (the per-articulation outputs they index by thread, sweep counts and residuals, as views of the
range), per-joint and per-candidate kernels over the range's joints and candidates (an offset argument).
Warp calls CPU kernels through ctypes, which releases the GIL, so two shards' kernels run at once on two cores.

Under a ``wp.Tape`` each shard records its launches on a :class:`ShardTape`; the step's tape gets one
:class:`ShardedBackward` that replays the shards' records on the same threads. Results are bitwise those of one
shard, except the gradient of a kappa that requires grad: its per-articulation contributions are summed per shard
first (float reassociation).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
import warp as wp

from .taped_launch import struct_adjoint
from .topology import Layout, Topology

PER_ARTICULATION = tuple(name for name in Topology.vars if name.startswith("art_"))
"""The Topology fields indexed by articulation: a shard holds views of its range of them."""


@dataclass
class Shard:
    """A contiguous range of articulations and what its launches take."""

    topo: Topology
    struct_adjoints: dict
    art_offset: int
    articulations: int
    joint_offset: int
    joints: int
    cand_offset: int
    candidates: int


def whole(layout: Layout, struct_adjoints: dict) -> Shard:
    """The layout as one shard (the full Topology itself)."""
    return Shard(
        layout.topo, struct_adjoints, 0, layout.articulation_count, 0, layout.joint_count, 0, layout.candidate_count
    )


def split(layout: Layout, count: int, terrain_adjoints: dict) -> list[Shard]:
    """``count`` shards of (nearly) equal articulation counts; ``terrain_adjoints`` holds the prebuilt adjoints of
    the structs the shards share (the terrain's)."""
    topo, n = layout.topo, layout.articulation_count
    joint_start = topo.art_joint_start.numpy()
    joint_end = topo.art_joint_end.numpy()
    cand_start = topo.art_cand_start.numpy()
    cand_count = topo.art_ncand.numpy()
    bounds = np.linspace(0, n, count + 1).round().astype(int)
    shards = []
    for a0, a1 in zip(bounds[:-1], bounds[1:]):
        part = Topology()
        for name in Topology.vars:
            value = getattr(topo, name)
            setattr(part, name, value[a0:a1] if name in PER_ARTICULATION else value)
        j0, j1 = int(joint_start[a0]), int(joint_end[a1 - 1])
        c0 = int(cand_start[a0])
        c1 = int(cand_start[a1 - 1] + cand_count[a1 - 1])
        adjoints = {**terrain_adjoints, id(part): (part, struct_adjoint(part))}
        shards.append(Shard(part, adjoints, int(a0), int(a1 - a0), j0, j1 - j0, c0, c1 - c0))
    return shards


class ShardTape:
    """The tape functions one shard's part of a step records (``record_func``, as on a ``wp.Tape``)."""

    def __init__(self):
        self.launches: list = []

    def record_func(self, backward, arrays) -> None:
        self.launches.append(backward)

    def backward(self) -> None:
        for launch in reversed(self.launches):
            launch()


class ShardedBackward:
    """One step's backward on a ``wp.Tape``: every shard's records replayed by ``run`` (the shards' callables at
    once, one shard per thread, or one after the other); then each ``(partial, total)`` pair of ``sums`` (per-shard
    gradients of a shared input) is added into its total in shard order."""

    def __init__(self, run, tapes: list[ShardTape], device, sums=()):
        self.run, self.tapes, self.device, self.sums = run, tapes, device, list(sums)

    def arrays(self) -> list:
        """The array arguments of the shards' launches (what :func:`isaaclab_diffsim.bridge.tape_nbytes` counts)."""
        return [a for t in self.tapes for launch in t.launches if hasattr(launch, "arrays") for a in launch.arrays()]

    def __call__(self) -> None:
        if capturing(self.device):  # a capture records launches in issue order: one thread
            if self.sums:
                raise RuntimeError("ShardedBackward: the per-shard gradient sums run on the host: not capturable")
            for t in self.tapes:
                t.backward()
        else:
            self.run([t.backward for t in self.tapes])
        for partials, total in self.sums:
            grad = total.numpy()
            for p in partials:
                grad += p.numpy()


class ShardRunner:
    """Runs one callable per shard: the first on the calling thread, the others on a pool's threads; the first
    exception raised is re-raised once all have finished."""

    def __init__(self, shards: int):
        self.pool = ThreadPoolExecutor(max_workers=shards - 1, thread_name_prefix="diffsim-shard")

    def run(self, calls) -> None:
        futures = [self.pool.submit(call) for call in calls[1:]]
        error = None
        try:
            calls[0]()
        except BaseException as e:  # noqa: BLE001  re-raised after the other shards finished
            error = e
        for f in futures:
            try:
                f.result()
            except BaseException as e:  # noqa: BLE001
                error = error or e
        if error is not None:
            raise error


def capturing(device) -> bool:
    """Whether launches on ``device`` are being captured into a graph (the shards then run one after the other)."""
    return bool(wp.get_device(device).is_capturing)
