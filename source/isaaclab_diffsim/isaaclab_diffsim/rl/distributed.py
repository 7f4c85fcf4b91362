"""Multi-process training over ``torch.distributed``: process-group setup from torchrun's environment and the
collectives the SHAC runner needs (parameter broadcast, gradient averaging, agreement on flags, moment gathering).

One process per device, launched by ``torchrun`` (which sets ``RANK``, ``WORLD_SIZE``, ``LOCAL_RANK``,
``MASTER_ADDR``, ``MASTER_PORT``). Backend gloo on CPU, nccl on CUDA, where each rank uses ``cuda:<LOCAL_RANK>``.
Every function here is a no-op (or the identity) when no process group with more than one rank is initialised, so
single-process code calls them unconditionally.
"""

from __future__ import annotations

import datetime
import os
from dataclasses import dataclass

import torch
import torch.distributed as dist

TORCHRUN_VARS = ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT")


@dataclass(frozen=True)
class DistInfo:
    """This process's place in the group, and the device it trains on."""

    rank: int
    world_size: int
    local_rank: int
    device: str


def init_distributed(device: str, timeout_s: float | None = None) -> DistInfo:
    """Initialise the default process group from torchrun's environment variables.

    ``device`` is ``cpu`` (backend gloo) or ``cuda`` / ``cuda:<i>`` (backend nccl; the rank's device is
    ``cuda:<LOCAL_RANK>``, whatever index was given). ``timeout_s`` bounds how long a collective waits for the
    other ranks (torch's default when None). Raises RuntimeError naming the missing variables when the
    process was not started by torchrun, and ValueError for another device type.
    """
    missing = [v for v in TORCHRUN_VARS if v not in os.environ]
    if missing:
        raise RuntimeError(
            f"--distributed needs the environment torchrun sets ({', '.join(missing)} missing): launch with"
            " `torchrun --nproc_per_node <N> scripts/train.py --distributed ...`"
        )
    rank, world, local = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]), int(os.environ["LOCAL_RANK"])
    kind = torch.device(device).type
    if kind == "cpu":
        backend, rank_device = "gloo", "cpu"
    elif kind == "cuda":
        if local >= torch.cuda.device_count():
            raise RuntimeError(f"LOCAL_RANK {local} but only {torch.cuda.device_count()} CUDA devices are visible")
        backend, rank_device = "nccl", f"cuda:{local}"
        torch.cuda.set_device(local)
    else:
        raise ValueError(f"--distributed supports devices cpu (gloo) and cuda (nccl), got {device!r}")
    if not dist.is_initialized():
        timeout = None if timeout_s is None else datetime.timedelta(seconds=timeout_s)
        dist.init_process_group(backend=backend, rank=rank, world_size=world, timeout=timeout)
    return DistInfo(rank=rank, world_size=world, local_rank=local, device=rank_device)


def shutdown() -> None:
    """Destroy the default process group if one is initialised."""
    if dist.is_available() and dist.is_initialized():
        dist.destroy_process_group()


def world_size() -> int:
    """Number of ranks (1 without an initialised process group)."""
    return dist.get_world_size() if dist.is_available() and dist.is_initialized() else 1


def rank() -> int:
    """This process's rank (0 without an initialised process group)."""
    return dist.get_rank() if dist.is_available() and dist.is_initialized() else 0


def is_multi_process() -> bool:
    return world_size() > 1


def broadcast_module(module: torch.nn.Module, src: int = 0) -> None:
    """Overwrite every parameter and buffer of ``module`` with rank ``src``'s (in place)."""
    if not is_multi_process():
        return
    with torch.no_grad():
        for t in module.state_dict().values():
            dist.broadcast(t, src=src)


def average_gradients(params: list[torch.nn.Parameter], extra: torch.Tensor) -> torch.Tensor:
    """Average the gradients of ``params`` and the 1-D tensor ``extra`` over the ranks, in one all-reduce.

    A parameter without a gradient contributes zeros (and gets the average as its gradient), so every rank reduces
    the same buffer layout. ``extra`` (e.g. the local loss, NaN when it is not finite) comes back averaged: a
    non-finite value on any rank makes it non-finite everywhere, which is how the ranks agree on skipping a step.
    The reduced buffer is the same on every rank, so a decision taken on it (clip, skip) is the same everywhere.
    """
    if not is_multi_process():
        return extra
    grads = [p.grad.reshape(-1) if p.grad is not None else torch.zeros(p.numel(), device=p.device) for p in params]
    buf = torch.cat([*grads, extra.reshape(-1).to(grads[0].dtype)])
    dist.all_reduce(buf, op=dist.ReduceOp.SUM)
    buf /= world_size()
    offset = 0
    for p in params:
        n = p.numel()
        p.grad = buf[offset : offset + n].view_as(p).clone()
        offset += n
    return buf[offset:].clone()


def mean_over_ranks(x: torch.Tensor) -> torch.Tensor:
    """Average of ``x`` over the ranks (a copy; the input itself without a process group)."""
    if not is_multi_process():
        return x
    y = x.clone()
    dist.all_reduce(y, op=dist.ReduceOp.SUM)
    return y / world_size()


def any_rank(flag: bool | int, device: str | torch.device = "cpu") -> int:
    """The largest of ``flag`` over the ranks (so: whether any rank set it, or the largest signal number)."""
    if not is_multi_process():
        return int(flag)
    t = torch.tensor([int(flag)], dtype=torch.int64, device=device)
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    return int(t.item())


def gather_rank_rows(x: torch.Tensor) -> torch.Tensor:
    """Stack ``x`` from every rank along a new first dimension, in rank order (``x`` itself with one rank)."""
    if not is_multi_process():
        return x.unsqueeze(0)
    out = [torch.empty_like(x) for _ in range(world_size())]
    dist.all_gather(out, x.contiguous())
    return torch.stack(out)


def gather_objects_to_rank0(obj) -> list | None:
    """Every rank's ``obj`` (picklable) in rank order on rank 0, None on the others; ``[obj]`` with one rank."""
    if not is_multi_process():
        return [obj]
    out = [None] * world_size() if rank() == 0 else None
    dist.gather_object(obj, out, dst=0)
    return out


def broadcast_flag(flag: bool, src: int = 0, device: str | torch.device = "cpu") -> bool:
    """Rank ``src``'s ``flag`` on every rank."""
    if not is_multi_process():
        return bool(flag)
    t = torch.tensor([int(flag)], dtype=torch.int64, device=device)
    dist.broadcast(t, src=src)
    return bool(t.item())
