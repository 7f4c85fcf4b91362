"""The io spec inside a LEAPP export's YAML: one descriptor for the exported controller.

A LEAPP export (``scripts/export.py --format leapp``) writes no ``io.yaml``: the io spec (observation layout, action
scale, joint order and default pose, actuator envelope, gait, scene dt, training provenance, height-scan and terrain
blocks when present) goes into LEAPP's own YAML as graph metadata, ``pipeline.configs.isaaclab_diffsim_io``
(``leapp.GraphConfigs(extra=...)``), which LEAPP's loader keeps as it reads it. The only part of an ``io.yaml``
left out is the bundle's own ONNX interface (``controller.files``, ``inputs``, ``outputs``): LEAPP's ``models``
section describes its model's.
"""

from __future__ import annotations

import copy
import os

import yaml

from .io_spec import FORMAT_VERSION, BundleMismatchError

SPEC_KEY = "isaaclab_diffsim_io"
"""Key of the io spec in the LEAPP YAML's ``pipeline.configs``."""
BUNDLE_INTERFACE = ("files", "inputs", "outputs")
"""Fields of io.yaml's ``controller`` that describe the bundle's ONNX file and its interface only."""


def leapp_spec(io: dict) -> dict:
    """``io`` (an io.yaml's content) without :data:`BUNDLE_INTERFACE`, as plain YAML types (LEAPP writes its YAML
    with ``yaml.dump``, which would tag tuples as Python objects that a safe loader refuses)."""
    spec = copy.deepcopy(io)
    for key in BUNDLE_INTERFACE:
        spec["controller"].pop(key, None)
    return yaml.safe_load(yaml.safe_dump(spec))


def is_leapp_description(desc) -> bool:
    """Whether a loaded YAML is a LEAPP pipeline description (``models`` and ``pipeline`` at the top)."""
    return isinstance(desc, dict) and "models" in desc and "pipeline" in desc


def leapp_yaml_path(path: str) -> str:
    """The LEAPP YAML of an export folder (``<folder>/<folder name>.yaml``, as LEAPP names it) or the file itself."""
    if os.path.isdir(path):
        return os.path.join(path, os.path.basename(os.path.normpath(path)) + ".yaml")
    return path


def spec_from_leapp(desc: dict, path: str) -> dict:
    """The io spec of the loaded LEAPP description ``desc`` (read from ``path``); BundleMismatchError (one line,
    naming what is missing) when it carries none or one of another format version."""
    configs = (desc.get("pipeline") or {}).get("configs") or {}
    spec = configs.get(SPEC_KEY)
    if spec is None:
        raise BundleMismatchError(
            f"{path}: a LEAPP export without pipeline.configs.{SPEC_KEY} (the controller's io spec); "
            "export it again with scripts/export.py --format leapp"
        )
    if not isinstance(spec, dict) or spec.get("format_version") != FORMAT_VERSION:
        version = spec.get("format_version") if isinstance(spec, dict) else None
        raise BundleMismatchError(
            f"{path}: pipeline.configs.{SPEC_KEY} is not an io spec of format version {FORMAT_VERSION} "
            f"(format_version {version})"
        )
    return spec
