"""Where SHAC's critic fit runs: at once in the caller, in a worker thread, or in a forked worker process (CPU,
:mod:`.critic_process`), and the one fit that may be left running beside the next rollout.

:class:`CriticFitWorker` is handed a fit (the horizon's data, the shuffles and the learning rate) and returns a wait:
a callable that blocks until the fit is done and returns its ``(statistics, optimiser steps)``. The fit's maths is
SHAC's own ``_fit_critic``, called on the same tensors wherever it runs, so a fit is bitwise the same in the caller,
a thread or a process (``tests/rl/test_shac.py``).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import torch

from .critic_process import CriticFitProcess

FitResult = tuple[dict[str, float], int]
"""A fit's statistics and its number of optimiser steps."""


class CriticFitWorker:
    """Runs the critic fits of ``alg`` (a :class:`~isaaclab_diffsim.rl.shac.SHAC`: its ``_fit_critic``, critic
    optimiser and sizes) where :meth:`start` is told, and keeps the fit left running beside a rollout
    (:meth:`leave_running`, :meth:`take_pending`)."""

    def __init__(self, alg):
        self._alg = alg
        self.thread: ThreadPoolExecutor | None = None
        """The worker thread (``critic_fit_worker="thread"``), started at its first fit."""
        self.process: CriticFitProcess | None = None
        """The worker process (``critic_fit_worker="process"`` on the CPU), started at its first fit."""
        self.seconds = 0.0
        """Seconds spent fitting so far, in whichever thread or process fitted."""
        self._pending: Callable[[], FitResult] | None = None

    def start(
        self, obs: torch.Tensor, tgt: torch.Tensor, perms: list[torch.Tensor], lr: float, where: str | None
    ) -> Callable[[], FitResult]:
        """Begin a fit of the critic to targets ``tgt`` on observations ``obs`` (one epoch per shuffle of ``perms``)
        at learning rate ``lr`` (the caller has set it on its optimiser; a process sets it on its own copy);
        ``where``: None (now, in the caller), ``"thread"`` or ``"process"``. Returns the wait for its result."""
        if where is None:
            result = self._fit_timed(obs, tgt, perms)
            return lambda: result
        if where == "process":
            proc = self.process
            if proc is None or not proc.fits(obs.shape[0], len(perms)):
                self.close()
                proc = self.process = CriticFitProcess(self._alg, obs.shape[0], len(perms))
            wait = proc.start_fit(obs, tgt, perms, lr)

            def result() -> FitResult:
                fit_stats, steps, seconds = wait()
                self.seconds += seconds
                return fit_stats, steps

            return result
        if self.thread is None:
            self.thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="shac-critic")
        # the next rollout writes the caller's buffer while the thread may still read it
        return self.thread.submit(self._fit_timed, obs.clone(), tgt, perms).result

    def _fit_timed(self, obs: torch.Tensor, tgt: torch.Tensor, perms: list[torch.Tensor]) -> FitResult:
        t0 = time.perf_counter()
        try:
            return self._alg._fit_critic(obs, tgt, perms)
        finally:
            self.seconds += time.perf_counter() - t0

    @property
    def pending(self) -> bool:
        """Whether a fit is left running beside the rollout."""
        return self._pending is not None

    def leave_running(self, wait: Callable[[], FitResult]) -> None:
        """Keep the wait of a fit that runs on beside the next rollout."""
        self._pending = wait

    def take_pending(self) -> Callable[[], FitResult] | None:
        """The wait of the fit left running (None if none), no longer kept here."""
        wait, self._pending = self._pending, None
        return wait

    def optimizer_state(self) -> dict | None:
        """The worker process's critic optimiser state (it owns the live one), or None without a process."""
        return self.process.optimizer_state() if self.process is not None else None

    def close(self, keep_state: bool = True) -> None:
        """Stop the worker process or thread, if any, dropping a fit left running (the next fit starts a new worker).
        ``keep_state``: first copy a worker process's critic optimiser state into ``alg``'s (the next worker forks
        from it)."""
        self._pending = None
        if self.process is not None:
            if keep_state:
                self._alg.critic_optimizer.load_state_dict(self.process.optimizer_state())
            self.process.close()
            self.process = None
        if self.thread is not None:
            self.thread.shutdown(wait=True)
            self.thread = None
