"""The ANYmal C USD cache under concurrent first use: two processes build it once and both get a valid asset."""

import json
import os
import subprocess
import sys
import time

import pytest

CHILD = """
import json, sys, time
start = float(sys.argv[2])
from isaaclab_diffsim.assets.anymal_c_usd import anymal_c_usd_path, _cache_problem, _fingerprint
from isaaclab_diffsim.assets.anymal_c import anymal_c_urdf_path
while time.time() < start:
    time.sleep(0.001)
path = anymal_c_usd_path(cache_dir=sys.argv[1])
manifest = json.loads((path.parent / "manifest.json").read_text())
problem = _cache_problem(path.parent, _fingerprint(anymal_c_urdf_path()))
print(json.dumps({"path": str(path), "built_by": manifest["built_by_pid"], "problem": problem}))
"""


@pytest.mark.integration
def test_two_processes_build_the_cache_once(tmp_path):
    env = os.environ.copy()
    start = time.time() + 8.0  # both import first, then call at the same moment
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", CHILD, str(tmp_path), str(start)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for _ in range(2)
    ]
    results = []
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err[-3000:]
        results.append(json.loads(out.strip().splitlines()[-1]))
    pids = {p.pid for p in procs}
    assert results[0]["path"] == results[1]["path"]
    assert results[0]["problem"] is None and results[1]["problem"] is None
    # one build: both processes read the manifest of the same builder, one of them
    assert results[0]["built_by"] == results[1]["built_by"] and results[0]["built_by"] in pids
    leftovers = [p.name for p in tmp_path.iterdir() if p.name not in ("anymal_c", "anymal_c.lock")]
    assert len(leftovers) == 1 and (tmp_path / "anymal_c").is_symlink(), leftovers  # the published build only


def test_an_unwritable_cache_names_the_variable_to_set(tmp_path, monkeypatch):
    from isaaclab_diffsim.assets.anymal_c_usd import AssetCacheError, anymal_c_usd_path
    from isaaclab_diffsim.assets.ground_plane import ground_plane_usd_path

    blocker = tmp_path / "a_file"
    blocker.write_text("")  # a folder below a file cannot be created (a read-only cache, also as root)
    monkeypatch.setenv("ISAACLAB_DIFFSIM_ASSET_DIR", str(blocker / "assets"))
    for build in (ground_plane_usd_path, anymal_c_usd_path):
        with pytest.raises(AssetCacheError, match="set ISAACLAB_DIFFSIM_ASSET_DIR to a writable folder"):
            build()
