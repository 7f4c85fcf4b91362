#!/usr/bin/env bash
# Before/after on the same machine at the same time: runs the three throughput benchmarks, this checkout's
# shac_iteration.py and a 30-iteration main job in two checkouts, alternating, ROUNDS times; prints each run's
# summary lines. Raw outputs go to OUT.
#   bash scripts/benchmarks/compare_checkouts.sh BEFORE_DIR AFTER_DIR [ROUNDS] [OUT]
# Both checkouts run with this checkout's .venv (PYTHONPATH selects the package source of each).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BEFORE=$(cd "$1" && pwd); AFTER=$(cd "$2" && pwd); ROUNDS=${3:-2}; OUT=${4:-$ROOT/logs/compare_checkouts}
PY="$ROOT/.venv/bin/python"
export WARP_CACHE_PATH="${WARP_CACHE_PATH:-$ROOT/.cache/warp}" ISAACLAB_DIFFSIM_ASSET_DIR="${ISAACLAB_DIFFSIM_ASSET_DIR:-$ROOT/.cache/assets}"
mkdir -p "$OUT"
for r in $(seq 1 "$ROUNDS"); do
  for side in before after; do
    if [ "$side" = before ]; then dir=$BEFORE; else dir=$AFTER; fi
    echo "== round $r, $side ($dir at $(git -C "$dir" rev-parse --short HEAD)), $(date +%T), load $(cut -d' ' -f1 /proc/loadavg)"
    cd "$dir"
    export PYTHONPATH="$dir/source/isaaclab_diffsim"
    "$PY" scripts/benchmarks/env_throughput.py --envs 64,256 > "$OUT/env_${side}_$r.txt" 2>&1
    "$PY" scripts/benchmarks/isaaclab_throughput.py --envs 64,256 > "$OUT/isaaclab_${side}_$r.txt" 2>&1
    OMP_NUM_THREADS=1 "$PY" scripts/benchmarks/isaaclab_throughput.py --envs 64,256 --presets diffsim_smoothed \
      > "$OUT/isaaclab1t_${side}_$r.txt" 2>&1
    "$PY" scripts/benchmarks/solver_throughput.py --worlds 256 > "$OUT/solver_${side}_$r.txt" 2>&1
    "$PY" "$ROOT/scripts/benchmarks/shac_iteration.py" > "$OUT/shac_iteration_${side}_$r.txt" 2>&1
    "$PY" scripts/train.py --task DiffSim-Velocity-Flat-AnymalC-Direct --algo shac --max_iterations 30 \
      --eval_episodes 0 --log_root "$OUT/mainjob_$side" > "$OUT/mainjob_${side}_$r.txt" 2>&1
    grep -E "^ +urdf +(64|256) " "$OUT/env_${side}_$r.txt" | sed 's/^/  env fwd, fwd+bwd, solver-only: /'
    grep -A3 "^DiffSim-Velocity" "$OUT/isaaclab_${side}_$r.txt" | grep -E "^ +(64|256) " | sed 's/^/  isaaclab task: /'
    grep -A3 "^DiffSim-Velocity" "$OUT/isaaclab1t_${side}_$r.txt" | grep -E "^ +(64|256) " | sed 's/^/  isaaclab task, 1 torch thread: /'
    grep SUMMARY "$OUT/solver_${side}_$r.txt" | sed 's/^/  /'
    grep -E "^  (iteration / untaped|iteration  )" "$OUT/shac_iteration_${side}_$r.txt" | sed 's/^/  shac_iteration.py:/'
    "$PY" - "$OUT/mainjob_${side}_$r.txt" <<'PYEOF'
import re, sys
t = [sum(map(float, m.groups())) for m in (re.search(r"fwd ([\d.]+) s bwd ([\d.]+) s upd ([\d.]+) s", l)
     for l in open(sys.argv[1])) if m]
print(f"  main job: {len(t)} iterations, {60 * len(t) / sum(t):.0f} iterations/min (fwd + bwd + update times)")
PYEOF
  done
done
