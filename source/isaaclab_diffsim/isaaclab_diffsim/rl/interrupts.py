"""Ctrl-C and SIGTERM handling for training loops: an interrupt takes effect where the run's state is consistent.

A scheduler stops a job with SIGTERM (background jobs ignore SIGINT), a user with Ctrl-C (SIGINT). While
:class:`InterruptGuard` is entered, both are *held*: the handler only records the signal, and the loop raises
:class:`KeyboardInterrupt` at a point it chooses (:meth:`InterruptGuard.raise_if_pending`, or by letting
signals through with :meth:`InterruptGuard.allowed` around code it can roll back). A second signal while one is
held raises at once with ``forced=True`` (a repeated SIGTERM is ignored: a scheduler's signal can arrive once
through each launcher); the state may then be inconsistent and must not be saved.
"""

from __future__ import annotations

import contextlib
import signal
import threading

SIGNALS = (signal.SIGINT, signal.SIGTERM)


class TrainingInterrupted(KeyboardInterrupt):
    """Raised by :class:`InterruptGuard`; ``signum`` is the signal, ``forced`` whether it came while held twice."""

    def __init__(self, signum: int, forced: bool = False):
        super().__init__(f"signal {signal.Signals(signum).name}" + (" (forced)" if forced else ""))
        self.signum, self.forced = signum, forced


class InterruptGuard:
    """Context manager installing handlers for SIGINT and SIGTERM (main thread only; elsewhere it does nothing).

    Signals are held by default inside the context; :meth:`allowed` lets them raise immediately for a block.
    The previous handlers are restored on exit.
    """

    def __init__(self):
        self.pending: int | None = None
        self._hold = True
        self._previous: dict[int, object] = {}

    def __enter__(self) -> InterruptGuard:
        if threading.current_thread() is threading.main_thread():
            for s in SIGNALS:
                self._previous[s] = signal.signal(s, self._handler)
        return self

    def __exit__(self, *exc) -> None:
        for s, h in self._previous.items():
            signal.signal(s, h)
        self._previous.clear()

    def _handler(self, signum, frame) -> None:
        if not self._hold:
            raise TrainingInterrupted(signum)
        if self.pending is not None:
            if signum == signal.SIGTERM:  # schedulers and launchers (apptainer, torchrun) may each deliver one
                return
            raise TrainingInterrupted(signum, forced=True)
        self.pending = signum
        print(
            f"[train] {signal.Signals(signum).name} received: stopping after the current iteration"
            " (Ctrl-C again stops at once without saving)",
            flush=True,
        )

    def raise_if_pending(self) -> None:
        """Raise :class:`TrainingInterrupted` if a signal arrived while held."""
        if self.pending is not None:
            raise TrainingInterrupted(self.pending)

    @contextlib.contextmanager
    def allowed(self):
        """Let a signal raise immediately inside the block (a held one raises on entry)."""
        self.raise_if_pending()
        self._hold = False
        try:
            yield
        finally:
            self._hold = True


def exit_code(signum: int) -> int:
    """The shell's status for a process stopped by ``signum`` (130 for SIGINT, 143 for SIGTERM)."""
    return 128 + int(signum)
