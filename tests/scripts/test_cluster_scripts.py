"""docker/cluster: the SLURM and PBS submit scripts' dry-run job scripts, and those job scripts run against fake
``apptainer``/``scontrol``/``qsub`` commands: train.py's command line, SIGTERM forwarded once before the end of
the wall time, resume from the newest checkpoint with the remaining iterations, requeue."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

CLUSTER = Path(__file__).resolve().parents[2] / "docker" / "cluster"
SCRIPTS = sorted(CLUSTER.glob("*.sh"))

FAKE_APPTAINER = """#!/usr/bin/env bash
printf '%s\\n' "$*" >> "$FAKE_LOG/apptainer_calls"
[ "$1" = exec ] || exit 3
shift
while [ $# -gt 0 ]; do
  case "$1" in
    *.sif) shift; break ;;
    --nv | --cleanenv) shift ;;
    *) shift 2 ;;
  esac
done
[ "$1" = cp ] && exit 0
exec "$FAKE_TRAINER" "$@"
"""

# Stands in for train.py: records its command line; on SIGTERM "saves" model_<resumed + 7>.pt and exits.
FAKE_TRAINER = f"""#!{sys.executable}
import json, os, signal, sys, time
argv = sys.argv[1:]
log = os.environ["FAKE_LOG"]
with open(os.path.join(log, "train_calls.jsonl"), "a") as f:
    f.write(json.dumps(argv) + "\\n")
terms = []
signal.signal(signal.SIGTERM, lambda *_: terms.append(time.time()))
if os.environ.get("FAKE_TRAIN_MODE") == "finish":
    sys.exit(0)
deadline = time.time() + 30
while not terms and time.time() < deadline:
    time.sleep(0.02)
time.sleep(0.5)  # a second SIGTERM would arrive here
log_dir = argv[argv.index("--log_dir") + 1]
start = 0
if "--resume" in argv:
    start = int(argv[argv.index("--resume") + 1].rsplit("model_", 1)[1][:-3])
open(os.path.join(log_dir, f"model_{{start + 7}}.pt"), "w").close()
with open(os.path.join(log, "sigterms"), "a") as f:
    f.write(f"{{len(terms)}}\\n")
sys.exit(0)
"""


@pytest.fixture
def fakes(tmp_path):
    """A PATH with fake apptainer, scontrol, qsub and sbatch that record their calls in ``tmp_path/calls``."""
    bin_dir, log = tmp_path / "bin", tmp_path / "calls"
    bin_dir.mkdir()
    log.mkdir()
    (bin_dir / "apptainer").write_text(FAKE_APPTAINER)
    (bin_dir / "trainer").write_text(FAKE_TRAINER)
    for name in ("scontrol", "qsub", "sbatch"):
        (bin_dir / name).write_text(f'#!/usr/bin/env bash\nprintf "%s\\n" "$*" >> "$FAKE_LOG/{name}_calls"\n')
    for f in bin_dir.iterdir():
        f.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLUSTER_", "SLURM_", "PBS_", "CUDA_VISIBLE"))}
    env.update(
        PATH=f"{bin_dir}:{env['PATH']}",
        FAKE_LOG=str(log),
        FAKE_TRAINER=str(bin_dir / "trainer"),
        CLUSTER_ENV_FILE=str(tmp_path / "no.env.cluster"),
    )
    return env, log


def submit(scheduler: str, args: list[str], env: dict, check: bool = True) -> subprocess.CompletedProcess:
    proc = subprocess.run(
        ["bash", str(CLUSTER / f"submit_job_{scheduler}.sh"), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    if check:
        assert proc.returncode == 0, proc.stderr
    return proc


def paths(tmp_path) -> list[str]:
    return [
        "--image",
        str(tmp_path / "img" / "isaaclab_diffsim.sif"),
        "--log_root",
        str(tmp_path / "logs"),
        "--cache_dir",
        str(tmp_path / "cache"),
    ]


def directives(job: str, prefix: str) -> list[str]:
    return [line[len(prefix) :].strip() for line in job.splitlines() if line.startswith(prefix)]


def calls(log: Path, name: str) -> list[str]:
    f = log / f"{name}_calls"
    return f.read_text().splitlines() if f.exists() else []


def train_calls(log: Path) -> list[list[str]]:
    f = log / "train_calls.jsonl"
    return [json.loads(line) for line in f.read_text().splitlines()] if f.exists() else []


def run_job(job: str, tmp_path, env: dict, extra_env: dict | None = None, term_after_start: bool = False):
    """Run a job script with bash; with ``term_after_start``, send its shell SIGTERM once the training runs."""
    path = tmp_path / f"job_{time.monotonic_ns()}.sh"
    path.write_text(job)
    n_before = len(train_calls(Path(env["FAKE_LOG"])))
    proc = subprocess.Popen(
        ["bash", str(path)],
        env={**env, **(extra_env or {})},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    if term_after_start:
        deadline = time.time() + 30
        while len(train_calls(Path(env["FAKE_LOG"]))) == n_before and time.time() < deadline:
            time.sleep(0.02)
        time.sleep(0.2)
        proc.send_signal(signal.SIGTERM)
    out, _ = proc.communicate(timeout=60)
    return proc.returncode, out


@pytest.mark.integration
def test_scripts_are_valid_bash():
    assert {p.name for p in SCRIPTS} >= {
        "submit_job_slurm.sh",
        "submit_job_pbs.sh",
        "cluster_interface.sh",
        "job_common.sh",
    }
    for script in SCRIPTS:
        proc = subprocess.run(["bash", "-n", str(script)], capture_output=True, text=True)
        assert proc.returncode == 0, f"{script.name}: {proc.stderr}"
    if shutil.which("shellcheck"):  # not installed on every machine; bash -n above always runs
        proc = subprocess.run(["shellcheck", "-x", *map(str, SCRIPTS)], capture_output=True, text=True, cwd=CLUSTER)
        assert proc.returncode == 0, proc.stdout


@pytest.mark.integration
def test_slurm_dry_run_job_script(tmp_path, fakes):
    env, log = fakes
    job = submit(
        "slurm",
        [
            *paths(tmp_path),
            "--gpus",
            "4",
            "--gpu_type",
            "a100",
            "--cpus",
            "32",
            "--mem",
            "128G",
            "--time",
            "12:00:00",
            "--queue",
            "gpu",
            "--run",
            "shac_a",
            "--requeue",
            "--total_iterations",
            "2000",
            "--dry-run",
            "--",
            "--num_envs",
            "4096",
            "agent.horizon=32",
        ],
        env,
    ).stdout
    run_dir = tmp_path / "logs" / "shac_a"
    assert directives(job, "#SBATCH") == [
        "--job-name=shac_a",
        "--nodes=1",
        "--ntasks=1",
        "--gpus=a100:4",
        "--cpus-per-task=32",
        "--mem=128G",
        "--time=12:00:00",
        "--signal=B:TERM@120",
        "--requeue",
        "--open-mode=append",
        f"--output={run_dir}/slurm-%j.out",
        "--partition=gpu",
    ]
    assert job.startswith("#!/usr/bin/env bash\n")
    assert "trap on_sigterm TERM" in job and 'kill -TERM "$child"' in job
    assert 'scontrol requeue "$SLURM_JOB_ID"' in job
    assert "train_args=(--num_envs 4096 agent.horizon=32)" in job
    assert f"run_dir={run_dir}" in job
    assert not run_dir.exists(), "a dry run must not create anything"
    proc = subprocess.run(["bash", "-n"], input=job, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


@pytest.mark.integration
def test_pbs_dry_run_job_script(tmp_path, fakes):
    env, _ = fakes
    job = submit(
        "pbs",
        [
            *paths(tmp_path),
            "--gpus",
            "2",
            "--cpus",
            "16",
            "--mem",
            "512M",
            "--time",
            "04:00:00",
            "--signal_lead",
            "300",
            "--queue",
            "gpuq",
            "--account",
            "proj1",
            "--run",
            "r1",
            "--dry-run",
        ],
        env,
    ).stdout
    assert directives(job, "#PBS") == [
        "-N r1",
        "-l select=1:ncpus=16:ngpus=2:mem=512mb",
        "-l walltime=04:00:00",
        "-j oe",
        f"-o {tmp_path}/logs/r1/pbs.out",
        "-r n",
        "-q gpuq",
        "-A proj1",
    ]
    assert "stop_after=14100" in job  # 4 h minus the 300 s lead
    assert "requeue=0" in job and "num_gpus=2" in job
    proc = subprocess.run(["bash", "-n"], input=job, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


@pytest.mark.integration
def test_slurm_job_runs_torchrun_forwards_sigterm_once_and_requeues(tmp_path, fakes):
    env, log = fakes
    job = submit(
        "slurm",
        [
            *paths(tmp_path),
            "--gpus",
            "2",
            "--run",
            "r",
            "--requeue",
            "--total_iterations",
            "100",
            "--dry-run",
            "--",
            "--num_envs",
            "64",
            "env.solver_cfg.contact_model=hard",
        ],
        env,
    ).stdout
    run_dir = tmp_path / "logs" / "r"
    rc, out = run_job(
        job, tmp_path, env, {"SLURM_JOB_ID": "4242", "CUDA_VISIBLE_DEVICES": "0,1"}, term_after_start=True
    )
    assert rc == 0, out
    assert train_calls(log)[0] == [
        "torchrun",
        "--standalone",
        "--nnodes",
        "1",
        "--nproc_per_node",
        "2",
        "scripts/train.py",
        "--distributed",
        "--device",
        "cuda",
        "--num_envs",
        "64",
        "env.solver_cfg.contact_model=hard",
        "--log_dir",
        str(run_dir),
        "--max_iterations",
        "100",
    ]
    assert (log / "sigterms").read_text().split() == ["1"], "the training must get exactly one SIGTERM"
    assert (run_dir / "model_7.pt").exists()
    assert calls(log, "scontrol") == ["requeue 4242"]
    launch = calls(log, "apptainer")[-1]
    assert launch.startswith("exec --nv --cleanenv --pwd /workspace/isaaclab_diffsim")
    assert f"--bind {run_dir}" in launch and "--env CUDA_VISIBLE_DEVICES=0,1" in launch
    assert f"--env WARP_CACHE_PATH={tmp_path}/cache/warp" in launch
    assert calls(log, "apptainer")[0].endswith(f"cp -r --update=none /opt/isaaclab_diffsim/cache/. {tmp_path}/cache/")

    # the requeued job resumes from the newest checkpoint and finishes the run's 100 iterations
    (run_dir / "model_3.pt").touch()
    rc, out = run_job(job, tmp_path, env, {"SLURM_JOB_ID": "4242"}, term_after_start=True)
    assert rc == 0, out
    args = train_calls(log)[1]
    assert args[args.index("--resume") + 1] == str(run_dir / "model_7.pt")
    assert args[args.index("--max_iterations") + 1] == "100"
    assert (run_dir / "model_14.pt").exists()


@pytest.mark.integration
def test_job_that_finishes_is_not_requeued(tmp_path, fakes):
    env, log = fakes
    job = submit(
        "slurm", [*paths(tmp_path), "--run", "r", "--requeue", "--total_iterations", "10", "--dry-run"], env
    ).stdout
    rc, out = run_job(job, tmp_path, {**env, "FAKE_TRAIN_MODE": "finish"}, {"SLURM_JOB_ID": "7"})
    assert rc == 0, out
    assert train_calls(log)[0][:4] == ["python", "scripts/train.py", "--device", "cuda"]
    assert "--distributed" not in train_calls(log)[0]
    assert calls(log, "scontrol") == []
    # a run already at its total iteration count does not start the training again
    (tmp_path / "logs" / "r" / "model_10.pt").touch()
    rc, out = run_job(job, tmp_path, env, {"SLURM_JOB_ID": "7"})
    assert rc == 0 and "nothing left to train" in out
    assert len(train_calls(log)) == 1


@pytest.mark.integration
def test_pbs_job_stops_training_before_walltime_and_resubmits(tmp_path, fakes):
    env, log = fakes
    ckpt = tmp_path / "old" / "model_50.pt"
    ckpt.parent.mkdir()
    ckpt.touch()
    job = submit(
        "pbs",
        [
            *paths(tmp_path),
            "--run",
            "p",
            "--time",
            "00:00:03",
            "--signal_lead",
            "1",
            "--requeue",
            "--total_iterations",
            "80",
            "--resume",
            str(ckpt),
            "--dry-run",
        ],
        env,
    ).stdout
    t0 = time.time()
    rc, out = run_job(job, tmp_path, env)
    assert rc == 0, out
    assert 2.0 <= time.time() - t0 < 20, "the timer sends SIGTERM 1 s before the 3 s wall time"
    args = train_calls(log)[0]
    assert args[args.index("--resume") + 1] == str(ckpt)
    assert args[args.index("--max_iterations") + 1] == "80"
    assert f"--bind {ckpt.parent}" in calls(log, "apptainer")[-1]
    assert (log / "sigterms").read_text().split() == ["1"]
    assert (tmp_path / "logs" / "p" / "model_57.pt").exists()
    assert calls(log, "qsub") == [f"{tmp_path}/logs/p/job.pbs"]


@pytest.mark.integration
def test_submission_writes_job_script_and_refuses_to_mix_runs(tmp_path, fakes):
    env, log = fakes
    proc = submit("slurm", [*paths(tmp_path), "--run", "s", "--", "--seed", "3"], env)
    job_file = tmp_path / "logs" / "s" / "job.slurm"
    assert calls(log, "sbatch") == [str(job_file)]
    assert "train_args=(--seed 3)" in job_file.read_text() and str(job_file) in proc.stdout
    (job_file.parent / "model_20.pt").touch()
    proc = submit("slurm", [*paths(tmp_path), "--run", "s"], env, check=False)
    assert proc.returncode == 2 and "--resume auto" in proc.stderr
    submit("slurm", [*paths(tmp_path), "--run", "s", "--resume", "auto"], env)
    assert len(calls(log, "sbatch")) == 2


@pytest.mark.integration
@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--bogus"], "unknown option '--bogus'"),
        (["--gpus", "0"], "--gpus must be a positive integer"),
        (["--time", "1:00"], "--time must be HH:MM:SS"),
        (["--time", "00:99:99"], "--time must be HH:MM:SS, a duration"),
        (["--time", "00:00:00"], "--time must be HH:MM:SS, a duration"),
        (["--time", "00:01:00", "--signal_lead", "120"], "must be shorter than --time"),
        (["--mem", "64"], "--mem must look like 64G"),
        (["--requeue"], "--requeue needs --total_iterations"),
        (["--run", "a/b"], "--run must be a plain directory name"),
        (["--", "--log_dir", "x"], "train.py's --log_dir is set by the job"),
        (["--total_iterations", "5", "--", "--max_iterations", "9"], "not both"),
        (["--gpus"], "--gpus needs a value"),
    ],
)
@pytest.mark.parametrize("scheduler", ["slurm", "pbs"])
def test_bad_options_give_clear_errors(tmp_path, fakes, scheduler, args, message):
    env, _ = fakes
    proc = submit(scheduler, [*paths(tmp_path), "--dry-run", *args], env, check=False)
    assert proc.returncode == 2 and message in proc.stderr, proc.stderr


@pytest.mark.integration
def test_cluster_interface_answers_help_and_dry_run_without_connecting(tmp_path, fakes):
    env, log = fakes
    bin_dir = Path(env["PATH"].split(":")[0])
    (bin_dir / "ssh").write_text('#!/usr/bin/env bash\nprintf "%s\\n" "$*" >> "$FAKE_LOG/ssh_calls"\nexit 255\n')
    (bin_dir / "rsync").write_text('#!/usr/bin/env bash\nprintf "%s\\n" "$*" >> "$FAKE_LOG/rsync_calls"\nexit 255\n')
    for name in ("ssh", "rsync"):
        (bin_dir / name).chmod(0o755)
    env_file = tmp_path / "env.cluster"
    env_file.write_text("CLUSTER_JOB_SCHEDULER=SLURM\nCLUSTER_LOGIN=user@login.placeholder\nCLUSTER_SCRIPTS_DIR=/x\n")
    env = {**env, "CLUSTER_ENV_FILE": str(env_file)}
    run = ["bash", str(CLUSTER / "cluster_interface.sh"), "job"]
    helped = subprocess.run([*run, "--help"], env=env, capture_output=True, text=True, timeout=60)
    assert helped.returncode == 0 and "--time" in helped.stdout, helped.stderr
    dry = subprocess.run([*run, *paths(tmp_path), "--dry-run"], env=env, capture_output=True, text=True, timeout=60)
    assert dry.returncode == 0 and "#SBATCH" in dry.stdout, dry.stderr
    assert not (log / "ssh_calls").exists() and not (log / "rsync_calls").exists(), "contacted the login node"
