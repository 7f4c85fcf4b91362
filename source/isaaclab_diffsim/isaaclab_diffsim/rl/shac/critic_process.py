"""The SHAC critic fit in a forked worker process (CPU): its Python runs beside the backward's, not in turns with it.

Two threads of one interpreter share the GIL: the critic fit (a few thousand small torch ops per iteration) and the
actor's backward through the physics (Warp launches, torch autograd) then take turns, and each runs about half as
fast as alone. A forked process has its own interpreter. The critic's parameters are moved to shared memory before
the fork, so the worker's optimiser steps write the networks the parent reads; the horizon's data and the
shuffles (drawn by the parent, so its RNG sees the same draws) are copied into shared buffers when a fit starts (the
parent's next rollout may then overwrite its own), and only the learning rate, sizes and statistics go through the
pipe. The worker owns the live critic optimiser:
:meth:`CriticFitProcess.optimizer_state` returns its state (checkpoints), and a parent that loads another state
closes the worker, whose successor forks from the loaded one.

The worker runs the parent's own ``_fit_critic`` on the same tensors with one torch thread (a forked child cannot
use the parent's OpenMP pool), so the update is bitwise the in-thread one when the parent runs one thread too, as
``scripts/train.py`` does by default (``tests/rl/test_shac.py``); a parent on more threads gets the one-thread fit.
"""

from __future__ import annotations

import io
import multiprocessing
import os
import signal
import time
import traceback
import warnings
import weakref

import torch


def _serve(alg, conn, obs, tgt, perms, parent: int) -> None:
    """The worker's loop: one request (tag, kind, payload) -> one reply (tag, ok, payload) until the pipe closes or
    the parent is gone (a worker forked later holds this pipe's other end too, so its close alone may not show)."""
    # Ctrl-C and a scheduler's SIGTERM reach the whole process group; they are the parent's to handle, and it may
    # still need this worker to save a checkpoint (the worker ends when the parent closes the pipe or is gone)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    # GNU OpenMP's thread pool does not survive a fork: a parallel region in the child waits for the parent's
    # threads forever. One intra-op thread runs every op inline (as torch's DataLoader workers do).
    torch.set_num_threads(1)
    while True:
        try:
            while not conn.poll(1.0):
                if os.getppid() != parent:
                    return
            request = conn.recv()
        except (EOFError, OSError):
            return
        if request is None:
            return
        tag, kind, payload = request
        try:
            if kind == "fit":
                n, epochs, lr = payload
                for group in alg.critic_optimizer.param_groups:
                    group["lr"] = lr
                t0 = time.perf_counter()
                stats, steps = alg._fit_critic(obs[:n], tgt[:n], list(perms[:epochs, :n]))
                reply = (stats, steps, time.perf_counter() - t0)
            elif kind == "optimizer_state":
                buf = io.BytesIO()
                torch.save(alg.critic_optimizer.state_dict(), buf)
                reply = buf.getvalue()
            else:
                raise ValueError(f"unknown request {kind!r}")
            conn.send((tag, True, reply))
        except Exception:  # noqa: BLE001  the parent raises it, with this traceback
            conn.send((tag, False, traceback.format_exc()))


def _stop(conn, process) -> None:
    try:
        conn.send(None)
    except (BrokenPipeError, OSError):
        pass
    process.join(timeout=10)
    if process.is_alive():  # it ignores SIGTERM
        process.kill()
        process.join()
    conn.close()


class CriticFitProcess:
    """A forked process fitting ``alg.policy.critic`` (a :class:`~isaaclab_diffsim.rl.shac.SHAC` on the CPU) to
    horizons of up to ``capacity`` samples and ``epochs`` shuffles."""

    def __init__(self, alg, capacity: int, epochs: int):
        critic = alg.policy.critic
        for p in critic.parameters():
            p.data.share_memory_()
        self.capacity, self.epochs = int(capacity), int(epochs)
        self.obs = torch.zeros(self.capacity, alg.num_obs).share_memory_()
        self.tgt = torch.zeros(self.capacity).share_memory_()
        self.perms = torch.zeros(self.epochs, self.capacity, dtype=torch.long).share_memory_()
        ctx = multiprocessing.get_context("fork")
        self._conn, child = ctx.Pipe()
        self._tag = 0
        self.process = ctx.Process(
            target=_serve,
            args=(alg, child, self.obs, self.tgt, self.perms, os.getpid()),
            daemon=True,
            name="shac-critic-fit",
        )
        with warnings.catch_warnings():
            # Python warns on forking a multi-threaded process (a lock held by another thread stays held in the
            # child); the worker only runs torch CPU ops and this pipe, as a forked DataLoader worker does.
            warnings.simplefilter("ignore", DeprecationWarning)
            self.process.start()
        child.close()
        self._finalizer = weakref.finalize(self, _stop, self._conn, self.process)

    def fits(self, n: int, epochs: int) -> bool:
        """Whether a horizon of ``n`` samples and ``epochs`` shuffles fits the shared buffers."""
        return n <= self.capacity and epochs <= self.epochs

    def start_fit(self, obs: torch.Tensor, tgt: torch.Tensor, perms: list, lr: float):
        """Hand a fit to the worker; returns the callable that waits for ``(stats, optimiser steps, seconds)``."""
        n, epochs = obs.shape[0], len(perms)
        self.obs[:n].copy_(obs)
        self.tgt[:n].copy_(tgt)
        self.perms[:epochs, :n].copy_(torch.stack(perms))
        tag = self._send("fit", (n, epochs, float(lr)))
        return lambda: self._receive(tag)

    def optimizer_state(self) -> dict:
        """The worker's critic optimiser state dict (a copy)."""
        data = self._receive(self._send("optimizer_state", None))
        return torch.load(io.BytesIO(data), weights_only=True)

    def close(self) -> None:
        """Stop the worker (waits up to 10 s for a fit in progress to end)."""
        if self.process is not None:
            self._finalizer()
            self.process = None

    def _send(self, kind: str, payload) -> int:
        if self.process is None:
            raise RuntimeError("the critic fit process is closed")
        self._tag += 1
        self._conn.send((self._tag, kind, payload))
        return self._tag

    def _receive(self, tag: int):
        """The reply to request ``tag``; older replies (a wait interrupted by Ctrl-C) are dropped."""
        while True:
            try:
                got, ok, payload = self._conn.recv()
            except EOFError:
                code = self.process.exitcode if self.process is not None else None
                raise RuntimeError(f"the critic fit process ended unexpectedly (exit code {code})") from None
            if got != tag:
                continue
            if not ok:
                raise RuntimeError(f"the critic fit process failed:\n{payload}")
            return payload
