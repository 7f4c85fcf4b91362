"""Command-line helpers shared by the train/play scripts: registry lookups and hydra-style overrides."""

from __future__ import annotations

import ast
import difflib
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


# Isaac Lab's selector tokens (physics=..., renderer=..., presets=...): resolved by its hydra helper
SELECTORS = ("physics", "renderer", "presets")


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


def _is_section(value) -> bool:
    return hasattr(value, "__dataclass_fields__") or isinstance(value, dict)


def _type_problem(current, value) -> str | None:
    """Why ``value`` cannot replace ``current`` (None if it can): the override keeps the field's type."""
    if current is None or _is_section(current) and isinstance(value, dict):
        return None
    if _is_section(current):
        return "is a config section: override its fields (key.field=value)"
    number = (int, float)
    if isinstance(current, bool):
        ok = isinstance(value, bool)
    elif isinstance(current, int):
        ok = isinstance(value, int) and not isinstance(value, bool)
    elif isinstance(current, float):
        ok = isinstance(value, number) and not isinstance(value, bool)
    elif isinstance(current, str):
        ok = isinstance(value, str)
    elif isinstance(current, (tuple, list)):
        # a tuple is a fixed-size value (a range, a vector): same length; a list may grow or shrink (layer sizes)
        ok = isinstance(value, (tuple, list)) and (isinstance(current, list) or len(value) == len(current))
        if ok and current and all(isinstance(c, number) and not isinstance(c, bool) for c in current):
            ok = all(isinstance(v, number) and not isinstance(v, bool) for v in value)
    else:
        ok = True
    return None if ok else f"expects {type(current).__name__} like {current!r}, got {value!r}"


def check_overrides(overrides: list[str], **roots) -> list[tuple[object, str, object]]:
    """Check ``root.a.b=value`` overrides against the configs in ``roots``: the key must name an existing field and
    the value must keep its type (numbers for numbers, a tuple of the same length for a range, ...). Returns
    (key, parsed value) per override, an int widened to float for a float field; SystemExit names the offending override otherwise.
    Isaac Lab's selectors (``physics=...``) are skipped."""
    out = []
    for item in overrides:
        if "=" not in item:
            raise SystemExit(f"override {item!r} is not of the form key=value")
        key, text = item.split("=", 1)
        if key.lstrip("-") in SELECTORS:
            continue
        root, _, path = key.partition(".")
        if root not in roots or not path:
            raise SystemExit(f"override {item!r}: key must start with one of {sorted(roots)} (or be one of {SELECTORS})")
        obj, walked = roots[root], root
        *parents, leaf = path.split(".")
        for name in [*parents, leaf]:
            fields = list(obj) if isinstance(obj, dict) else [f for f in dir(obj) if not f.startswith("_")]
            if name not in fields:
                near = difflib.get_close_matches(name, fields, n=3)
                hint = f"; did you mean {', '.join(f'{walked}.{n}' for n in near)}?" if near else ""
                raise SystemExit(f"override {item!r}: {walked} ({type(obj).__name__}) has no field {name!r}{hint}")
            if name != leaf:
                obj = obj[name] if isinstance(obj, dict) else getattr(obj, name)
                walked = f"{walked}.{name}"
        value = _parse_value(text)
        current = obj[leaf] if isinstance(obj, dict) else getattr(obj, leaf)
        problem = _type_problem(current, value)
        if problem:
            raise SystemExit(f"override {item!r}: {walked}.{leaf} {problem}")
        out.append((key, float(value) if isinstance(current, float) and isinstance(value, int) else value))
    return out


def _set_path(roots: dict, key: str, value) -> None:
    root, *parents, leaf = key.split(".")
    obj = roots[root]
    for name in parents:
        obj = obj[name] if isinstance(obj, dict) else getattr(obj, name)
    if isinstance(obj, dict):
        obj[leaf] = value
    else:
        setattr(obj, leaf, value)


def apply_overrides(overrides: list[str], **roots) -> None:
    """Check (:func:`check_overrides`) and apply ``root.a.b=value`` overrides to configs built in code."""
    for key, value in check_overrides(overrides, **roots):
        _set_path(roots, key, value)


def resolve_task_cfgs(task: str, agent_entry: str, overrides: list[str]):
    """The registered env and agent cfgs of ``task`` with Isaac Lab-style overrides (``env.a.b=value``,
    ``agent.x=value``, and Isaac Lab's ``physics=``/``presets=`` selectors), resolved by Isaac Lab's hydra
    task-config helper after :func:`check_overrides` has refused unknown keys and values of the wrong type."""
    env_cfg, agent_cfg = load_task_cfgs(task, agent_entry)
    checked = check_overrides(overrides, env=env_cfg, agent=agent_cfg)
    if not overrides:
        return env_cfg, agent_cfg
    from isaaclab_tasks.utils.hydra import resolve_task_config

    try:
        env_cfg, agent_cfg = resolve_task_config(task, agent_entry, overrides=list(overrides))
    except (ValueError, KeyError, AttributeError) as err:
        raise SystemExit(f"overrides {list(overrides)}: {err}") from err
    # Isaac Lab's helper sets each parsed literal as it is; the checked values make an int given for a float a float
    for key, value in checked:
        _set_path({"env": env_cfg, "agent": agent_cfg}, key, value)
    return env_cfg, agent_cfg
