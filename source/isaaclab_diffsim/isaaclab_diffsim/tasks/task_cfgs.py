"""Command-line helpers shared by the train/play scripts: registry lookups and hydra-style overrides."""

from __future__ import annotations

import ast
import difflib
import importlib
import typing
from collections.abc import Mapping

import gymnasium as gym

from ..utils.validation import accepts_float_only, field_annotation, is_integer, type_rule


def load_entry_point(spec: str):
    """Import ``"package.module:Name"`` and return the attribute."""
    module, _, name = spec.partition(":")
    return getattr(importlib.import_module(module), name)


def _registered(task: str, agent_entry: str) -> dict:
    """The registration kwargs of ``task`` (SystemExit naming the known tasks or entries otherwise)."""
    import isaaclab_diffsim.tasks  # noqa: F401  (registers the ids)

    try:
        spec = gym.spec(task)
    except gym.error.Error as exc:
        known = sorted(k for k in gym.registry if k.startswith("DiffSim-"))
        raise SystemExit(f"unknown task {task!r}; registered DiffSim tasks: {known}") from exc
    if agent_entry not in spec.kwargs:
        raise SystemExit(f"task {task!r} has no {agent_entry!r} (available: {sorted(spec.kwargs)})")
    return spec.kwargs


def load_task_cfgs(task: str, agent_entry: str):
    """Instantiate the env cfg and the agent cfg registered for ``task`` (clear error if unknown)."""
    kwargs = _registered(task, agent_entry)
    return load_entry_point(kwargs["env_cfg_entry_point"])(), load_entry_point(kwargs[agent_entry])()


# Isaac Lab's selector tokens (physics=..., renderer=..., presets=...): resolved by its hydra helper
SELECTORS = ("physics", "renderer", "presets")


def _is_section(value) -> bool:
    return hasattr(value, "__dataclass_fields__") or isinstance(value, Mapping)


def _fields(obj) -> list[str]:
    if isinstance(obj, Mapping):
        return list(obj)
    if hasattr(obj, "__dataclass_fields__"):
        return list(obj.__dataclass_fields__)
    return [f for f in dir(obj) if not f.startswith("_")]


def _child(obj, name: str):
    return obj[name] if isinstance(obj, Mapping) else getattr(obj, name)


def _walk(roots: dict, key: str, item: str):
    """(parent, leaf name, the parent's dotted path, the leaf's annotation) of ``key`` in ``roots``; SystemExit with
    close matches when a name on the path is not a field."""
    root, *path = key.split(".")
    obj, walked, annotation = roots[root], root, None
    for depth, name in enumerate(path):
        fields = _fields(obj)
        if name not in fields:
            near = difflib.get_close_matches(name, fields, n=3)
            hint = f"; did you mean {', '.join(f'{walked}.{n}' for n in near)}?" if near else ""
            raise SystemExit(f"override {item!r}: {walked} ({type(obj).__name__}) has no field {name!r}{hint}")
        if isinstance(obj, Mapping):  # a dict field: its values' annotation, dict[str, V] -> V
            args = getattr(annotation, "__args__", ())
            annotation = args[1] if len(args) == 2 else None
        else:
            annotation = field_annotation(type(obj), name)
        if depth == len(path) - 1:
            return obj, name, walked, annotation
        obj, walked = _child(obj, name), f"{walked}.{name}"


def check_overrides(overrides: list[str], **roots) -> list[tuple[str, str]]:
    """(key, override) of each ``root.a.b=value`` override whose key names a field of the configs in ``roots``;
    SystemExit names the offending override otherwise (close matches for a misspelt field). Isaac Lab's selectors
    (``physics=...``) are skipped."""
    out = []
    for item in overrides:
        if "=" not in item:
            raise SystemExit(f"override {item!r} is not of the form key=value")
        key = item.split("=", 1)[0]
        if key.lstrip("-") in SELECTORS:
            continue
        root, _, path = key.partition(".")
        if root not in roots or not path:
            raise SystemExit(
                f"override {item!r}: key must start with one of {sorted(roots)} (or be one of {SELECTORS})"
            )
        _walk(roots, key, item)
        out.append((key, item))
    return out


def _section_class(annotation):
    """The config class of a field annotated ``annotation`` (``SomeCfg | None``), or None."""
    classes = [a for a in (typing.get_args(annotation) or (annotation,)) if hasattr(a, "__dataclass_fields__")]
    return classes[0] if len(classes) == 1 else None


def _checked_value(item: str, label: str, before, value, annotation):
    """``value`` for the field ``label`` (an int widened to float for a float field), or SystemExit if it does not fit
    the field's annotation (a config section takes only a section); ``before`` is the field's value before. A dict
    for a section that is None (``env.foot_heights={}``) builds the section's class with the dict's fields set."""
    cls = _section_class(annotation)
    if before is None and isinstance(value, Mapping) and cls is not None:
        unknown = sorted(set(value) - set(cls.__dataclass_fields__))
        if unknown:
            raise SystemExit(f"override {item!r}: {label} ({cls.__name__}) has no field {unknown[0]!r}")
        section = cls()
        for name, field_value in value.items():
            setattr(section, name, field_value)
        return section
    if _is_section(before):
        if not _is_section(value):
            raise SystemExit(f"override {item!r}: {label} is a config section: override its fields (key.field=value)")
        return value
    rule = type_rule(annotation)
    if rule is not None and not rule(value):
        raise SystemExit(f"override {item!r}: {label} expects {rule.text} like {before!r}, got {value!r}")
    return float(value) if is_integer(value) and accepts_float_only(annotation) else value


def _set(parent, leaf: str, value) -> None:
    if isinstance(parent, Mapping):
        parent[leaf] = value
    else:
        setattr(parent, leaf, value)


def _parse_value(text: str):
    """An override's value as Isaac Lab's hydra helper reads it: true/false/none/null, a Python literal, else text."""
    lowered = text.lower()
    if lowered in ("true", "false", "none", "null"):
        return {"true": True, "false": False}.get(lowered)
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def apply_overrides(overrides: list[str], **roots) -> None:
    """Apply ``root.a.b=value`` overrides to configs built in code, checked like :func:`resolve_task_cfgs`'s."""
    for key, item in check_overrides(overrides, **roots):
        parent, leaf, walked, annotation = _walk(roots, key, item)
        value = _parse_value(item.split("=", 1)[1])
        _set(parent, leaf, _checked_value(item, f"{walked}.{leaf}", _child(parent, leaf), value, annotation))


def resolve_task_cfgs(task: str, agent_entry: str, overrides: list[str]):
    """The registered env and agent cfgs of ``task`` with Isaac Lab-style overrides (``env.a.b=value``,
    ``agent.x=value``, and Isaac Lab's ``physics=``/``presets=`` selectors), resolved and applied by Isaac Lab's
    hydra task-config helper; keys must name fields of the selected configs and values must fit the fields'
    annotations (SystemExit naming the override otherwise)."""
    if not overrides:
        return load_task_cfgs(task, agent_entry)
    _registered(task, agent_entry)
    from isaaclab_tasks.utils.hydra import resolve_task_config

    selectors = [item for item in overrides if item.split("=", 1)[0].lstrip("-") in SELECTORS]
    try:
        reference = dict(zip(("env", "agent"), resolve_task_config(task, agent_entry, overrides=selectors)))
        checked = check_overrides(overrides, **reference)
        env_cfg, agent_cfg = resolve_task_config(task, agent_entry, overrides=list(overrides))
    except (ValueError, KeyError, AttributeError) as err:
        raise SystemExit(f"overrides {list(overrides)}: {err}") from err
    applied = {"env": env_cfg, "agent": agent_cfg}
    for key, item in checked:  # Isaac Lab set each value as parsed: check it against the field's annotation
        before_parent, leaf, walked, _ = _walk(reference, key, item)
        parent, _, _, annotation = _walk(applied, key, item)
        value = _child(parent, leaf)
        checked_value = _checked_value(item, f"{walked}.{leaf}", _child(before_parent, leaf), value, annotation)
        if checked_value is not value:
            _set(parent, leaf, checked_value)
    return env_cfg, agent_cfg
