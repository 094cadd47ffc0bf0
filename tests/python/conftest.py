# SPDX-License-Identifier: Apache-2.0
"""pytest setup: import the in-tree binding (python/cbgpu) and provide a CPU context.

The library comes from $CBGPU_LIBRARY (CTest sets it) or build/*/libcbgpu.so of this checkout.
"""
import sys
from pathlib import Path

import pytest

_HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(_HERE.parents[1] / "python"))  # the binding, without installing it
sys.path.insert(0, str(_HERE))  # helpers.py

import cbgpu  # noqa: E402


@pytest.fixture
def ctx():
    """A CPU context, freed after the test."""
    with cbgpu.Context(cbgpu.CBG_DEVICE_CPU) as c:
        yield c


@pytest.fixture(autouse=True)
def _silence_logging():
    """The log callback is process-wide: never let one test's callback leak into the next."""
    yield
    cbgpu.set_log_callback(None)


def pytest_report_header(config):
    info = cbgpu.build_info()
    return (f"libcbgpu {info['version']} ({info['git_sha']}, {info['build_type']}) from "
            f"{cbgpu._capi.lib._name}; CUDA devices: {info['device_count']}")


def _libcbgpu_gpu():
    if cbgpu.device_count() == 0:
        pytest.skip("libcbgpu sees no CUDA device")


@pytest.fixture
def gpu_cupy():
    """The cupy module with device 0 current; skips without a GPU or a usable CuPy."""
    _libcbgpu_gpu()
    try:
        import cupy
        cupy.cuda.runtime.getDeviceCount()
    except Exception as e:  # noqa: BLE001 - ImportError, or a CuPy without a usable CUDA
        pytest.skip(f"CuPy is not usable: {e}")
    with cupy.cuda.Device(0):
        yield cupy


@pytest.fixture
def gpu_torch():
    """The torch module with CUDA; skips without a GPU or a CUDA PyTorch."""
    _libcbgpu_gpu()
    try:
        import torch
    except Exception as e:  # noqa: BLE001
        pytest.skip(f"PyTorch is not importable: {e}")
    if not torch.cuda.is_available():
        pytest.skip("PyTorch sees no CUDA device")
    return torch
