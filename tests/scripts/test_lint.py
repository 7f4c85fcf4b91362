"""The code is ruff-clean: lint rules and formatting as configured in the root pyproject.toml."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PATHS = ["source", "scripts", "tests", "exts"]


def ruff(*args: str) -> subprocess.CompletedProcess:
    exe = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff")
    if exe is None:
        pytest.fail("ruff is not installed: it is a test dependency (pip install -e 'source/isaaclab_diffsim[test]')")
    return subprocess.run([exe, *args, *PATHS], cwd=ROOT, capture_output=True, text=True, timeout=300)


@pytest.mark.integration
def test_ruff_check_is_clean():
    proc = ruff("check", "--no-cache")
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]


@pytest.mark.integration
def test_ruff_format_is_clean():
    proc = ruff("format", "--check", "--no-cache")
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
