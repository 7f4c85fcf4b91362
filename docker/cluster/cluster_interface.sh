#!/usr/bin/env bash
# Run on the workstation that built the docker image:
#   cluster_interface.sh push             convert the docker image to an apptainer image and copy it to the cluster
#   cluster_interface.sh job [options]    copy docker/cluster/ to the login node and submit one training run there
#                                         (options: see submit_job_slurm.sh --help; --dry-run prints the job script)
# Settings come from docker/cluster/.env.cluster.
set -euo pipefail
cluster_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=.env.cluster
. "${CLUSTER_ENV_FILE:-$cluster_dir/.env.cluster}"
image_tag=${IMAGE_TAG:-isaaclab_diffsim:latest}

die() {
  echo "error: $*" >&2
  exit 2
}

push() {
  command -v apptainer > /dev/null || die "apptainer is not installed (https://apptainer.org/docs/admin/main/installation.html)"
  docker image inspect "$image_tag" > /dev/null 2>&1 \
    || die "no docker image $image_tag: build it with docker build -f docker/Dockerfile -t $image_tag ."
  local out
  out="$(mktemp -d)"
  echo "[push] converting $image_tag to $out/isaaclab_diffsim.sif"
  apptainer build "$out/isaaclab_diffsim.sif" "docker-daemon://$image_tag"
  ssh "$CLUSTER_LOGIN" "mkdir -p '$CLUSTER_SIF_PATH'"
  scp "$out/isaaclab_diffsim.sif" "$CLUSTER_LOGIN:$CLUSTER_SIF_PATH/isaaclab_diffsim.sif"
  rm -rf "$out"
}

job() {
  local script
  case "$CLUSTER_JOB_SCHEDULER" in
    SLURM) script=submit_job_slurm.sh ;;
    PBS) script=submit_job_pbs.sh ;;
    *) die "CLUSTER_JOB_SCHEDULER must be SLURM or PBS, got '$CLUSTER_JOB_SCHEDULER'" ;;
  esac
  local arg
  for arg in "$@"; do
    [ "$arg" = "--" ] && break
    case "$arg" in  # answered here: nothing to submit, so no connection to the login node
      --dry-run | -h | --help) bash "$cluster_dir/$script" "$@"; return ;;
    esac
  done
  ssh "$CLUSTER_LOGIN" "mkdir -p '$CLUSTER_SCRIPTS_DIR'"
  rsync -a "$cluster_dir/" "$CLUSTER_LOGIN:$CLUSTER_SCRIPTS_DIR/"
  local quoted
  quoted="$(printf ' %q' "$@")"
  # shellcheck disable=SC2029  # expanded here on purpose: the arguments are quoted for the remote shell
  ssh "$CLUSTER_LOGIN" "bash '$CLUSTER_SCRIPTS_DIR/$script'$quoted"
}

[ $# -ge 1 ] || die "usage: $(basename "$0") push | job [submit options] [-- train.py arguments]"
command=$1
shift
case "$command" in
  push) [ $# -eq 0 ] || die "push takes no arguments"; push ;;
  job) job "$@" ;;
  -h | --help) sed -n '2,6p' "$0" ;;
  *) die "unknown command '$command' (push or job)" ;;
esac
