"""The package's layers import in one direction and no module imports itself back through others (imports inside
functions count too)."""

import ast
from collections import defaultdict
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "source" / "isaaclab_diffsim" / "isaaclab_diffsim"
LAYERS = [
    "utils",
    "solver",
    "bridge",
    "physics",
    "assets",
    "terrains",
    "envs",
    "recording",
    "deploy",
    "rl",
    "tasks",
    "diagnostics",
    "experiments",
]
"""Lowest first: a module may import from its own layer and the layers before it."""
RANK = {name: i for i, name in enumerate(LAYERS)}
RANK["assets"] = RANK["physics"]  # independent of each other


def modules() -> dict[str, Path]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return out


def imports(mods: dict[str, Path]) -> dict[str, set[str]]:
    graph = defaultdict(set)
    for mod, path in mods.items():
        package = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                base = package.split(".")[: len(package.split(".")) - node.level + 1] if node.level else []
                name = ".".join(base + ([node.module] if node.module else []))
                targets = [name] + [f"{name}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            else:
                continue
            graph[mod] |= {t for t in targets if t in mods and t != mod and not mod.startswith(t + ".")}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on, found, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in list(graph):
        if v not in index:
            visit(v)
    return found


def layer(mod: str) -> str:
    return mod.split(".")[1] if mod.count(".") else ""


def test_no_import_cycles():
    assert cycles(imports(modules())) == []


def test_layers_import_downwards_only():
    mods = modules()
    assert {layer(m) for m in mods} - {""} <= set(RANK), "a new subpackage needs a place in LAYERS"
    upward = sorted(
        f"{a} -> {b}"
        for a, targets in imports(mods).items()
        for b in targets
        if layer(a) and layer(b) and layer(a) != layer(b) and RANK[layer(b)] >= RANK[layer(a)]
    )
    assert upward == [], upward


def test_the_solver_imports_no_isaac_lab_and_no_torch():
    for path in (PACKAGE / "solver").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and not node.level:
                names = [node.module or ""]
            bad = [n for n in names if n.split(".")[0] in ("torch", "isaaclab", "isaaclab_newton", "isaaclab_tasks")]
            assert not bad, f"{path.name} imports {bad}"


def test_the_generic_velocity_task_imports_no_robot_folder():
    """The generic differentiable velocity env, its config, recipes and ``mdp/`` import nothing from
    ``config/<robot>/``: robot-specific choices live in the robot's folder (or its ``DiffRobotCfg``), which imports
    the generic code, never the other way round."""
    generic = "isaaclab_diffsim.tasks.direct.locomotion.velocity"
    robots = f"{generic}.config"
    graph = imports(modules())
    upward = sorted(
        f"{a} -> {b}"
        for a, targets in graph.items()
        if a.startswith(generic) and not a.startswith(robots)
        for b in targets
        if b.startswith(robots)
    )
    assert upward == [], upward
