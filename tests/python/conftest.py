# SPDX-License-Identifier: Apache-2.0
"""pytest setup: import the binding; provide a CPU context and the GPU array modules (`cp`: CuPy,
`torch`: CUDA PyTorch, `to_device`: either), which skip where not usable.

By default the in-tree binding (python/cbgpu) is tested, with the library from $CBGPU_LIBRARY (CTest
sets it) or build/*/libcbgpu.so of this checkout. With CBGPU_TEST_INSTALLED=1 the installed package
is tested instead (scripts/test-python-package.sh: the wheel in a fresh virtual environment), and the
session stops at once if cbgpu would come from the source tree or without its bundled library.
"""
import os
import sys
from pathlib import Path

import numpy as np
import pytest

_HERE = Path(__file__).resolve().parent
SOURCE_PACKAGE = _HERE.parents[1] / "python"
INSTALLED = os.environ.get("CBGPU_TEST_INSTALLED") == "1"
if not INSTALLED:
    sys.path.insert(0, str(SOURCE_PACKAGE))  # the binding, without installing it
sys.path.insert(0, str(_HERE))  # helpers.py

import cbgpu  # noqa: E402

if INSTALLED:
    _where = Path(cbgpu.__file__).resolve()
    if SOURCE_PACKAGE in _where.parents or Path(cbgpu._capi.lib._name) != cbgpu._capi.BUNDLED_LIBRARY:
        raise pytest.UsageError(f"CBGPU_TEST_INSTALLED=1 but cbgpu was imported from {_where} with "
                                f"{cbgpu._capi.lib._name}, not an installed package with its bundled library")


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
    return (f"cbgpu {cbgpu.__version__} from {Path(cbgpu.__file__).parent}"
            f"{' (installed)' if INSTALLED else ''}; libcbgpu {info['version']} ({info['git_sha']}, "
            f"{info['build_type']}) from {cbgpu._capi.lib._name}; CUDA devices: {info['device_count']}")


# ---- GPU arrays: CuPy and PyTorch, for the tests that feed device memory -------------------------------
# Each fixture skips the test (never fails it) without a CUDA device seen by libcbgpu, or without a
# usable CuPy / CUDA PyTorch: CI has neither GPU nor CuPy nor torch.


def _require_gpu():
    if cbgpu.device_count() == 0:
        pytest.skip("libcbgpu sees no CUDA device")


def _cupy_or_why():
    """(the cupy module, None), or (None, why it is not usable)."""
    try:
        import cupy
        cupy.cuda.runtime.getDeviceCount()
    except Exception as e:  # noqa: BLE001 - ImportError, or a CuPy without a usable CUDA
        return None, f"CuPy is not usable: {e}"
    return cupy, None


def _torch_or_why():
    """(the torch module, None), or (None, why it is not usable): importable and sees CUDA."""
    try:
        import torch
    except Exception as e:  # noqa: BLE001
        return None, f"PyTorch is not importable: {e}"
    if not torch.cuda.is_available():
        return None, "PyTorch sees no CUDA device"
    return torch, None


def _gpu_module_or_skip(find):
    """The module `find` returns; skips without a GPU or where `find` says why it is not usable."""
    _require_gpu()
    module, why = find()
    if module is None:
        pytest.skip(why)
    return module


@pytest.fixture
def cp():
    """The cupy module with device 0 current; skips without a GPU or a usable CuPy."""
    cupy = _gpu_module_or_skip(_cupy_or_why)
    with cupy.cuda.Device(0):
        yield cupy


@pytest.fixture
def torch():
    """The torch module with CUDA; skips without a GPU or a CUDA PyTorch."""
    return _gpu_module_or_skip(_torch_or_why)


@pytest.fixture
def to_device():
    """A function copying a NumPy array into a CUDA array on device 0: CuPy's, else PyTorch's;
    skips without a GPU or when neither is usable."""
    _require_gpu()
    cupy, why_cupy = _cupy_or_why()
    if cupy is not None:
        return cupy.asarray
    torch_module, why_torch = _torch_or_why()
    if torch_module is not None:
        return lambda a: torch_module.from_numpy(np.ascontiguousarray(a)).to("cuda:0")
    pytest.skip(f"neither CuPy nor a CUDA PyTorch is usable ({why_cupy}; {why_torch})")
