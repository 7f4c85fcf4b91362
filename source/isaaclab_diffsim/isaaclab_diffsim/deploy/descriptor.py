"""Finding and reading the descriptor of an exported controller: a bundle's ``io.yaml`` or a LEAPP export's YAML.

Both give the same io spec (:mod:`.io_spec`); a LEAPP export carries it in its own YAML (:mod:`.leapp_descriptor`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import yaml

from .io_spec import BundleMismatchError, read_io
from .leapp_descriptor import is_leapp_description, leapp_yaml_path, spec_from_leapp

BUNDLE, LEAPP = "bundle", "leapp"


@dataclass(frozen=True)
class Descriptor:
    """An export's io spec and where it came from."""

    kind: str
    """:data:`BUNDLE` (a folder with io.yaml and policy.onnx) or :data:`LEAPP` (a LEAPP export)."""
    path: str
    """The YAML file read."""
    spec: dict
    """The io spec (io.yaml's content; for a LEAPP export without the bundle's ONNX interface fields)."""
    leapp: dict | None = None
    """The whole LEAPP description (models, pipeline) of a LEAPP export; None for a bundle."""


def _load_yaml(path: str):
    try:
        with open(path) as f:
            return yaml.safe_load(f)
    except (OSError, yaml.YAMLError) as err:
        raise BundleMismatchError(f"{path}: cannot be read ({err})") from err


def _read_bundle(io_path: str) -> Descriptor:
    try:
        return Descriptor(BUNDLE, io_path, read_io(io_path))
    except (OSError, yaml.YAMLError) as err:
        raise BundleMismatchError(f"{io_path}: cannot be read ({err})") from err


def _read_leapp(path: str) -> Descriptor:
    desc = _load_yaml(path)
    if not is_leapp_description(desc):
        raise BundleMismatchError(f"{path}: not a LEAPP pipeline YAML (no models and pipeline sections)")
    return Descriptor(LEAPP, path, spec_from_leapp(desc, path), desc)


def read_descriptor(path: str) -> Descriptor:
    """The descriptor of ``path``: a bundle folder (its io.yaml), a LEAPP export folder (its ``<folder>.yaml``) or
    a LEAPP YAML file. Raises :class:`BundleMismatchError` naming what is missing or unreadable."""
    if os.path.isdir(path):
        io_path, leapp_path = os.path.join(path, "io.yaml"), leapp_yaml_path(path)
        has_io, has_leapp = os.path.isfile(io_path), os.path.isfile(leapp_path)
        if has_io and has_leapp:
            raise BundleMismatchError(
                f"{path} holds both io.yaml and {os.path.basename(leapp_path)}: give the bundle or the LEAPP export "
                "in a folder of its own"
            )
        if has_io:
            return _read_bundle(io_path)
        if has_leapp:
            return _read_leapp(leapp_path)
        raise BundleMismatchError(
            f"{path} holds no io.yaml (a deployment bundle) nor {os.path.basename(leapp_path)} (a LEAPP export): "
            "export one with scripts/export.py"
        )
    if not os.path.isfile(path):
        raise BundleMismatchError(
            f"{path}: no such bundle folder or LEAPP export (a folder with io.yaml and policy.onnx, or a LEAPP YAML)"
        )
    return _read_leapp(path)


def load_spec(path: str) -> dict:
    """The io spec of a bundle folder or a LEAPP export (:func:`read_descriptor`)."""
    return read_descriptor(path).spec
