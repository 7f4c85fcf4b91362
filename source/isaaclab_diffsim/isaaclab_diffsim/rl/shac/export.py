"""Export of the deterministic SHAC policy to ONNX and TorchScript files."""

from __future__ import annotations

import os

import torch

from .modules import ShacInferencePolicy


class _ExportablePolicy(torch.nn.Module):
    """Adapter to the rsl_rl policy shape isaaclab_rl's exporters expect (``actor``, ``is_recurrent``)."""

    is_recurrent = False

    def __init__(self, actor: torch.nn.Sequential):
        super().__init__()
        self.actor = actor


def export_policy(policy: ShacInferencePolicy, out_dir: str, onnx_filename: str, jit_filename: str) -> dict:
    """Write ``policy`` (on the CPU) to ``out_dir/onnx_filename`` and ``out_dir/jit_filename``.

    Uses isaaclab_rl's ``export_policy_as_onnx``/``export_policy_as_jit`` (the policy is passed as an rsl_rl-style
    module with ``actor`` and ``is_recurrent``, the normaliser separately); falls back to ``torch.onnx``/``torch.jit``
    if isaaclab_rl is not importable. The ONNX graph takes ``obs`` of shape (1, num_obs) and returns ``actions``
    (1, num_actions). Returns ``{"onnx": path, "jit": path}``.
    """
    os.makedirs(out_dir, exist_ok=True)
    wrapper = _ExportablePolicy(policy.actor)
    try:
        from isaaclab_rl.rsl_rl.exporter import export_policy_as_jit, export_policy_as_onnx
    except ImportError:
        export_policy_as_jit = export_policy_as_onnx = None
    if export_policy_as_onnx is not None:
        export_policy_as_onnx(wrapper, out_dir, normalizer=policy.normalizer, filename=onnx_filename)
        export_policy_as_jit(wrapper, policy.normalizer, out_dir, filename=jit_filename)
    else:  # pragma: no cover - isaaclab_rl is a dependency of isaaclab
        dummy = torch.zeros(1, policy.actor[0].in_features)
        torch.onnx.export(
            policy,
            dummy,
            os.path.join(out_dir, onnx_filename),
            input_names=["obs"],
            output_names=["actions"],
            opset_version=18,
        )
        torch.jit.script(policy).save(os.path.join(out_dir, jit_filename))
    return {"onnx": os.path.join(out_dir, onnx_filename), "jit": os.path.join(out_dir, jit_filename)}
