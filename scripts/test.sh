#!/usr/bin/env bash
# Test suite: set up .venv if needed, then run pytest on tests/ (extra args go to pytest; --runslow adds the slow tests).
set -euo pipefail
source "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/setup_env.sh"  # also cds to the repo root
exec .venv/bin/python -m pytest tests -q "$@"  # no -x: report every failure
