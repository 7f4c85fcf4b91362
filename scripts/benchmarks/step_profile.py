"""Per-stage wall-time breakdown of one env step, shared by the env benchmark scripts.

:class:`StageProfile` wraps chosen callables (bound methods, module functions) with ``perf_counter`` timers that
synchronize the device before reading the clock (on CUDA; CPU launches are synchronous). Nested stages are
reported exclusive: a stage's time excludes the stages timed inside it (in the same thread), so the stages of one
thread add up to its whole.
:func:`kernel_launches` additionally times every ``wp.launch`` / ``wp.capture_launch`` by kernel name.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections import defaultdict

import torch
import warp as wp


class StageProfile:
    """Accumulated seconds and call counts per stage name; ``wrap`` installs a timer on ``owner.attr``."""

    def __init__(self, device: str):
        self.seconds: dict[str, float] = defaultdict(float)
        self.calls: dict[str, int] = defaultdict(int)
        self._cuda = str(device).startswith("cuda")
        self._undo: list = []
        self._local = threading.local()  # per thread, per open stage: time of the stages timed inside it

    def sync(self) -> None:
        if self._cuda:
            torch.cuda.synchronize()

    def wrap(self, owner, attr: str, name: str) -> None:
        """Time every call of ``owner.attr`` as stage ``name`` (restored by :meth:`restore`)."""
        inner = getattr(owner, attr)

        def timed(*args, **kwargs):
            self.sync()
            t0 = time.perf_counter()
            stack = self._stack()
            stack.append(0.0)
            try:
                return inner(*args, **kwargs)
            finally:
                self.sync()
                elapsed = time.perf_counter() - t0
                self.seconds[name] += elapsed - stack.pop()
                self.calls[name] += 1
                if stack:
                    stack[-1] += elapsed

        self.replace(owner, attr, timed)

    def replace(self, owner, attr: str, fn) -> None:
        """Set ``owner.attr`` to ``fn`` until :meth:`restore`."""
        raw = vars(owner).get(attr) if hasattr(owner, "__dict__") else None
        setattr(owner, attr, fn)
        self._undo.append((owner, attr, raw))

    def _stack(self) -> list[float]:
        if not hasattr(self._local, "stack"):
            self._local.stack = []
        return self._local.stack

    def restore(self) -> None:
        for owner, attr, raw in reversed(self._undo):
            if raw is None:
                delattr(owner, attr)
            else:
                setattr(owner, attr, raw)  # a classmethod stays one
        self._undo.clear()

    def reset(self) -> None:
        self.seconds.clear()
        self.calls.clear()


@contextlib.contextmanager
def kernel_launches(device: str):
    """Yield a dict kernel name -> [seconds, calls] filled by every ``wp.launch`` / ``wp.capture_launch`` inside
    (a launch's time includes its Python overhead; adjoint launches are entries of their own, ``<name> (adjoint)``;
    a graph replay is one entry, ``<graph replay>``)."""
    table: dict[str, list] = defaultdict(lambda: [0.0, 0])
    cuda = str(device).startswith("cuda")
    launch, replay = wp.launch, wp.capture_launch

    def timed(fn, key_of):
        def run(*args, **kwargs):
            if cuda:
                wp.synchronize_device(device)
            t0 = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                if cuda:
                    wp.synchronize_device(device)
                entry = table[key_of(args, kwargs)]
                entry[0] += time.perf_counter() - t0
                entry[1] += 1

        return run

    def launch_key(a, k):
        name = getattr(a[0] if a else k.get("kernel"), "key", "?")
        return f"{name} (adjoint)" if k.get("adjoint") else name

    wp.launch = timed(launch, launch_key)
    wp.capture_launch = timed(replay, lambda a, k: "<graph replay>")
    try:
        yield table
    finally:
        wp.launch, wp.capture_launch = launch, replay


def format_stages(rows: list[tuple[str, float]], total: float, steps: int, indent: str = "  ") -> str:
    """Lines 'stage  ms/step  %' for (name, seconds) rows over ``steps`` env steps."""
    lines = [f"{indent}{'stage':<52} {'ms/step':>9} {'share':>7}"]
    for name, sec in rows:
        lines.append(f"{indent}{name:<52} {1e3 * sec / steps:>9.3f} {100.0 * sec / total:>6.1f}%")
    lines.append(f"{indent}{'total':<52} {1e3 * total / steps:>9.3f} {100.0:>6.1f}%")
    return "\n".join(lines)


def format_kernels(table: dict, steps: int, top: int = 12, indent: str = "  ") -> str:
    """Lines 'kernel  calls/step  ms/step  us/call', slowest first."""
    lines = [f"{indent}{'warp kernel':<44} {'calls/step':>10} {'ms/step':>9} {'us/call':>8}"]
    for name, (sec, calls) in sorted(table.items(), key=lambda kv: -kv[1][0])[:top]:
        lines.append(
            f"{indent}{name[:44]:<44} {calls / steps:>10.1f} {1e3 * sec / steps:>9.3f} "
            f"{1e6 * sec / max(calls, 1):>8.1f}"
        )
    return "\n".join(lines)


def format_torch_ops(prof, steps: int, top: int = 12, indent: str = "  ") -> str:
    """The ``top`` torch ops by self CPU time from a finished ``torch.profiler.profile``."""
    lines = [f"{indent}{'torch op (self CPU)':<44} {'calls/step':>10} {'ms/step':>9}"]
    events = sorted(prof.key_averages(), key=lambda e: -e.self_cpu_time_total)[:top]
    for e in events:
        lines.append(f"{indent}{e.key[:44]:<44} {e.count / steps:>10.1f} {1e-3 * e.self_cpu_time_total / steps:>9.3f}")
    return "\n".join(lines)
