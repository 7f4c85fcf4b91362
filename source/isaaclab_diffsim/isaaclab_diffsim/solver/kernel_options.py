"""The Warp module options of the solver's kernel modules, declared once."""

OPTIMIZATION_LEVEL = 3
"""LLVM -O3 for the CPU kernels (Warp's CPU default is -O2; CUDA's is already 3): the taped forward 13-17 % faster at
64-256 worlds, states and gradients bitwise the same (no fast-math, so the float semantics do not change; the main
job's fingerprint is equal). docs/benchmarks.md has the measurement."""


def module_options(enable_backward: bool) -> dict:
    """Options for ``wp.set_module_options`` at the top of a solver kernel module."""
    return {"enable_backward": bool(enable_backward), "optimization_level": OPTIMIZATION_LEVEL}
