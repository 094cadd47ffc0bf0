# SPDX-License-Identifier: Apache-2.0
"""The C ABI outside pools and copies: versions, build info, status codes, contexts, handles, logging."""
import ctypes
import glob
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import cbgpu
from cbgpu import (CBG_DEVICE_AUTO, CBG_DEVICE_CPU, CBG_ERR_INVALID_ARGUMENT, CBG_ERR_INVALID_HANDLE,
                   CBG_ERR_NO_DEVICE, CBG_ERR_NULL_POINTER, CBG_ERR_UNSUPPORTED, CBG_LOG_DEBUG,
                   CBG_LOG_INFO, CBG_LOG_OFF, CBG_LOG_TRACE, CBG_OK, Context, Pool)
from cbgpu._capi import (cbg_context_desc_t, cbg_copy_stats_t, cbg_device_alloc_fn,
                         cbg_log_fn, cbg_pool_info_t, lib)
from helpers import assert_status, expect_error

NO_GPU_HERE = not glob.glob("/dev/nvidia[0-9]*")

# ---- versions and build info -------------------------------------------------------------------------


def test_version_number_matches_string():
    major, minor, patch = (int(p) for p in cbgpu.version().split("."))
    assert cbgpu.version_number() == major * 10000 + minor * 100 + patch


def test_version_matches_checkout():
    assert cbgpu.version() == (Path(__file__).resolve().parents[2] / "VERSION").read_text().strip()


def test_build_info_has_documented_keys():
    info = cbgpu.build_info()
    documented = {"version", "git_sha", "build_type", "cuda_runtime_version", "cuda_driver_version",
                  "cuda_architectures", "cccl_version", "dlpack_version", "compiler", "device_count",
                  "strict_no_d2h_env"}
    assert documented <= set(info), f"missing keys: {documented - set(info)}"
    assert info["version"] == cbgpu.version()
    assert info["device_count"] == cbgpu.device_count()
    assert isinstance(info["cuda_driver_version"], int) and info["cuda_driver_version"] >= 0
    assert isinstance(info["cuda_runtime_version"], int) and info["cuda_runtime_version"] > 0
    assert isinstance(info["strict_no_d2h_env"], bool)
    assert info["git_sha"] and info["compiler"]


def test_build_info_is_static():
    first, second = ctypes.c_char_p(), ctypes.c_char_p()
    assert_status(lib.cbg_build_info(ctypes.byref(first)), CBG_OK)
    assert_status(lib.cbg_build_info(ctypes.byref(second)), CBG_OK)
    assert ctypes.cast(first, ctypes.c_void_p).value == ctypes.cast(second, ctypes.c_void_p).value


def test_device_count():
    count = cbgpu.device_count()
    assert count >= 0
    if NO_GPU_HERE:
        assert count == 0


# ---- status codes and the last error ---------------------------------------------------------------------


@pytest.mark.parametrize("code,name", sorted(cbgpu.STATUS_NAMES.items()))
def test_status_string_names_the_code(code, name):
    assert cbgpu.status_string(code).startswith(name)


@pytest.mark.parametrize("code", [-1, 20, 1000])
def test_status_string_unknown(code):
    assert cbgpu.status_string(code) == "unknown status code"


def test_last_error_cleared_by_success(ctx):
    assert_status(lib.cbg_context_device(None, None), CBG_ERR_NULL_POINTER, "ctx is NULL")
    device = ctypes.c_int32()
    assert_status(lib.cbg_context_device(ctx.handle, ctypes.byref(device)), CBG_OK)


def test_error_carries_function_name():
    with expect_error(CBG_ERR_NO_DEVICE, "cbg_context_create", "device 99"):
        Context(99)


# ---- contexts ----------------------------------------------------------------------------------------------


def test_cpu_context(ctx):
    assert ctx.device == CBG_DEVICE_CPU
    assert ctx.stream is None  # a CPU context has no stream
    ctx.sync()
    assert set(ctx.copy_stats().values()) == {0}
    ctx.reset_copy_stats()


def test_auto_context_falls_back_to_cpu():
    with Context(CBG_DEVICE_AUTO) as c:
        if cbgpu.device_count() == 0:
            assert c.device == CBG_DEVICE_CPU
        else:
            assert c.device >= 0


def test_default_desc_is_auto():
    desc = cbg_context_desc_t()
    assert_status(lib.cbg_context_desc_init(ctypes.byref(desc)), CBG_OK)
    assert desc.struct_size == ctypes.sizeof(cbg_context_desc_t)
    assert (desc.device, desc.log_level, desc.seed, desc.stream, desc.flags) == (
        CBG_DEVICE_AUTO, CBG_LOG_TRACE, 0, None, 0)
    assert not desc.alloc_fn and not desc.free_fn and desc.alloc_user_data is None


def test_null_desc_means_defaults():
    handle = ctypes.c_void_p()
    assert_status(lib.cbg_context_create(None, ctypes.byref(handle)), CBG_OK)
    device = ctypes.c_int32()
    assert_status(lib.cbg_context_device(handle, ctypes.byref(device)), CBG_OK)
    assert device.value == (CBG_DEVICE_CPU if cbgpu.device_count() == 0 else 0)
    assert_status(lib.cbg_context_free(handle), CBG_OK)


def test_context_seed_and_flags_accepted():
    with Context(CBG_DEVICE_CPU, seed=2**64 - 1, strict_no_d2h=True, log_level=CBG_LOG_OFF) as c:
        assert c.device == CBG_DEVICE_CPU


def _desc(**fields):
    desc = cbg_context_desc_t()
    lib.cbg_context_desc_init(ctypes.byref(desc))
    desc.device = CBG_DEVICE_CPU
    for name, value in fields.items():
        setattr(desc, name, value)
    return desc


@pytest.mark.parametrize("fields,code,fragments", [
    ({"struct_size": 0}, CBG_ERR_INVALID_ARGUMENT, ["struct_size is 0"]),
    ({"struct_size": ctypes.sizeof(cbg_context_desc_t) + 8}, CBG_ERR_INVALID_ARGUMENT, ["struct_size"]),
    # below the first layout (the fields from nccl_comm on were appended later)
    ({"struct_size": cbg_context_desc_t.nccl_comm.offset - 8}, CBG_ERR_INVALID_ARGUMENT, ["struct_size"]),
    ({"log_level": 7}, CBG_ERR_INVALID_ARGUMENT, ["log_level 7"]),
    ({"log_level": -1}, CBG_ERR_INVALID_ARGUMENT, ["log_level -1"]),
    ({"flags": 2}, CBG_ERR_INVALID_ARGUMENT, ["flags", "0x2"]),
    ({"alloc_fn": cbg_device_alloc_fn(lambda n, s, u: None)}, CBG_ERR_INVALID_ARGUMENT, ["free_fn"]),
    ({"device": -3}, CBG_ERR_INVALID_ARGUMENT, ["device -3"]),
    ({"device": 4096}, CBG_ERR_NO_DEVICE, ["device 4096"]),
])
def test_context_create_refuses(fields, code, fragments):
    desc = _desc(**fields)
    handle = ctypes.c_void_p(12345)
    assert_status(lib.cbg_context_create(ctypes.byref(desc), ctypes.byref(handle)), code, *fragments)
    assert handle.value is None, "out must be set to NULL on failure"


def test_context_create_null_out():
    desc = _desc()
    assert_status(lib.cbg_context_create(ctypes.byref(desc), None), CBG_ERR_NULL_POINTER, "out is NULL")


def test_set_stream_on_cpu_context_unsupported(ctx):
    with expect_error(CBG_ERR_UNSUPPORTED, "CPU context"):
        ctx.set_stream(None)


def test_copy_stats_struct_size(ctx):
    stats = cbg_copy_stats_t(struct_size=0)
    assert_status(lib.cbg_copy_stats(ctx.handle, ctypes.byref(stats)), CBG_ERR_INVALID_ARGUMENT,
                  "struct_size is 0")
    stats = cbg_copy_stats_t(struct_size=ctypes.sizeof(cbg_copy_stats_t) + 64)  # a newer caller
    assert_status(lib.cbg_copy_stats(ctx.handle, ctypes.byref(stats)), CBG_OK)


# ---- NULL out pointers ---------------------------------------------------------------------------------


@pytest.fixture
def pool(ctx):
    with Pool(ctx, np.zeros((3, 2), np.float32)) as p:
        yield p


def test_null_pointers_named(ctx, pool):
    c, p = ctx.handle, pool.handle
    calls = [
        (lambda: lib.cbg_build_info(None), "json is NULL"),
        (lambda: lib.cbg_device_count(None), "count is NULL"),
        (lambda: lib.cbg_context_desc_init(None), "desc is NULL"),
        (lambda: lib.cbg_pool_desc_init(None), "desc is NULL"),
        (lambda: lib.cbg_context_device(c, None), "device is NULL"),
        (lambda: lib.cbg_context_get_stream(c, None), "stream is NULL"),
        (lambda: lib.cbg_copy_stats(c, None), "stats is NULL"),
        (lambda: lib.cbg_pool_info(p, None), "info is NULL"),
        (lambda: lib.cbg_pool_feature_name(p, 0, None), "name is NULL"),
        (lambda: lib.cbg_pool_is_categorical(p, 0, None), "is_cat is NULL"),
        (lambda: lib.cbg_context_sync(None), "ctx is NULL"),
        (lambda: lib.cbg_copy_stats_reset(None), "ctx is NULL"),
        (lambda: lib.cbg_context_set_stream(None, None), "ctx is NULL"),
        (lambda: lib.cbg_pool_info(None, ctypes.byref(cbg_pool_info_t())), "pool is NULL"),
        (lambda: lib.cbg_tensor_copy(c, None, None), "dst is NULL"),
    ]
    for call, fragment in calls:
        assert_status(call(), CBG_ERR_NULL_POINTER, fragment)


def test_free_null_is_noop():
    assert_status(lib.cbg_context_free(None), CBG_OK)
    assert_status(lib.cbg_pool_free(None), CBG_OK)


# ---- handles ----------------------------------------------------------------------------------------------


def test_freed_context_handle():
    c = Context(CBG_DEVICE_CPU)
    stale = c.handle
    c.close()
    out_i32, out_ptr = ctypes.c_int32(), ctypes.c_void_p()
    stats = cbg_copy_stats_t(struct_size=ctypes.sizeof(cbg_copy_stats_t))
    for status in [lib.cbg_context_device(stale, ctypes.byref(out_i32)),
                   lib.cbg_context_get_stream(stale, ctypes.byref(out_ptr)),
                   lib.cbg_context_set_stream(stale, None),
                   lib.cbg_context_sync(stale),
                   lib.cbg_copy_stats(stale, ctypes.byref(stats)),
                   lib.cbg_copy_stats_reset(stale),
                   lib.cbg_context_free(stale)]:
        assert_status(status, CBG_ERR_INVALID_HANDLE, "not a live cbg_context_t")


def test_freed_pool_handle(ctx):
    p = Pool(ctx, np.zeros((3, 2)))
    stale = p.handle
    p.close()
    info = cbg_pool_info_t(struct_size=ctypes.sizeof(cbg_pool_info_t))
    name, is_cat = ctypes.c_char_p(), ctypes.c_int32()
    for status in [lib.cbg_pool_info(stale, ctypes.byref(info)),
                   lib.cbg_pool_feature_name(stale, 0, ctypes.byref(name)),
                   lib.cbg_pool_is_categorical(stale, 0, ctypes.byref(is_cat)),
                   lib.cbg_pool_free(stale)]:
        assert_status(status, CBG_ERR_INVALID_HANDLE, "not a live cbg_pool_t")


def test_handles_of_the_wrong_type(ctx, pool):
    device = ctypes.c_int32()
    assert_status(lib.cbg_context_device(pool.handle, ctypes.byref(device)), CBG_ERR_INVALID_HANDLE,
                  "ctx", "cbg_context_t")
    assert_status(lib.cbg_context_free(pool.handle), CBG_ERR_INVALID_HANDLE, "cbg_context_t")
    info = cbg_pool_info_t(struct_size=ctypes.sizeof(cbg_pool_info_t))
    assert_status(lib.cbg_pool_info(ctx.handle, ctypes.byref(info)), CBG_ERR_INVALID_HANDLE,
                  "pool", "cbg_pool_t")
    assert_status(lib.cbg_pool_free(ctx.handle), CBG_ERR_INVALID_HANDLE, "cbg_pool_t")
    # Both are still alive and usable afterwards.
    assert ctx.device == CBG_DEVICE_CPU and pool.info()["n_rows"] == 3


def test_foreign_pointer_is_an_invalid_handle():
    foreign = ctypes.create_string_buffer(256)  # memory cbgpu never made
    device = ctypes.c_int32()
    assert_status(lib.cbg_context_device(ctypes.addressof(foreign), ctypes.byref(device)),
                  CBG_ERR_INVALID_HANDLE, "not made by cbgpu")


def test_python_objects_refuse_use_after_close():
    c = Context(CBG_DEVICE_CPU)
    c.close()
    c.close()  # idempotent
    with pytest.raises(ValueError, match="closed"):
        c.device


# ---- logging -------------------------------------------------------------------------------------------


class Recorder:
    def __init__(self):
        self.records = []

    def __call__(self, level, category, message):
        self.records.append((level, category, message))


def test_context_created_debug_record():
    rec = Recorder()
    cbgpu.set_log_callback(rec, CBG_LOG_DEBUG)
    with Context(CBG_DEVICE_CPU):
        pass
    assert (CBG_LOG_DEBUG, "cbgpu.context", "context created on the CPU (host reference path)") \
        in rec.records


def test_pool_debug_record(ctx):
    rec = Recorder()
    cbgpu.set_log_callback(rec, CBG_LOG_TRACE)
    Pool(ctx, np.zeros((5, 2)), label=np.zeros(5), weight=np.ones(5)).close()
    pool_records = [r for r in rec.records if r[1] == "cbgpu.pool"]
    assert pool_records and pool_records[0][0] == CBG_LOG_DEBUG
    assert "5 rows x 2 features" in pool_records[0][2]


def test_callback_min_level_filters():
    rec = Recorder()
    cbgpu.set_log_callback(rec, CBG_LOG_INFO)
    Context(CBG_DEVICE_CPU).close()
    assert rec.records == []


def test_context_log_level_filters():
    rec = Recorder()
    cbgpu.set_log_callback(rec, CBG_LOG_TRACE)
    Context(CBG_DEVICE_CPU, log_level=CBG_LOG_INFO).close()
    assert rec.records == []


def test_callback_removed():
    rec = Recorder()
    cbgpu.set_log_callback(rec, CBG_LOG_TRACE)
    cbgpu.set_log_callback(None)
    Context(CBG_DEVICE_CPU).close()
    assert rec.records == []


def test_silent_by_default(capfd):
    with Context(CBG_DEVICE_CPU) as c:
        Pool(c, np.zeros((2, 2))).close()
        with pytest.raises(cbgpu.CbgError):
            Pool(c, np.zeros((2, 2)), label=np.zeros(3))
    out, err = capfd.readouterr()
    assert out == "" and err == ""


@pytest.mark.parametrize("level", [-1, 7])
def test_log_callback_level_out_of_range(level):
    with expect_error(CBG_ERR_INVALID_ARGUMENT, f"min_level {level}"):
        cbgpu.set_log_callback(Recorder(), level)
    assert_status(lib.cbg_set_log_callback(cbg_log_fn(), None, level), CBG_ERR_INVALID_ARGUMENT,
                  "min_level")


@pytest.mark.parametrize("value,expected", [("1", True), ("0", False), ("", False)])
def test_strict_env_in_build_info(value, expected):
    # build_info is computed once per process: look at it from a fresh one.
    env = dict(os.environ, CBGPU_STRICT_NO_D2H=value,
               PYTHONPATH=str(Path(cbgpu.__file__).resolve().parents[1]))
    script = "import cbgpu; print(cbgpu.build_info()['strict_no_d2h_env'])"
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(expected)


def test_every_status_name_exported():
    for code, name in cbgpu.STATUS_NAMES.items():
        assert getattr(cbgpu, name) == code
    assert len(cbgpu.STATUS_NAMES) == 20


def test_context_communicator_from_a_unique_id_fields():
    """Context's nccl_id fields reach the library's checks; nccl_unique_id needs NCCL; abort without a
    communicator is a no-op. (Training over several GPUs: tests/python/test_dask.py, scripts/device-dask.sh.)"""
    with pytest.raises(ValueError, match="128"):
        cbgpu.Context(cbgpu.CBG_DEVICE_CPU, nccl_id=b"short", nccl_id_size=2)
    with pytest.raises(cbgpu.CbgError, match="GPU context") as e:
        cbgpu.Context(cbgpu.CBG_DEVICE_CPU, nccl_id=bytes(128), nccl_id_rank=0, nccl_id_size=1)
    assert e.value.code == cbgpu.CBG_ERR_INVALID_ARGUMENT
    with pytest.raises(cbgpu.CbgError, match="nccl_id_rank 3 of nccl_id_size 2"):
        cbgpu.Context(cbgpu.CBG_DEVICE_CPU, nccl_id=bytes(128), nccl_id_rank=3, nccl_id_size=2)
    with pytest.raises(cbgpu.CbgError, match="nccl_timeout_ms"):
        cbgpu.Context(cbgpu.CBG_DEVICE_CPU, nccl_timeout_ms=0)
    with cbgpu.Context(cbgpu.CBG_DEVICE_CPU) as ctx:
        ctx.abort()  # nothing to abort
    if cbgpu.build_info()["nccl"] == "available":
        assert len(cbgpu.nccl_unique_id()) == 128
    else:
        with pytest.raises(cbgpu.CbgError, match="NCCL") as e:
            cbgpu.nccl_unique_id()
        assert e.value.code == cbgpu.CBG_ERR_UNSUPPORTED
