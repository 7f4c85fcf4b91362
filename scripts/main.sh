#!/usr/bin/env bash
# Main job: set up .venv if needed, then train ANYmal C with SHAC on the differentiable simulator
# (smoothed contact, no trajectory generator, omnidirectional and standing commands; 1024 envs, 1000 iterations of
# horizon 12), export the policy (ONNX + TorchScript) and evaluate it in hard contact over 64 episodes. Extra
# arguments go to scripts/train.py (e.g. --max_iterations 50; --task DiffSim-Velocity-Flat-AnymalC-Trot-Direct for
# the quick trot-generator recipe). On the 2 cores it is sized for, the physics steps the two halves of
# the envs on two threads and differentiates them on one, beside SHAC's critic fit in its own process (the
# results are bitwise those of one thread).
set -euo pipefail
source "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/setup_env.sh"  # also cds to the repo root
exec .venv/bin/python scripts/train.py --task DiffSim-Velocity-Flat-AnymalC-Direct --algo shac \
    env.solver_cfg.threads=2 env.solver_cfg.parallel_backward=false "$@"
