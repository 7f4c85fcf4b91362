"""The CI entry point runs the whole suite and reports every failure (pytest without -x / --exitfirst / --maxfail)."""

import shlex
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_test_script_does_not_stop_at_first_failure():
    for path in (ROOT / "scripts" / "test.sh", ROOT / ".ci" / "run", ROOT / "pytest.ini"):
        for line in path.read_text().splitlines():
            code = line.split("#", 1)[0]
            words = shlex.split(code) if code.strip() else []
            assert not any(w in ("-x", "--exitfirst") or w.startswith("--maxfail") for w in words), (path, line)
    assert "scripts/test.sh" in (ROOT / ".ci" / "run").read_text()
