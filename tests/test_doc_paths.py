"""The docs name only module paths and files that exist: every ``isaaclab_diffsim.<module>[.<name>]`` in README.md and
docs/*.md resolves to a module of the package (and ``<name>`` to a name in it), and every path under ``source/``,
``scripts/`` or the package's own folders (``tasks/...``, ``rl/...``) is a file or folder of the repository."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "source" / "isaaclab_diffsim" / "isaaclab_diffsim"
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
MODULE = re.compile(r"\bisaaclab_diffsim(?:\.[A-Za-z_]\w*)+")
PATH = re.compile(r"(?<![\w./-])((?:source|scripts)/[\w./-]*|[a-z_]+/[\w./-]*\.(?:py|sh|md))")
PACKAGE_PATH = re.compile(r"`([a-z_]+(?:/[\w.-]+)+/?)`")
PLACEHOLDER = re.compile(r"[<>*{}]|\.\.\.")


def module_file(parts: list[str]) -> Path | None:
    """The file of module ``isaaclab_diffsim.<parts>`` (a package's ``__init__.py``), or None."""
    base = PACKAGE.joinpath(*parts)
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def stale_module(dotted: str) -> str | None:
    """Why ``dotted`` does not resolve (None if it does): its longest prefix that is a module must be followed by at
    most an attribute path whose first name occurs in that module."""
    parts = dotted.split(".")[1:]
    for n in range(len(parts), -1, -1):
        path = module_file(parts[:n])
        if path is None:
            continue
        rest = parts[n:]
        if not rest or re.search(rf"\b{re.escape(rest[0])}\b", path.read_text()):
            return None
        return f"{dotted}: no {rest[0]!r} in {path.relative_to(ROOT)}"
    return f"{dotted}: no such module"


def stale_path(path: str) -> str | None:
    """Why ``path`` names nothing (None if it names a file or folder, or a name in a module: ``assets/robots.ROBOTS``)
    from the repository, the distribution or the package root; paths with placeholders are not checked."""
    path = path.rstrip(".,;:)")
    if PLACEHOLDER.search(path):
        return None
    module = path.rsplit(".", 1)[0] + ".py"
    for base in (ROOT, ROOT / "source" / "isaaclab_diffsim", PACKAGE):
        if (base / path).exists() or (base / module).is_file():
            return None
    return f"{path}: no such file or folder"


def stale_references(text: str) -> list[str]:
    found = [stale_module(m.group(0).rstrip(".")) for m in MODULE.finditer(text)]
    found += [stale_path(m.group(1)) for m in PATH.finditer(text)]
    for m in PACKAGE_PATH.finditer(text):
        top = m.group(1).split("/")[0]
        if (PACKAGE / top).is_dir():  # a path inside the package, written from its root (``tasks/direct/...``)
            found.append(stale_path(m.group(1)))
    return sorted({f for f in found if f})


def test_docs_name_existing_modules_and_files():
    stale = {doc.relative_to(ROOT).as_posix(): stale_references(doc.read_text()) for doc in DOCS}
    stale = {doc: refs for doc, refs in stale.items() if refs}
    assert stale == {}, stale


def test_the_check_finds_stale_references():
    text = (
        "`isaaclab_diffsim.tasks.direct.anymal_c.DiffVelocityEnv`, `isaaclab_diffsim.rl.shac.shac.NoSuchClass`, "
        "`scripts/no_such_script.py`, `tasks/direct/quadrupeds/`, and fine: `isaaclab_diffsim.rl.shac.SHAC`, "
        "`scripts/train.py`, `tasks/direct/locomotion/velocity/mdp/`, `logs/<run>/model_1.pt`"
    )
    assert stale_references(text) == [
        "isaaclab_diffsim.rl.shac.shac.NoSuchClass: no 'NoSuchClass' in "
        "source/isaaclab_diffsim/isaaclab_diffsim/rl/shac/shac.py",
        "isaaclab_diffsim.tasks.direct.anymal_c.DiffVelocityEnv: no 'anymal_c' in "
        "source/isaaclab_diffsim/isaaclab_diffsim/tasks/direct/__init__.py",
        "scripts/no_such_script.py: no such file or folder",
        "tasks/direct/quadrupeds/: no such file or folder",
    ]
