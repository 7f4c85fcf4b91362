#!/usr/bin/env bash
# Submit one isaaclab_diffsim training run to SLURM (sbatch), or print its job script with --dry-run.
# The job runs scripts/train.py in the apptainer image (torchrun for several GPUs), logs to a shared
# directory, gets SIGTERM --signal_lead seconds before its wall time (the training then saves a checkpoint)
# and, with --requeue, requeues itself to resume. See docker/README.md and --help.
set -euo pipefail
SCHEDULER=SLURM
# shellcheck source=job_common.sh
. "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/job_common.sh"

render_slurm_job() {
  local gpus="$OPT_GPUS"
  [ -z "$OPT_GPU_TYPE" ] || gpus="$OPT_GPU_TYPE:$OPT_GPUS"
  echo "#!/usr/bin/env bash"
  echo "#SBATCH --job-name=$OPT_RUN"
  echo "#SBATCH --nodes=1"
  echo "#SBATCH --ntasks=1"
  echo "#SBATCH --gpus=$gpus"
  echo "#SBATCH --cpus-per-task=$OPT_CPUS"
  echo "#SBATCH --mem=$OPT_MEM"
  echo "#SBATCH --time=$OPT_TIME"
  # B: signals only this batch shell, whose trap forwards one SIGTERM to the training.
  echo "#SBATCH --signal=B:TERM@$OPT_LEAD"
  if [ "$OPT_REQUEUE" = 1 ]; then echo "#SBATCH --requeue"; else echo "#SBATCH --no-requeue"; fi
  echo "#SBATCH --open-mode=append"
  echo "#SBATCH --output=$RUN_DIR/slurm-%j.out"
  [ -z "$OPT_QUEUE" ] || echo "#SBATCH --partition=$OPT_QUEUE"
  [ -z "$OPT_ACCOUNT" ] || echo "#SBATCH --account=$OPT_ACCOUNT"
  echo "# isaaclab_diffsim training job, written by docker/cluster/submit_job_slurm.sh"
  render_job_body "$(cat <<'EOF'
# SLURM sends SIGTERM to this shell (--signal=B:TERM@lead); forward it once to the training, which saves
# a checkpoint and stops.
interrupted=0
child=""
on_sigterm() {
  [ "$interrupted" = 0 ] || return 0
  interrupted=1
  echo "[job] SIGTERM from SLURM: telling the training to save a checkpoint and stop"
  [ -z "$child" ] || kill -TERM "$child" 2> /dev/null || true
}
trap on_sigterm TERM
EOF
)" "" "" 'scontrol requeue "$SLURM_JOB_ID"  # the requeued job resumes from the newest checkpoint'
}

parse_options "$@"
job_script="$(render_slurm_job)"
if [ "$OPT_DRY_RUN" = 1 ]; then
  printf '%s\n' "$job_script"
  exit 0
fi
command -v sbatch > /dev/null || die "sbatch not found: run this on the cluster's login node (or use --dry-run)"
mkdir -p "$RUN_DIR"
printf '%s\n' "$job_script" > "$RUN_DIR/job.slurm"
sbatch "$RUN_DIR/job.slurm"
echo "[submit] run directory: $RUN_DIR (job script: $RUN_DIR/job.slurm)"
