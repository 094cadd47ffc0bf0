# SPDX-License-Identifier: Apache-2.0
"""GPU paths: CuPy / PyTorch tensors through DLPack, zero-copy pools, strict no-D2H mode.

Skipped (with the reason) where libcbgpu sees no CUDA device or CuPy / PyTorch cannot be imported.
"""
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import cbgpu
from cbgpu import (CBG_DEVICE_AUTO, CBG_DEVICE_CPU, CBG_ERR_DEVICE, CBG_ERR_STRICT_D2H, Context,
                   Pool, tensor_copy)
from cbgpu._capi import STRICT_D2H_LIMIT
from cbgpu._dlpack import kDLCUDA
from helpers import ManagedTensor, expect_error, refcount

# Bytes a pool may read back to validate labels/weights (cbgpu.h: "only a few bytes of counts").
FEW_BYTES = 256


@pytest.fixture
def gpu():
    """A context on CUDA device 0; skips without a GPU."""
    if cbgpu.device_count() == 0:
        pytest.skip("libcbgpu sees no CUDA device")
    with Context(0) as c:
        yield c


def all_zero(stats):
    return set(stats.values()) == {0}


# ---- contexts --------------------------------------------------------------------------------------------


def test_gpu_context(gpu):
    assert gpu.device == 0
    assert gpu.stream is not None  # the context's own non-blocking stream
    gpu.sync()
    gpu.set_stream(None)


def test_auto_context_picks_the_gpu(gpu):
    with Context(CBG_DEVICE_AUTO) as c:
        assert c.device >= 0


def test_cuda_tensor_on_another_device(gpu):
    t = ManagedTensor(device=(kDLCUDA, 1))  # refused before the data pointer is touched
    with expect_error(CBG_ERR_DEVICE, "CUDA device 1", "context uses device 0"):
        Pool(gpu, t.ref())
    t.assert_deleted_once()


# ---- zero-copy pools ----------------------------------------------------------------------------------------


def test_cupy_pool_copies_nothing(gpu, cp):
    x = cp.random.rand(1000, 8).astype(cp.float32)
    before = refcount(x)
    with Pool(gpu, x) as p:
        assert p.info() == {"n_rows": 1000, "n_features": 8, "n_cat_features": 0, "label_dims": 0,
                            "baseline_dims": 0, "has_weight": False, "device": 0}
        assert all_zero(gpu.copy_stats()), gpu.copy_stats()
    assert refcount(x) == before


def test_cupy_pool_with_roles(gpu, cp):
    n = 4096
    x = cp.asfortranarray(cp.random.rand(n, 5))
    cats = cp.arange(n, dtype=cp.int32) % 3
    with Pool(gpu, columns=[x[:, 0], x[:, 1], cats], label=cp.zeros((n, 2), cp.float32),
              weight=cp.ones(n), baseline=cp.zeros(n), cat_features=[2]) as p:
        info = p.info()
        assert (info["n_rows"], info["n_features"], info["n_cat_features"]) == (n, 3, 1)
        assert (info["label_dims"], info["baseline_dims"], info["has_weight"]) == (2, 1, True)
        assert info["device"] == 0
    stats = gpu.copy_stats()
    assert stats["h2d_bytes"] == 0 and stats["d2d_bytes"] == 0 and stats["h2h_bytes"] == 0
    assert stats["d2h_bytes"] <= FEW_BYTES, stats


def test_cupy_on_cpu_context(cp):
    x = cp.zeros((10, 2), cp.float32)
    before = refcount(x)
    with Context(CBG_DEVICE_CPU) as cpu:
        with expect_error(CBG_ERR_DEVICE, "kDLCUDA", "CPU"):
            Pool(cpu, x)
    assert refcount(x) == before


def test_torch_pool_copies_nothing(gpu, torch):
    x = torch.rand(500, 6, device="cuda")
    with Pool(gpu, x) as p:
        assert p.info()["n_rows"] == 500 and p.info()["device"] == 0
        assert all_zero(gpu.copy_stats()), gpu.copy_stats()
    with Pool(gpu, x.T, label=torch.zeros(6, device="cuda")) as p:  # strided view
        assert p.info()["n_features"] == 500
    stats = gpu.copy_stats()
    assert stats["h2d_bytes"] == 0 and stats["d2d_bytes"] == 0 and stats["d2h_bytes"] <= FEW_BYTES


# ---- copies and strict mode ------------------------------------------------------------------------------


def test_small_d2h_allowed_in_strict_mode(cp):
    n = STRICT_D2H_LIMIT // 4  # exactly 64 KiB of float32: still allowed
    src = cp.arange(n, dtype=cp.float32)
    dst = np.zeros(n, np.float32)
    with Context(0, strict_no_d2h=True) as strict:
        tensor_copy(strict, dst, src)
        stats = strict.copy_stats()
    np.testing.assert_array_equal(dst, np.arange(n, dtype=np.float32))
    assert (stats["d2h_bytes"], stats["d2h_calls"]) == (STRICT_D2H_LIMIT, 1)


def test_large_d2h_refused_in_strict_mode(cp):
    n = STRICT_D2H_LIMIT // 4 + 1
    src = cp.arange(n, dtype=cp.float32)
    dst = np.zeros(n, np.float32)
    with Context(0, strict_no_d2h=True) as strict:
        with expect_error(CBG_ERR_STRICT_D2H, f"{n * 4}-byte device-to-host"):
            tensor_copy(strict, dst, src)
        assert all_zero(strict.copy_stats())
    assert not dst.any()


def test_large_d2h_allowed_without_strict_mode(gpu, cp):
    src = cp.arange(100_000, dtype=cp.float64)
    dst = np.zeros(100_000)
    tensor_copy(gpu, dst, src)
    np.testing.assert_array_equal(dst, np.arange(100_000.0))
    assert gpu.copy_stats()["d2h_bytes"] == dst.nbytes


def test_h2d_and_d2d_copies(gpu, cp):
    host = np.arange(12, dtype=np.int32).reshape(3, 4)
    dev = cp.zeros((3, 4), cp.int32)
    tensor_copy(gpu, dev, host)
    dev2 = cp.zeros((4, 3), cp.int32)
    tensor_copy(gpu, dev2, dev.T)  # strided device-to-device
    np.testing.assert_array_equal(cp.asnumpy(dev2), host.T)
    stats = gpu.copy_stats()
    assert (stats["h2d_bytes"], stats["h2d_calls"]) == (host.nbytes, 1)
    assert stats["d2d_bytes"] == host.nbytes
    assert stats["d2h_bytes"] == 0


@pytest.mark.parametrize("make", [lambda a: a.T, lambda a: a[::2, 1::3], lambda a: a[:, ::2]],
                         ids=["transposed", "both-strided", "column-slice"])
def test_strided_copies_across_devices(gpu, cp, make):
    host = np.arange(12 * 9, dtype=np.float32).reshape(12, 9)
    dev = cp.asarray(host)
    view = make(host)
    dev_dst = cp.zeros(view.shape, cp.float32)
    tensor_copy(gpu, dev_dst, view)  # strided host source -> device
    np.testing.assert_array_equal(cp.asnumpy(dev_dst), view)
    host_dst = np.zeros(view.shape, np.float32)
    tensor_copy(gpu, host_dst, make(dev))  # strided device source -> host
    np.testing.assert_array_equal(host_dst, view)
    stats = gpu.copy_stats()
    assert stats["h2d_bytes"] == view.nbytes and stats["d2h_bytes"] == view.nbytes


def test_cupy_tensor_copy_on_cpu_context(cp):
    with Context(CBG_DEVICE_CPU) as cpu:
        with expect_error(CBG_ERR_DEVICE, "src", "CPU"):
            tensor_copy(cpu, np.zeros(4), cp.zeros(4))


# ---- streams, lifetimes, logging, environment ------------------------------------------------------------


def test_borrowed_stream(gpu, cp):
    theirs = cp.cuda.Stream(non_blocking=True)
    other = cp.cuda.Stream(non_blocking=True)
    with Context(0, stream=theirs.ptr) as c:
        assert c.stream == theirs.ptr
        c.set_stream(other.ptr)
        assert c.stream == other.ptr
        c.set_stream(None)  # no own stream yet: the context makes one
        assert c.stream not in (None, theirs.ptr, other.ptr)
        x = cp.arange(10, dtype=cp.float32)
        dst = cp.zeros(10, cp.float32)
        tensor_copy(c, dst, x)
        np.testing.assert_array_equal(cp.asnumpy(dst), np.arange(10, dtype=np.float32))


def test_gpu_pool_outlives_its_context(cp):
    x = cp.zeros((8, 3), cp.float32)
    before = refcount(x)
    c = Context(0)
    p = Pool(c, x)
    c.close()
    assert p.info()["device"] == 0
    p.close()
    assert refcount(x) == before


def test_gpu_context_created_record(gpu):
    records = []
    cbgpu.set_log_callback(lambda *r: records.append(r), cbgpu.CBG_LOG_DEBUG)
    with Context(0, strict_no_d2h=True):
        pass
    assert (cbgpu.CBG_LOG_DEBUG, "cbgpu.context",
            "context created on CUDA device 0, strict no-D2H mode") in records


def test_strict_mode_from_environment(cp):
    # The variable is read when contexts are created (and once for build_info): use a fresh process.
    script = (
        "import numpy as np, cupy as cp, cbgpu\n"
        "assert cbgpu.build_info()['strict_no_d2h_env'] is True\n"
        "with cbgpu.Context(0) as c:\n"
        "    try:\n"
        "        cbgpu.tensor_copy(c, np.zeros(20000, np.float32), cp.zeros(20000, cp.float32))\n"
        "    except cbgpu.CbgError as e:\n"
        "        assert e.code == cbgpu.CBG_ERR_STRICT_D2H, e\n"
        "    else:\n"
        "        raise SystemExit('a 80000-byte D2H copy was not refused')\n")
    env = dict(os.environ, CBGPU_STRICT_NO_D2H="1",
               PYTHONPATH=str(Path(cbgpu.__file__).resolve().parents[1]))
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
