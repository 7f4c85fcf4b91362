"""Deployment bundle: the complete controller as ONNX and TorchScript, with ``io.yaml`` describing its I/O (a LEAPP
export carries the same io spec in its own YAML, :mod:`.leapp_descriptor`).

Importing this package needs numpy, onnxruntime and pyyaml only (a robot computer runs :class:`Controller`); the
names that need torch (writing a bundle) load on first use."""

from importlib import import_module

from .descriptor import load_spec, read_descriptor
from .io_spec import OBSERVATION_TERMS, BundleMismatchError, build_io, check_env_matches, read_io
from .onnx_policy import OnnxBundlePolicy, open_bundle
from .runtime import Controller

_LAZY = {
    "DeployedController": ".controller",
    "controller_for_env": ".bundle",
    "dump_params": ".bundle",
    "export_bundle": ".bundle",
}
"""Names whose modules import torch (or Isaac Lab): loaded when first used."""


def __getattr__(name: str):
    if name in _LAZY:
        value = getattr(import_module(_LAZY[name], __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "Controller",
    "DeployedController",
    "OBSERVATION_TERMS",
    "BundleMismatchError",
    "OnnxBundlePolicy",
    "build_io",
    "check_env_matches",
    "controller_for_env",
    "dump_params",
    "export_bundle",
    "load_spec",
    "open_bundle",
    "read_descriptor",
    "read_io",
]
