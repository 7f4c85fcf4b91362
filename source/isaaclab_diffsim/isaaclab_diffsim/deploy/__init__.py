"""Deployment bundle: the complete controller as ONNX and TorchScript, with ``io.yaml`` describing its I/O."""

from .bundle import controller_for_env, dump_params, export_bundle
from .controller import DeployedController
from .io_spec import OBSERVATION_TERMS, BundleMismatchError, build_io, check_env_matches, read_io
from .onnx_policy import OnnxBundlePolicy, open_bundle

__all__ = [
    "DeployedController",
    "OBSERVATION_TERMS",
    "BundleMismatchError",
    "OnnxBundlePolicy",
    "build_io",
    "check_env_matches",
    "controller_for_env",
    "dump_params",
    "export_bundle",
    "open_bundle",
    "read_io",
]
