"""Command-line helpers shared by the train/play scripts: registry lookups and hydra-style overrides."""

from __future__ import annotations

import ast
import importlib

import gymnasium as gym


def load_entry_point(spec: str):
    """Import ``"package.module:Name"`` and return the attribute."""
    module, _, name = spec.partition(":")
    return getattr(importlib.import_module(module), name)


def load_task_cfgs(task: str, agent_entry: str):
    """Instantiate the env cfg and the agent cfg registered for ``task`` (clear error if unknown)."""
    import isaaclab_diffsim.tasks  # noqa: F401  (registers the ids)

    try:
        spec = gym.spec(task)
    except gym.error.Error as exc:
        known = sorted(k for k in gym.registry if k.startswith("DiffSim-"))
        raise SystemExit(f"unknown task {task!r}; registered DiffSim tasks: {known}") from exc
    kwargs = spec.kwargs
    if agent_entry not in kwargs:
        raise SystemExit(f"task {task!r} has no {agent_entry!r} (available: {sorted(kwargs)})")
    return load_entry_point(kwargs["env_cfg_entry_point"])(), load_entry_point(kwargs[agent_entry])()


def _parse_value(text: str):
    lowered = text.lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    if lowered in ("none", "null"):
        return None
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def apply_overrides(overrides: list[str], **roots) -> None:
    """Apply ``root.a.b=value`` overrides (e.g. ``agent.horizon=12``, ``env.contact_model=hard``).

    Unknown roots or fields raise SystemExit naming the offending override; values are parsed as Python
    literals (numbers, tuples, lists, booleans, None) and otherwise kept as strings.
    """
    for item in overrides:
        if "=" not in item:
            raise SystemExit(f"override {item!r} is not of the form key=value")
        key, value = item.split("=", 1)
        root, _, path = key.partition(".")
        if root not in roots or not path:
            raise SystemExit(f"override {item!r}: key must start with one of {sorted(roots)}")
        obj = roots[root]
        *parents, leaf = path.split(".")
        for p in parents:
            if not hasattr(obj, p):
                raise SystemExit(f"override {item!r}: {type(obj).__name__} has no field {p!r}")
            obj = getattr(obj, p)
        if not hasattr(obj, leaf):
            raise SystemExit(f"override {item!r}: {type(obj).__name__} has no field {leaf!r}")
        setattr(obj, leaf, _parse_value(value))
