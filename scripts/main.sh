#!/usr/bin/env bash
# Main job: set up .venv if needed, then run the experiments that reproduce the paper's claims.
set -euo pipefail
source "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/setup_env.sh"  # also cds to the repo root
.venv/bin/python scripts/experiments/falling_mass.py
.venv/bin/python scripts/experiments/anymal_drop.py
