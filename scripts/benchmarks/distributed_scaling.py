"""Throughput of SHAC training in 1 process vs N processes (torchrun, gloo on CPU) with the same total envs.

    .venv/bin/python scripts/benchmarks/distributed_scaling.py --total_envs 64 --procs 2 --iterations 30

Runs ``scripts/train.py`` (single process, ``--num_envs total``) and ``torchrun --nproc_per_node N scripts/train.py
--distributed`` (``--num_envs total / N`` per rank) back to back, ``--repeats`` times alternating, and prints
iterations/s and env-steps/s of each run, timed on the wall clock from the line of iteration 1 to the line of the
last iteration (start-up, Warp kernel loading and the first iteration excluded). The load average before and after
each run is printed too: on a shared machine the figures depend on what else runs.

Also printed: CPU seconds per iteration summed over the processes (the run's CPU time minus that of a 1-iteration
run of the same command, over the difference in iterations), which competition for the cores changes much less
than the wall clock; ``N x`` the 1-process wall time per iteration over this is what N idle cores could reach.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
IT_LINE = re.compile(r"^\[SHAC\] it (\d+)/(\d+).*fwd ([\d.]+) s bwd ([\d.]+) s upd ([\d.]+) s")


def cpu_seconds() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)  # all waited-for descendants (torchrun's workers too)
    return r.ru_utime + r.ru_stime


def run(cmd: list[str]) -> tuple[float, int, float, list[float]]:
    """(seconds from iteration 1's line to the last iteration's, iterations in between, CPU seconds of the whole
    run, rank 0's mean rollout / actor backward / rest-of-update seconds over those iterations) of one run."""
    cpu0 = cpu_seconds()
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    err = tempfile.TemporaryFile(mode="w+")
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err, text=True, env=env)
    stamps: dict[int, float] = {}
    phases: list[list[float]] = []
    for line in proc.stdout:
        m = IT_LINE.match(line)
        if m:
            stamps[int(m.group(1))] = time.monotonic()
            if int(m.group(1)) > 1:
                phases.append([float(m.group(i)) for i in (3, 4, 5)])
    if proc.wait() != 0:
        err.seek(0)
        raise SystemExit(f"failed ({proc.returncode}): {' '.join(cmd)}\n{err.read()[-3000:]}")
    last = max(stamps)
    means = [sum(col) / len(col) for col in zip(*phases)] if phases else [float("nan")] * 3
    return stamps[last] - stamps[1], last - 1, cpu_seconds() - cpu0, means


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--total_envs", type=int, default=64)
    p.add_argument("--procs", type=int, default=2)
    p.add_argument("--iterations", type=int, default=30)
    p.add_argument("--horizon", type=int, default=12)
    p.add_argument("--repeats", type=int, default=1)
    args = p.parse_args()
    if args.total_envs % args.procs:
        raise SystemExit("--total_envs must be a multiple of --procs")
    train = str(ROOT / "scripts" / "train.py")
    torchrun = str(Path(sys.executable).with_name("torchrun"))
    common = ["--eval_episodes", "0", f"agent.horizon={args.horizon}", f"agent.save_interval={args.iterations}"]
    with tempfile.TemporaryDirectory() as tmp:
        single = [sys.executable, train, "--num_envs", str(args.total_envs), *common]
        multi = [
            torchrun,
            "--standalone",
            "--nnodes",
            "1",
            "--nproc_per_node",
            str(args.procs),
            train,
            "--distributed",
            "--num_envs",
            str(args.total_envs // args.procs),
            *common,
        ]
        for rep in range(args.repeats):
            for name, cmd in (
                (f"1 process x {args.total_envs} envs", single),
                (f"{args.procs} processes x {args.total_envs // args.procs} envs", multi),
            ):
                log = os.path.join(tmp, f"{rep}_{len(cmd)}")
                _, _, cpu_fixed, _ = run([*cmd, "--max_iterations", "1", "--log_dir", log + "_base"])
                load0 = os.getloadavg()[0]
                secs, its, cpu, (fwd, bwd, upd) = run(
                    [*cmd, "--max_iterations", str(args.iterations), "--log_dir", log]
                )
                load1 = os.getloadavg()[0]
                ips = its / secs
                cpu_per_it = (cpu - cpu_fixed) / (args.iterations - 1)
                print(
                    f"{name}: {ips:.3f} iterations/s, {ips * args.horizon * args.total_envs:.0f} env-steps/s"
                    f" ({its} iterations in {secs:.1f} s; load average {load0:.2f} -> {load1:.2f});"
                    f" {cpu_per_it:.2f} CPU s per iteration; rank 0 per iteration: rollout {fwd:.2f} s, actor"
                    f" backward {bwd:.2f} s, rest of the update {upd:.2f} s",
                    flush=True,
                )


if __name__ == "__main__":
    main()
