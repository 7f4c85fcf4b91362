"""docker/Dockerfile and .dockerignore: the build context holds the sources only (a matcher with Docker's
.dockerignore rules over the real tree and a synthetic one), and the Dockerfile parses (Docker's own Go parser,
through the ``dockerfile`` package) into the instructions the image needs. Building the image needs a Docker
daemon, which these tests do not assume; the RUN steps that need no daemon are run here."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path

import dockerfile
import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCKERFILE = ROOT / "docker" / "Dockerfile"
INSTRUCTIONS = {
    "FROM",
    "ARG",
    "ENV",
    "RUN",
    "COPY",
    "ADD",
    "WORKDIR",
    "USER",
    "SHELL",
    "ENTRYPOINT",
    "CMD",
    "LABEL",
    "EXPOSE",
    "VOLUME",
    "HEALTHCHECK",
    "STOPSIGNAL",
    "ONBUILD",
}
MAX_CONTEXT_BYTES = 5 * 2**20


# ------------------------------------------------------------------ .dockerignore


def _pattern_regex(pattern: str) -> re.Pattern:
    """Docker's .dockerignore pattern (Go filepath.Match plus ``**``) as a regex over '/'-separated paths."""
    out, i = "", 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out, i = out + "(?:.*/)?", i + 3
        elif pattern.startswith("**", i):
            out, i = out + ".*", i + 2
        elif pattern[i] == "*":
            out, i = out + "[^/]*", i + 1
        elif pattern[i] == "?":
            out, i = out + "[^/]", i + 1
        elif pattern[i] == "[":
            j = pattern.index("]", i)
            out, i = out + pattern[i : j + 1].replace("[!", "[^"), j + 1
        else:
            out, i = out + re.escape(pattern[i]), i + 1
    return re.compile(out + r"\Z")


def load_dockerignore(path: Path) -> list[tuple[re.Pattern, bool]]:
    return parse_rules(path.read_text().splitlines())


def parse_rules(lines: list[str]) -> list[tuple[re.Pattern, bool]]:
    """(regex, is_negation) per pattern line; blank lines and comments skipped."""
    rules = []
    for line in lines:
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        negate = line.startswith("!")
        pattern = os.path.normpath(line.lstrip("!").strip()).lstrip("/")
        rules.append((_pattern_regex(pattern), negate))
    return rules


def excluded(rel: str, rules) -> bool:
    """Docker's rule: the last pattern matching the path, or one of its parent folders, decides."""
    parts = rel.split("/")
    prefixes = ["/".join(parts[: k + 1]) for k in range(len(parts))]
    result = False
    for regex, negate in rules:
        if any(regex.match(p) for p in prefixes):
            result = not negate
    return result


def build_context(root: Path, rules) -> dict[str, int]:
    """Files (relative path -> size) that ``docker build`` would send from ``root``."""
    assert not any(negate for _, negate in rules), "pruning excluded folders assumes no '!' re-inclusions"
    files = {}
    for folder, dirs, names in os.walk(root):
        rel_dir = os.path.relpath(folder, root)
        rel = (lambda n: n) if rel_dir == "." else (lambda n, d=rel_dir: f"{d}/{n}")
        dirs[:] = [d for d in dirs if not excluded(rel(d), rules)]
        for n in names:
            if not excluded(rel(n), rules) and os.path.isfile(os.path.join(folder, n)):
                files[rel(n)] = os.path.getsize(os.path.join(folder, n))
    return files


def test_matcher_follows_docker_rules():
    rules = parse_rules(["# comment", "logs/", "**/.cache", "", "*.md", "!README.md"])
    assert excluded("logs/shac/model_1.pt", rules) and not excluded("source/logs/x", rules)  # root-relative
    assert excluded(".cache/warp/a.o", rules) and excluded("a/b/.cache/x", rules)
    assert excluded("notes.md", rules) and not excluded("README.md", rules) and not excluded("docs/x.md", rules)


def test_dockerignore_keeps_heavy_and_generated_files_out(tmp_path):
    heavy = [
        ".venv/lib/python3.12/site-packages/torch/lib/libtorch.so",
        ".cache/warp/wp_mod/a.o",
        ".cache/assets/anymal_c/anymal_c.usda",
        "logs/shac/anymal/2024/model_100.pt",
        "outputs/run/x.json",
        "results/table1/summary.json",
        ".git/objects/ab/cdef",
        "source/isaaclab_diffsim/build/lib/x.py",
        "source/isaaclab_diffsim/isaaclab_diffsim/__pycache__/m.cpython-312.pyc",
        "source/isaaclab_diffsim/isaaclab_diffsim.egg-info/PKG-INFO",
        "exported/policy.onnx",
        "tests/.pytest_cache/v/x",
        "docker/cluster/submit_job_slurm.sh",
        "worktrees/wt1/README.md",
    ]
    needed = [
        "source/isaaclab_diffsim/pyproject.toml",
        "source/isaaclab_diffsim/docs/README.md",
        "source/isaaclab_diffsim/isaaclab_diffsim/solver/moreau.py",
        "scripts/train.py",
        "configs/run.yaml",
        "tests/test_shac.py",
        "docker/Dockerfile",
        "README.md",
    ]
    for rel in heavy + needed:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("x")
    context = build_context(tmp_path, load_dockerignore(ROOT / ".dockerignore"))
    assert sorted(context) == sorted(needed)


def test_build_context_of_this_checkout_is_small():
    rules = load_dockerignore(ROOT / ".dockerignore")
    context = build_context(ROOT, rules)
    total = sum(context.values())
    assert total < MAX_CONTEXT_BYTES, f"build context {total / 2**20:.1f} MiB: {sorted(context, key=context.get)[-5:]}"
    # what the Dockerfile copies and runs is in the context
    for rel in ("source/isaaclab_diffsim/pyproject.toml", "source/isaaclab_diffsim/docs/README.md", "scripts/train.py"):
        assert rel in context


# ------------------------------------------------------------------ Dockerfile


def parse() -> list:
    return list(dockerfile.parse_file(str(DOCKERFILE)))


def check_instructions(commands) -> None:
    """What Docker's Go parser accepts but a build rejects: unknown instructions, missing arguments."""
    for c in commands:
        where = f"line {c.start_line}: {c.original}"
        assert c.cmd.upper() in INSTRUCTIONS, f"unknown instruction, {where}"
        assert c.value and all(v != "" for v in c.value[:1]), f"no arguments, {where}"
        if c.cmd.upper() in ("ENTRYPOINT", "CMD"):
            assert c.json, f"use the exec (JSON) form, {where}"
        if c.cmd.upper() == "COPY":
            assert len(c.value) >= 2, f"COPY needs a source and a destination, {where}"
        if c.cmd.upper() == "ENV":
            assert len(c.value) % 2 == 0, f"ENV needs key=value pairs, {where}"
    assert commands[0].cmd.upper() in ("FROM", "ARG")


@pytest.mark.parametrize(
    "text",
    [
        "FROM ubuntu:24.04\nFOO bar\n",
        "FROM ubuntu:24.04\nRUN\n",
        "FROM ubuntu:24.04\nENTRYPOINT python train.py\n",
        "FROM a\nCOPY x\n",
    ],
)
def test_instruction_check_rejects_broken_dockerfiles(text):
    with pytest.raises(AssertionError):
        check_instructions(list(dockerfile.parse_string(text)))


def test_dockerfile_parses_with_expected_instructions():
    commands = parse()
    check_instructions(commands)
    by = lambda name: [c for c in commands if c.cmd.upper() == name]  # noqa: E731
    args = dict(a.value[0].split("=", 1) for a in by("ARG"))
    (base,) = by("FROM")
    image = re.sub(r"\$\{(\w+)\}", lambda m: args[m.group(1)], base.value[0])
    assert re.fullmatch(r"nvidia/cuda:\d+\.\d+\.\d+-(base|runtime|devel)-ubuntu24\.04", image), image
    env = {}
    for c in by("ENV"):
        env.update(zip(c.value[::2], c.value[1::2]))
    for key in ("WARP_CACHE_PATH", "ISAACLAB_DIFFSIM_ASSET_DIR", "VIRTUAL_ENV"):
        assert env[key].startswith("/opt/"), "caches and venv live outside the (bind-mountable) source tree"
    assert env["PATH"].startswith("${VIRTUAL_ENV}/bin:")
    runs = [c.value[0] for c in by("RUN")]
    install = next(i for i, r in enumerate(runs) if "python3.12 -m venv" in r)
    assert "python3.12" in shlex.split(runs[install])  # Ubuntu 24.04's Python 3.12
    package = next(i for i, r in enumerate(runs) if "pip install --no-deps -e source/isaaclab_diffsim" in r)
    asset = next(i for i, r in enumerate(runs) if "anymal_c_usd_path()" in r)
    warm = next(i for i, r in enumerate(runs) if r.startswith("python scripts/train.py"))
    assert install < package < asset < warm
    assert "--device cpu" in runs[warm]
    (entry,) = by("ENTRYPOINT")
    assert entry.value == ("python", "scripts/train.py")
    assert [c.value for c in by("USER")] == [("isaaclab",)]


def run_step(command: str, tmp_path) -> subprocess.CompletedProcess:
    """A Dockerfile RUN command run here from the repository root, ``python`` being this interpreter."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    (bin_dir / "python").write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    (bin_dir / "python").chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"}
    return subprocess.run(
        ["bash", "-o", "pipefail", "-c", command], cwd=ROOT, env=env, capture_output=True, text=True, timeout=1200
    )


@pytest.mark.integration
def test_requirements_step_lists_pyproject_dependencies(tmp_path):
    runs = [c.value[0] for c in parse() if c.cmd.upper() == "RUN"]
    step = next(r for r in runs if "tomllib" in r)
    extract = step.split(" > /tmp/requirements.txt")[0]
    proc = run_step(extract, tmp_path)
    assert proc.returncode == 0, proc.stderr
    project = tomllib.loads((ROOT / "source/isaaclab_diffsim/pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"]
    assert proc.stdout.splitlines() == project["dependencies"] + extras["test"] + extras["leapp"]


@pytest.mark.integration
def test_asset_step_builds_the_anymal_usd(tmp_path):
    runs = [c.value[0] for c in parse() if c.cmd.upper() == "RUN"]
    proc = run_step(next(r for r in runs if "anymal_c_usd_path()" in r), tmp_path)
    assert proc.returncode == 0, proc.stderr
    usd = Path(proc.stdout.strip().splitlines()[-1])
    assert usd.name == "anymal_c.usda" and usd.is_file()


@pytest.mark.integration
@pytest.mark.slow
def test_kernel_warm_step_runs_the_entrypoint(tmp_path):
    runs = [c.value[0] for c in parse() if c.cmd.upper() == "RUN"]
    step = next(r for r in runs if r.startswith("python scripts/train.py"))
    proc = run_step(step.replace("/tmp/warmup", str(tmp_path / "warmup")), tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "[eval] hard contact" in proc.stdout
    assert not (tmp_path / "warmup").exists()


@pytest.mark.integration
@pytest.mark.slow
def test_leapp_step_exports_and_deploys_a_tiny_policy(tmp_path):
    pytest.importorskip("leapp")
    runs = [c.value[0] for c in parse() if c.cmd.upper() == "RUN"]
    step = next(r for r in runs if "--format leapp" in r)
    proc = run_step(step.replace("/tmp/leapp_smoke", str(tmp_path / "leapp_smoke")), tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert '"episodes": 1' in proc.stdout and '"finite": true' in proc.stdout, proc.stdout[-2000:]
    assert not (tmp_path / "leapp_smoke").exists()
