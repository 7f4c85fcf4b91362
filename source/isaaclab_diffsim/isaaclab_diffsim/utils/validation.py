"""Declarative checks of configuration values: one :class:`Rule` per field, one error format.

A config states what each field accepts and checks them all in one call::

    check(cfg, {"kappa": positive, "iterations": integer(1), "gamma": in_range(0, 1, low_open=True),
                "schedule": one_of("linear", "constant"), "clip": optional(positive)}, prefix="algorithm.")

raises ``ValueError("algorithm.gamma must be in (0, 1], got 0")`` for the first field that breaks its rule.
:func:`type_rule` reads a field's annotation into a rule (used to check command-line overrides).
Pure Python: the solver uses it too.
"""

from __future__ import annotations

import math
import numbers
import sys
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Rule:
    """What a value must be: ``test(value)`` is true; ``text`` completes "<field> must be ..." in errors."""

    text: str
    test: Callable[[object], bool]

    def __call__(self, value) -> bool:
        try:
            return bool(self.test(value))
        except (TypeError, ValueError):  # e.g. comparing a string with a number
            return False


def is_real(value) -> bool:
    """A real number (int or float, numpy scalars included), not a bool."""
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def is_integer(value) -> bool:
    """An integer (numpy integers included), not a bool."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def is_finite(value) -> bool:
    return is_real(value) and math.isfinite(value)


def _num(x) -> str:
    return f"{x:g}" if is_real(x) else repr(x)


finite = Rule("a finite number", is_finite)
positive = Rule("a positive finite number", lambda v: is_finite(v) and v > 0)
non_negative = Rule("a finite number >= 0", lambda v: is_finite(v) and v >= 0)
boolean = Rule("True or False", lambda v: isinstance(v, bool))
string = Rule("a string", lambda v: isinstance(v, str))
finite_range = Rule(
    "(low, high) with finite low <= high", lambda r: len(r) == 2 and all(is_finite(x) for x in r) and r[0] <= r[1]
)


def in_range(low: float, high: float, low_open: bool = False, high_open: bool = False) -> Rule:
    """A finite number in [low, high]; ``low_open``/``high_open`` exclude the bound."""

    def test(v) -> bool:
        return is_finite(v) and (v > low if low_open else v >= low) and (v < high if high_open else v <= high)

    return Rule(f"in {'(' if low_open else '['}{_num(low)}, {_num(high)}{')' if high_open else ']'}", test)


def at_least(low: float) -> Rule:
    """A finite number >= low."""
    return Rule(f"a finite number >= {_num(low)}", lambda v: is_finite(v) and v >= low)


def integer(low: int = 1) -> Rule:
    """An integer (not a bool) >= low."""
    return Rule(f"an integer >= {low}", lambda v: is_integer(v) and v >= low)


def one_of(*choices) -> Rule:
    """One of ``choices`` (compared with ==)."""
    return Rule(f"one of {list(choices)}", lambda v: v in choices)


def optional(rule: Rule) -> Rule:
    """None, or a value ``rule`` accepts."""
    return Rule(f"None or {rule.text}", lambda v: v is None or rule(v))


def sequence(rule: Rule, length: int | None = None, min_length: int = 0) -> Rule:
    """A list or tuple of ``length`` (or at least ``min_length``) items that ``rule`` accepts."""
    size = f"{length}" if length is not None else f"at least {min_length}" if min_length else "any number of"

    def test(v) -> bool:
        sized = len(v) == length if length is not None else len(v) >= min_length
        return isinstance(v, (list, tuple)) and sized and all(rule(x) for x in v)

    return Rule(f"a list of {size} items, each {rule.text}", test)


def _lookup(obj, name: str):
    for part in name.split("."):
        obj = obj[part] if isinstance(obj, Mapping) else getattr(obj, part)
    return obj


def check_value(name: str, value, rule: Rule, owner: str = "") -> None:
    """Raise ValueError("[owner: ]name must be <rule>, got value") unless ``rule`` accepts ``value``."""
    if not rule(value):
        raise ValueError(f"{owner + ': ' if owner else ''}{name} must be {rule.text}, got {value!r}")


def check(obj, rules: Mapping[str, Rule], prefix: str = "", owner: str = "") -> None:
    """Check the fields of ``obj`` (attributes, or keys of a mapping; dotted names reach nested fields) against
    ``rules`` in order; the first failing field raises ValueError naming ``prefix + name``, the value and the rule."""
    for name, rule in rules.items():
        check_value(prefix + name, _lookup(obj, name), rule, owner)


# ---------------------------------------------------------------------------------------------- annotations
_UNRESOLVED = (NameError, AttributeError, TypeError, SyntaxError)


def field_annotation(cls: type, name: str):
    """The evaluated annotation of field ``name`` of ``cls`` (None where it has none or it cannot be evaluated,
    e.g. a name imported only for type checking)."""
    try:
        return typing.get_type_hints(cls).get(name)
    except _UNRESOLVED:  # one unresolvable annotation fails the whole class: evaluate this field alone
        pass
    for klass in cls.__mro__:
        annotation = vars(klass).get("__annotations__", {}).get(name)
        if annotation is None:
            continue
        if not isinstance(annotation, str):
            return annotation
        try:
            return eval(annotation, vars(sys.modules[klass.__module__]), dict(vars(klass)))
        except _UNRESOLVED:  # configclass copies annotations into subclasses: the defining module may resolve it
            continue
    return None


_TYPE_TESTS = {bool: lambda v: isinstance(v, bool), int: is_integer, float: is_real, str: lambda v: isinstance(v, str)}


def type_rule(annotation) -> Rule | None:
    """A rule for values of type ``annotation`` (None: anything goes, e.g. ``Any``, callables, unresolved
    annotations). Rule texts are type names (``int``, ``float or None``, ``tuple``); an int passes as a float."""
    if annotation is None or annotation is typing.Any:
        return None
    if annotation is type(None):
        return Rule("None", lambda v: v is None)
    if annotation in _TYPE_TESTS:
        return Rule(annotation.__name__, _TYPE_TESTS[annotation])
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin in (typing.Union, types.UnionType):
        rules = [type_rule(a) for a in args]
        if any(r is None for r in rules):
            return None
        return Rule(" or ".join(r.text for r in rules), lambda v: any(r(v) for r in rules))
    if origin is typing.Literal:
        return Rule(f"one of {list(args)}", lambda v: v in args)
    if origin is tuple or (annotation is tuple):
        if len(args) == 2 and args[1] is Ellipsis:
            item = type_rule(args[0])
            return Rule("tuple", lambda v: isinstance(v, (list, tuple)) and (item is None or all(item(x) for x in v)))
        items = [type_rule(a) for a in args]
        return Rule(
            "tuple",
            lambda v: (
                isinstance(v, (list, tuple))
                and (not items or len(v) == len(items) and all(r is None or r(x) for r, x in zip(items, v)))
            ),
        )
    if origin in (list, Sequence) or annotation in (list, Sequence):
        item = type_rule(args[0]) if args else None
        return Rule("list", lambda v: isinstance(v, (list, tuple)) and (item is None or all(item(x) for x in v)))
    if origin in (dict, Mapping) or annotation in (dict, Mapping):
        return Rule("dict", lambda v: isinstance(v, Mapping))
    if isinstance(annotation, type) and origin is None:
        return Rule(annotation.__name__, lambda v: isinstance(v, annotation))
    return None


def accepts_float_only(annotation) -> bool:
    """Whether ``annotation`` admits float but not int (an int given for such a field is meant as a float)."""
    args = (
        typing.get_args(annotation)
        if typing.get_origin(annotation) in (typing.Union, types.UnionType)
        else (annotation,)
    )
    return float in args and int not in args
