"""Shared pytest setup: Warp cache and log level, device list, and the ``slow`` marker gate."""

import os
from pathlib import Path

import pytest

# Must happen before warp is imported anywhere, so kernels are cached inside the repo.
os.environ.setdefault("WARP_CACHE_PATH", str(Path(__file__).resolve().parents[1] / ".cache" / "warp"))
os.environ.setdefault("ISAACLAB_DIFFSIM_ASSET_DIR", str(Path(__file__).resolve().parents[1] / ".cache" / "assets"))

import warp as wp  # noqa: E402

wp.config.log_level = wp.LOG_WARNING


def devices() -> list[str]:
    """Devices to test on: always "cpu", plus "cuda:0" when Warp sees a CUDA device."""
    return ["cpu"] + (["cuda:0"] if wp.get_cuda_device_count() > 0 else [])


@pytest.fixture(params=devices())
def device(request) -> str:
    """Run the requesting test once per device from :func:`devices`."""
    return request.param


@pytest.fixture
def one_torch_thread():
    """Tiny networks: intra-op threads only add sync overhead (3x slower on a busy 2-core machine)."""
    import torch

    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


def pytest_addoption(parser):
    parser.addoption("--runslow", action="store_true", default=False, help="also run tests marked slow")


def pytest_collection_modifyitems(config, items):
    if config.getoption("--runslow") or os.environ.get("RUN_SLOW", "") == "1":
        return
    skip = pytest.mark.skip(reason="slow: needs --runslow or RUN_SLOW=1")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)
