#!/usr/bin/env bash
# Create (or reuse) the project's virtual environment in .venv and install what is missing.
# Run it (bash scripts/setup_env.sh) or source it (also exports WARP_CACHE_PATH and cds to the repo).
# Idempotent and fast once installed: a stamp file records the hash of the dependency spec.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

is_py312() { "$1" -c 'import sys; assert sys.version_info[:2] == (3, 12)' >/dev/null 2>&1; }

find_python() {
  local cand
  for cand in "${PYTHON:-}" /root/.pyenv/versions/3.12*/bin/python3.12 \
      /usr/local/bin/python3.12 /usr/bin/python3.12 python3.12 python3; do
    [ -n "$cand" ] && is_py312 "$cand" && { command -v "$cand"; return 0; }
  done
  return 1
}

# (Re)create the venv when it is missing or its interpreter no longer runs (e.g. copied machine).
if ! is_py312 .venv/bin/python; then
  py="$(find_python)" || { echo "error: Python 3.12 is required (isaaclab==3.0.0); set PYTHON=/path/to/python3.12" >&2; exit 1; }
  echo "[setup] creating .venv with $py"
  rm -rf .venv
  "$py" -m venv .venv
  .venv/bin/python -m pip install --quiet --upgrade pip
fi

stamp=.venv/.isaaclab_diffsim_installed
want="$(cat source/isaaclab_diffsim/pyproject.toml | sha256sum | cut -d' ' -f1)"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  echo "[setup] installing isaaclab_diffsim[test,leapp] and its dependencies (first run: several minutes, ~8 GB)"
  .venv/bin/python -m pip install --quiet --progress-bar off -e "source/isaaclab_diffsim[test,leapp]"
  echo "$want" > "$stamp"
fi

export WARP_CACHE_PATH="${WARP_CACHE_PATH:-$root/.cache/warp}"
mkdir -p "$WARP_CACHE_PATH"
# the ANYmal C USD and ground plane are generated here on first use (no downloads)
export ISAACLAB_DIFFSIM_ASSET_DIR="${ISAACLAB_DIFFSIM_ASSET_DIR:-$root/.cache/assets}"
