#!/usr/bin/env bash
# Submit one isaaclab_diffsim training run to PBS (qsub), or print its job script with --dry-run.
# The job runs scripts/train.py in the apptainer image (torchrun for several GPUs), logs to a shared
# directory, and sends the training SIGTERM --signal_lead seconds before its wall time (PBS has no advance
# signal, and its own SIGTERM comes only kill_delay seconds before SIGKILL); the training then saves a
# checkpoint and, with --requeue, the job submits itself again to resume. See docker/README.md and --help.
set -euo pipefail
SCHEDULER=PBS
# shellcheck source=job_common.sh
. "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/job_common.sh"

render_pbs_job() {
  local mem
  mem="$(echo "${OPT_MEM%[GM]}")$(case "$OPT_MEM" in *G) echo gb ;; *M) echo mb ;; esac)"
  echo "#!/usr/bin/env bash"
  echo "#PBS -N $OPT_RUN"
  echo "#PBS -l select=1:ncpus=$OPT_CPUS:ngpus=$OPT_GPUS:mem=$mem"
  echo "#PBS -l walltime=$OPT_TIME"
  echo "#PBS -j oe"
  echo "#PBS -o $RUN_DIR/pbs.out"
  if [ "$OPT_REQUEUE" = 1 ]; then echo "#PBS -r y"; else echo "#PBS -r n"; fi
  [ -z "$OPT_QUEUE" ] || echo "#PBS -q $OPT_QUEUE"
  [ -z "$OPT_ACCOUNT" ] || echo "#PBS -A $OPT_ACCOUNT"
  echo "# isaaclab_diffsim training job, written by docker/cluster/submit_job_pbs.sh"
  render_job_body "$(cat <<EOF
# PBS sends SIGTERM to every process of the job (qdel, preemption, wall time) and SIGKILL kill_delay seconds
# later: the training receives it directly, so this shell only notes it. For the wall time, a timer sends the
# training one SIGTERM $OPT_LEAD s before the end, leaving it time to save a checkpoint.
interrupted=0
child=""
trap 'interrupted=1; echo "[job] SIGTERM from PBS"' TERM
stop_after=$((WALLTIME_S - OPT_LEAD))
EOF
)" "$(cat <<'EOF'
(
  sleep "$stop_after" &
  sleeper=$!
  trap 'kill "$sleeper" 2> /dev/null; exit 0' TERM
  wait "$sleeper"
  echo "[job] $((stop_after / 60)) min elapsed, wall time nearly over: telling the training to save a checkpoint and stop"
  kill -TERM "$child" 2> /dev/null
) &
timer=$!
EOF
)" "$(cat <<'EOF'
if kill -0 "$timer" 2> /dev/null; then
  kill "$timer"  # the training ended before the timer
else
  interrupted=1
fi
EOF
)" 'qsub "$run_dir/job.pbs"  # the new job resumes from the newest checkpoint'
}

parse_options "$@"
job_script="$(render_pbs_job)"
if [ "$OPT_DRY_RUN" = 1 ]; then
  printf '%s\n' "$job_script"
  exit 0
fi
command -v qsub > /dev/null || die "qsub not found: run this on the cluster's login node (or use --dry-run)"
mkdir -p "$RUN_DIR"
printf '%s\n' "$job_script" > "$RUN_DIR/job.pbs"
qsub "$RUN_DIR/job.pbs"
echo "[submit] run directory: $RUN_DIR (job script: $RUN_DIR/job.pbs)"
