#!/usr/bin/env bash
# Shared by submit_job_slurm.sh and submit_job_pbs.sh (sourced, not run): option parsing and the part of the
# job script that is the same for both schedulers (apptainer exec of scripts/train.py, resume, SIGTERM).
# shellcheck disable=SC2034  # the variables set here are read by the sourcing script

CLUSTER_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# Paths inside the image (docker/Dockerfile): the repository and the warmed caches.
IMAGE_REPO_DIR=/workspace/isaaclab_diffsim
IMAGE_CACHE_DIR=/opt/isaaclab_diffsim/cache

die() {
  echo "error: $*" >&2
  exit 2
}

usage() {
  cat <<EOF
usage: $(basename "$0") [options] [-- train.py arguments]

Submits one training run of scripts/train.py, inside the apptainer image, as one $SCHEDULER job.

options:
  --gpus N              GPUs, one training process each; N > 1 runs torchrun --nproc_per_node N ... --distributed [1]
  --gpu_type TYPE       GPU model to request (SLURM --gpus=TYPE:N) [any]
  --cpus N              CPU cores [8]
  --mem SIZE            memory, e.g. 64G or 512M [64G]
  --time HH:MM:SS       wall time [23:00:00]
  --queue NAME          partition (SLURM) or queue (PBS) [the cluster's default]
  --account NAME        account to charge [the user's default]
  --run NAME            run name: the run's logs and checkpoints go to <log_root>/<NAME> [isaaclab_diffsim_<date>]
  --resume CKPT|auto    resume: from checkpoint CKPT, or (auto) from the newest model_<it>.pt in the run directory
  --total_iterations N  train up to iteration N in total (train.py --max_iterations N; a resumed job finishes the run)
  --requeue             after the scheduler's SIGTERM, requeue the job (SLURM) or submit it again (PBS); the new
                        job resumes from the newest checkpoint in the run directory
  --signal_lead S       seconds between the SIGTERM to the training and the end of the wall time [120]
  --image PATH          apptainer image (.sif) [\$CLUSTER_SIF_PATH/isaaclab_diffsim.sif]
  --log_root DIR        shared directory for the runs' logs [\$CLUSTER_LOG_DIR]
  --cache_dir DIR       shared directory for Warp's kernel cache and the generated assets [\$CLUSTER_CACHE_DIR]
  --dry-run             print the job script instead of submitting it
  -h, --help            this help

Defaults in [brackets]; \$CLUSTER_* come from the environment or docker/cluster/.env.cluster.
A run directory that already holds checkpoints is only reused with --resume.
EOF
}

# Reads .env.cluster (unless the variables are already set) and the options; sets the OPT_* variables.
parse_options() {
  if [ -f "${CLUSTER_ENV_FILE:-$CLUSTER_DIR/.env.cluster}" ]; then
    # shellcheck disable=SC1090,SC1091
    . "${CLUSTER_ENV_FILE:-$CLUSTER_DIR/.env.cluster}"
  fi
  OPT_GPUS=1 OPT_GPU_TYPE="" OPT_CPUS=8 OPT_MEM=64G OPT_TIME=23:00:00 OPT_QUEUE="" OPT_ACCOUNT=""
  OPT_RUN="isaaclab_diffsim_$(date +%Y-%m-%d_%H-%M-%S)" OPT_RESUME="" OPT_TOTAL="" OPT_REQUEUE=0
  OPT_LEAD=120 OPT_DRY_RUN=0
  OPT_IMAGE="${CLUSTER_SIF_PATH:+$CLUSTER_SIF_PATH/isaaclab_diffsim.sif}"
  OPT_LOG_ROOT="${CLUSTER_LOG_DIR:-}" OPT_CACHE_DIR="${CLUSTER_CACHE_DIR:-}"
  TRAIN_ARGS=()
  while [ $# -gt 0 ]; do
    case "$1" in
      --gpus | --gpu_type | --cpus | --mem | --time | --queue | --account | --run | --resume | --total_iterations | \
        --signal_lead | --image | --log_root | --cache_dir)
        [ $# -ge 2 ] || die "$1 needs a value"
        case "$1" in
          --gpus) OPT_GPUS=$2 ;;
          --gpu_type) OPT_GPU_TYPE=$2 ;;
          --cpus) OPT_CPUS=$2 ;;
          --mem) OPT_MEM=$2 ;;
          --time) OPT_TIME=$2 ;;
          --queue) OPT_QUEUE=$2 ;;
          --account) OPT_ACCOUNT=$2 ;;
          --run) OPT_RUN=$2 ;;
          --resume) OPT_RESUME=$2 ;;
          --total_iterations) OPT_TOTAL=$2 ;;
          --signal_lead) OPT_LEAD=$2 ;;
          --image) OPT_IMAGE=$2 ;;
          --log_root) OPT_LOG_ROOT=$2 ;;
          --cache_dir) OPT_CACHE_DIR=$2 ;;
        esac
        shift 2
        ;;
      --requeue) OPT_REQUEUE=1; shift ;;
      --dry-run) OPT_DRY_RUN=1; shift ;;
      -h | --help) usage; exit 0 ;;
      --) shift; TRAIN_ARGS=("$@"); break ;;
      *) die "unknown option '$1' (train.py arguments go after '--'; see --help)" ;;
    esac
  done
  validate_options
}

is_count() { case "$1" in '' | *[!0-9]*) return 1 ;; *) [ "$1" -gt 0 ] ;; esac }

validate_options() {
  is_count "$OPT_GPUS" || die "--gpus must be a positive integer, got '$OPT_GPUS'"
  is_count "$OPT_CPUS" || die "--cpus must be a positive integer, got '$OPT_CPUS'"
  is_count "$OPT_LEAD" || die "--signal_lead must be a positive number of seconds, got '$OPT_LEAD'"
  [ -z "$OPT_TOTAL" ] || is_count "$OPT_TOTAL" || die "--total_iterations must be a positive integer, got '$OPT_TOTAL'"
  # a requeued job needs the run's end to know when it is finished
  [ "$OPT_REQUEUE" = 0 ] || [ -n "$OPT_TOTAL" ] || die "--requeue needs --total_iterations (the run's end)"
  case "$OPT_MEM" in [1-9]*[GM]) is_count "${OPT_MEM%[GM]}" || die "--mem must look like 64G or 512M, got '$OPT_MEM'" ;;
    *) die "--mem must look like 64G or 512M, got '$OPT_MEM'" ;; esac
  WALLTIME_S=$(walltime_seconds "$OPT_TIME") || die "--time must be HH:MM:SS, a duration (minutes and seconds below 60, not zero), got '$OPT_TIME'"
  [ "$OPT_LEAD" -lt "$WALLTIME_S" ] || die "--signal_lead ($OPT_LEAD s) must be shorter than --time ($OPT_TIME)"
  case "$OPT_RUN" in '' | */* | .*) die "--run must be a plain directory name, got '$OPT_RUN'" ;; esac
  [ -n "$OPT_IMAGE" ] || die "no image: pass --image or set CLUSTER_SIF_PATH (docker/cluster/.env.cluster)"
  [ -n "$OPT_LOG_ROOT" ] || die "no log directory: pass --log_root or set CLUSTER_LOG_DIR (docker/cluster/.env.cluster)"
  [ -n "$OPT_CACHE_DIR" ] || die "no cache directory: pass --cache_dir or set CLUSTER_CACHE_DIR (docker/cluster/.env.cluster)"
  case "$OPT_IMAGE$OPT_LOG_ROOT$OPT_CACHE_DIR" in *\'*) die "paths must not contain single quotes" ;; esac
  local arg
  for arg in "${TRAIN_ARGS[@]}"; do
    case "$arg" in
      --log_dir | --log_dir=* | --log_root | --log_root=* | --resume | --resume=*)
        die "train.py's $arg is set by the job (use --run / --log_root / --resume)" ;;
      --max_iterations | --max_iterations=*)
        [ -z "$OPT_TOTAL" ] || die "give either --total_iterations or train.py's --max_iterations, not both" ;;
      --distributed) die "--distributed is added by the job when --gpus > 1" ;;
    esac
  done
  RUN_DIR="$OPT_LOG_ROOT/$OPT_RUN"
  RESUME_FROM=""
  case "$OPT_RESUME" in
    '' | auto) ;;
    *) RESUME_FROM=$OPT_RESUME ;;
  esac
  # A submission (not a dry run) sees the shared file system: refuse to mix a fresh run into an old one.
  if [ "$OPT_DRY_RUN" = 0 ]; then
    [ -z "$RESUME_FROM" ] || [ -f "$RESUME_FROM" ] || die "--resume: no checkpoint file '$RESUME_FROM'"
    if [ -z "$OPT_RESUME" ] && compgen -G "$RUN_DIR/model_*.pt" > /dev/null; then
      die "$RUN_DIR already holds checkpoints: pass --resume auto to continue it, or choose another --run"
    fi
  fi
}

walltime_seconds() {
  local h m s
  IFS=: read -r h m s <<< "$1"
  case "$h$m$s" in '' | *[!0-9]*) return 1 ;; esac
  [ ${#m} -eq 2 ] && [ ${#s} -eq 2 ] || return 1
  [ $((10#$m)) -lt 60 ] && [ $((10#$s)) -lt 60 ] || return 1  # minutes and seconds of a duration
  [ $((10#$h * 3600 + 10#$m * 60 + 10#$s)) -gt 0 ] || return 1
  echo $((10#$h * 3600 + 10#$m * 60 + 10#$s))
}

# Bash-quotes each argument (printf %q) on one line.
quote_args() {
  local out="" arg
  for arg in "$@"; do out+=" $(printf '%q' "$arg")"; done
  echo "${out# }"
}

# The job script after the scheduler's directives: setup, then $1 (the scheduler's SIGTERM handling, which sets
# interrupted=1 when the training was told to stop), the training in the background, $2 (run once the
# training's pid is in $child), the wait, $3 (run once the training has exited) and $4 (requeues the job; run
# after a stop on SIGTERM with --requeue).
render_job_body() {
  render_setup
  echo
  echo "$1"
  render_launch
  [ -z "$2" ] || echo "$2"
  render_wait_and_requeue "$3" "$4"
}

render_setup() {
  cat <<EOF
set -uo pipefail

image=$(printf '%q' "$OPT_IMAGE")
run_dir=$(printf '%q' "$RUN_DIR")
cache_dir=$(printf '%q' "$OPT_CACHE_DIR")
resume_from=$(printf '%q' "$RESUME_FROM")   # a checkpoint to start from when the run directory has none
total_iterations=$(printf '%q' "$OPT_TOTAL")
num_gpus=$OPT_GPUS
requeue=$OPT_REQUEUE
train_args=($(quote_args "${TRAIN_ARGS[@]}"))

# Newest model_<iteration>.pt in a directory (by iteration), or nothing.
newest_checkpoint() {
  local f it best="" best_it=-1
  for f in "\$1"/model_*.pt; do
    [ -f "\$f" ] || continue
    it=\${f##*/model_}; it=\${it%.pt}; it=\${it%_interrupted}
    case "\$it" in '' | *[!0-9]*) continue ;; esac
    if [ "\$it" -gt "\$best_it" ]; then best_it=\$it; best=\$f; fi
  done
  printf '%s' "\$best"
}

mkdir -p "\$run_dir" "\$cache_dir"
# Seed the shared cache with the image's warmed Warp CPU kernels and ANYmal C USD (missing files only); CUDA
# kernels compiled by a job stay there for the next one.
apptainer exec --bind "\$cache_dir" "\$image" cp -r --update=none $IMAGE_CACHE_DIR/. "\$cache_dir/" \\
  || echo "[job] warning: could not seed \$cache_dir from the image; kernels compile on first use"

# Resume: the run's own newest checkpoint (a requeued or resubmitted job), else --resume's file.
checkpoint=\$(newest_checkpoint "\$run_dir")
[ -n "\$checkpoint" ] || checkpoint=\$resume_from
args=(--log_dir "\$run_dir")
binds=(--bind "\$run_dir" --bind "\$cache_dir")
done_iterations=0
if [ -n "\$checkpoint" ]; then
  args+=(--resume "\$checkpoint")
  [ "\$(dirname "\$checkpoint")" = "\$run_dir" ] || binds+=(--bind "\$(dirname "\$checkpoint")")
  done_iterations=\${checkpoint##*/model_}; done_iterations=\${done_iterations%.pt}
  done_iterations=\${done_iterations%_interrupted}
  case "\$done_iterations" in '' | *[!0-9]*) done_iterations=0 ;; esac
  echo "[job] resuming from \$checkpoint (iteration \$done_iterations)"
fi
if [ -n "\$total_iterations" ]; then
  left=\$((total_iterations - done_iterations))
  if [ "\$left" -le 0 ]; then
    echo "[job] \$run_dir is at iteration \$done_iterations of \$total_iterations: nothing left to train"
    exit 0
  fi
  args+=(--max_iterations "\$total_iterations")  # train.py finishes the run: max_iterations counts in total
fi
if [ "\$num_gpus" -gt 1 ]; then
  launcher=(torchrun --standalone --nnodes 1 --nproc_per_node "\$num_gpus" scripts/train.py --distributed)
else
  launcher=(python scripts/train.py)
fi
# --cleanenv keeps the host's environment out of the container; pass what the container needs.
container_env=(--env PYTHONNOUSERSITE=1 --env "WARP_CACHE_PATH=\$cache_dir/warp"
  --env "ISAACLAB_DIFFSIM_ASSET_DIR=\$cache_dir/assets")
[ -z "\${CUDA_VISIBLE_DEVICES:-}" ] || container_env+=(--env "CUDA_VISIBLE_DEVICES=\$CUDA_VISIBLE_DEVICES")
EOF
}

render_launch() {
  cat <<EOF

# The training runs in the background so that this shell can handle the scheduler's SIGTERM.
apptainer exec --nv --cleanenv --pwd $IMAGE_REPO_DIR "\${binds[@]}" "\${container_env[@]}" \\
  "\$image" "\${launcher[@]}" --device cuda "\${train_args[@]}" "\${args[@]}" &
child=\$!
EOF
}

# Waits for the training, runs $1, and after a stop on SIGTERM (interrupted=1) reports the checkpoint and runs $2.
render_wait_and_requeue() {
  cat <<EOF
wait "\$child"
status=\$?
while kill -0 "\$child" 2> /dev/null; do  # wait returns early when a trap runs
  wait "\$child"
  status=\$?
done
EOF
  [ -z "$1" ] || echo "$1"
  cat <<EOF
if [ "\$interrupted" = 1 ]; then
  echo "[job] training stopped on SIGTERM (exit \$status); newest checkpoint: \$(newest_checkpoint "\$run_dir")"
  if [ "\$requeue" = 1 ]; then
    $2
  fi
fi
exit "\$status"
EOF
}
