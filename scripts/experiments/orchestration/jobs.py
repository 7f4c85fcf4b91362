"""Subprocess jobs of an experiment (training runs, evaluations), a few at a time, reused once complete.

A job owns a directory. It is complete when ``done.json`` exists there (written after the process exited with
status 0); a complete job is never run again. Each job's output goes to ``<dir>/job.log``; while jobs run, one
status line per minute shows each running job's latest output line. Ctrl-C or SIGTERM terminates the running
jobs with SIGTERM (training runs then save a checkpoint) and re-raises.
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field


@dataclass
class Job:
    """One command run in ``directory`` (its log and completion marker live there)."""

    name: str
    directory: str
    argv: list[str]
    info: dict = field(default_factory=dict)

    @property
    def done_path(self) -> str:
        return os.path.join(self.directory, "done.json")

    @property
    def log_path(self) -> str:
        return os.path.join(self.directory, "job.log")

    def is_done(self) -> bool:
        return os.path.isfile(self.done_path)

    def result(self) -> dict:
        with open(self.done_path) as f:
            return json.load(f)


def _without_resume(argv: list[str]) -> list[str]:
    out, skip = [], False
    for a in argv:
        if skip:
            skip = False
        elif a == "--resume":
            skip = True
        else:
            out.append(a)
    return out


def _check_reuse(job: Job) -> None:
    """A completed job is reused only for the same command (a resume flag aside)."""
    before = _without_resume(job.result().get("argv", []))
    now = _without_resume(job.argv)
    if before != now:
        changed = sorted(set(now) ^ set(before))
        raise RuntimeError(
            f"{job.name}: {job.directory} holds a completed job run with a different command (differing arguments: "
            f"{changed}); delete that directory or choose another runs_dir"
        )


def _last_line(path: str) -> str:
    try:
        with open(path, "rb") as f:
            f.seek(max(os.path.getsize(path) - 4096, 0))
            lines = [ln.strip() for ln in f.read().decode(errors="replace").splitlines() if ln.strip()]
        return lines[-1][:160] if lines else ""
    except OSError:
        return ""


def run_jobs(jobs: list[Job], parallel: int, status_every_s: float = 60.0) -> None:
    """Run the jobs that are not complete, ``parallel`` at a time; raise RuntimeError naming failed jobs."""
    if parallel < 1:
        raise ValueError(f"parallel must be >= 1, got {parallel}")
    pending = [j for j in jobs if not j.is_done()]
    for j in jobs:
        if j.is_done():
            _check_reuse(j)
            print(f"[jobs] {j.name}: complete, reused ({j.directory})", flush=True)
    running: list[tuple[Job, subprocess.Popen, float, object]] = []
    failed: list[str] = []
    last_status = time.time()

    def on_sigterm(signum, frame):
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, on_sigterm)
    try:
        while pending or running:
            while pending and len(running) < parallel:
                job = pending.pop(0)
                os.makedirs(job.directory, exist_ok=True)
                log = open(job.log_path, "a")
                log.write(f"$ {shlex.join(job.argv)}\n")
                log.flush()
                proc = subprocess.Popen(job.argv, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
                running.append((job, proc, time.time(), log))
                print(f"[jobs] {job.name}: started (log {job.log_path})", flush=True)
            time.sleep(1.0)
            for entry in list(running):
                job, proc, t0, log = entry
                rc = proc.poll()
                if rc is None:
                    continue
                running.remove(entry)
                log.close()
                wall = time.time() - t0
                if rc == 0:
                    with open(job.done_path, "w") as f:
                        json.dump({"argv": job.argv, "wall_s": wall, **job.info}, f, indent=1)
                    print(f"[jobs] {job.name}: done in {wall / 60:.1f} min", flush=True)
                else:
                    failed.append(f"{job.name} (exit {rc}, see {job.log_path}: {_last_line(job.log_path)})")
                    print(f"[jobs] {job.name}: FAILED with exit {rc}; log {job.log_path}", flush=True)
            if running and time.time() - last_status >= status_every_s:
                last_status = time.time()
                for job, _, t0, _ in running:
                    print(
                        f"[jobs] {job.name} ({(time.time() - t0) / 60:.1f} min): {_last_line(job.log_path)}", flush=True
                    )
    except KeyboardInterrupt:
        if running:
            print("[jobs] interrupted: stopping running jobs (they save what they can); rerun to continue", flush=True)
            for _, proc, _, _ in running:
                if proc.poll() is None:
                    proc.send_signal(signal.SIGTERM)
            for _, proc, _, _ in running:
                try:
                    proc.wait(timeout=120)
                except subprocess.TimeoutExpired:
                    proc.kill()
        raise
    finally:
        signal.signal(signal.SIGTERM, previous)
    if failed:
        raise RuntimeError("jobs failed: " + "; ".join(failed))


def python() -> str:
    """The interpreter running this process (the project's venv)."""
    return sys.executable


def run_and_load(jobs: dict, parallel: int, filename: str) -> dict:
    """Run the jobs (``{key: Job}``) a few at a time, then load the JSON file each wrote into its directory."""
    run_jobs(list(jobs.values()), parallel)
    loaded = {}
    for key, job in jobs.items():
        with open(os.path.join(job.directory, filename)) as f:
            loaded[key] = json.load(f)
    return loaded
