# SPDX-License-Identifier: Apache-2.0
"""cbg_tensor_copy between NumPy arrays on a CPU context: values, layouts, refusals, copy accounting."""
import ctypes
import threading

import numpy as np
import pytest

from cbgpu import (CBG_ERR_DTYPE, CBG_ERR_READ_ONLY, CBG_ERR_SHAPE, CBG_ERR_NULL_POINTER,
                   last_error, tensor_copy)
from cbgpu._capi import CBG_TENSOR_DLPACK_VERSIONED, cbg_tensor_ref_t, lib
from cbgpu._dlpack import export
from helpers import LegacyProducer, assert_status, expect_error

ALL_DTYPES = [np.float16, np.float32, np.float64, np.int8, np.int16, np.int32, np.int64, np.uint8,
              np.uint16, np.uint32, np.uint64, np.bool_]


def only_h2h(stats, nbytes, calls):
    """Asserts the counters show exactly `calls` host-to-host copies of `nbytes` in all, nothing else."""
    expected = dict.fromkeys(stats, 0)
    expected.update(h2h_bytes=nbytes, h2h_calls=calls)
    assert stats == expected


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_contiguous_every_dtype(ctx, dtype):
    src = (np.arange(24) % 7).astype(dtype).reshape(4, 6)
    dst = np.zeros_like(src)
    tensor_copy(ctx, dst, src)
    np.testing.assert_array_equal(dst, src)
    only_h2h(ctx.copy_stats(), src.nbytes, 1)


def test_strided_1d_source(ctx):
    base = np.arange(20, dtype=np.float32)
    dst = np.zeros(10, np.float32)
    tensor_copy(ctx, dst, base[::2])
    np.testing.assert_array_equal(dst, base[::2])
    only_h2h(ctx.copy_stats(), dst.nbytes, 1)  # one pitched copy of 10 single elements


def test_row_slice_is_one_pitched_copy(ctx):
    base = np.arange(8 * 5, dtype=np.int32).reshape(8, 5)
    src = base[::2, :]  # rows are contiguous, pitch of two rows
    dst = np.zeros((4, 5), np.int32)
    tensor_copy(ctx, dst, src)
    np.testing.assert_array_equal(dst, src)
    only_h2h(ctx.copy_stats(), dst.nbytes, 1)


def test_transposed_source(ctx):
    base = np.arange(3 * 4, dtype=np.float64).reshape(3, 4)
    dst = np.zeros((4, 3))
    tensor_copy(ctx, dst, base.T)
    np.testing.assert_array_equal(dst, base.T)
    # One pitched copy along the longer dimension (4) for each index of the shorter one (3).
    only_h2h(ctx.copy_stats(), dst.nbytes, 3)


def test_strided_destination(ctx):
    big = np.zeros((6, 8), np.int64)
    src = np.arange(3 * 4, dtype=np.int64).reshape(3, 4)
    tensor_copy(ctx, big[::2, 1::2], src)
    np.testing.assert_array_equal(big[::2, 1::2], src)
    assert big[1::2].sum() == 0 and big[:, ::2].sum() == 0, "wrote outside the destination view"
    only_h2h(ctx.copy_stats(), src.nbytes, 3)


def test_fortran_to_c_order(ctx):
    src = np.asfortranarray(np.arange(12, dtype=np.float32).reshape(3, 4))
    dst = np.zeros((3, 4), np.float32)
    tensor_copy(ctx, dst, src)
    np.testing.assert_array_equal(dst, src)


@pytest.mark.parametrize("shape", [(2, 3, 4), (2, 1, 3, 2)])
def test_higher_rank_strided(ctx, shape):
    base = np.arange(np.prod(shape) * 2, dtype=np.float64).reshape(*shape[:-1], shape[-1] * 2)
    src = base[..., ::2]
    dst = np.zeros(shape)
    tensor_copy(ctx, dst, src)
    np.testing.assert_array_equal(dst, src)
    assert ctx.copy_stats()["h2h_bytes"] == dst.nbytes


def test_rank_above_limit(ctx):
    shape = (1, 1, 1, 1, 2)
    with expect_error(CBG_ERR_SHAPE, "rank 5"):
        tensor_copy(ctx, np.zeros(shape), np.zeros(shape))


def test_scalar(ctx):
    src, dst = np.array(3.5), np.array(0.0)
    tensor_copy(ctx, dst, src)
    assert dst == 3.5
    only_h2h(ctx.copy_stats(), 8, 1)


def test_empty_copies_nothing(ctx):
    tensor_copy(ctx, np.zeros((0, 3)), np.zeros((0, 3)))
    only_h2h(ctx.copy_stats(), 0, 0)


def test_stats_accumulate_and_reset(ctx):
    src, dst = np.ones(100, np.float32), np.zeros(100, np.float32)
    for _ in range(3):
        tensor_copy(ctx, dst, src)
    only_h2h(ctx.copy_stats(), 3 * 400, 3)
    ctx.reset_copy_stats()
    only_h2h(ctx.copy_stats(), 0, 0)


def test_failed_copy_counts_nothing(ctx):
    with expect_error(CBG_ERR_DTYPE):
        tensor_copy(ctx, np.zeros(3, np.float32), np.zeros(3, np.float64))
    only_h2h(ctx.copy_stats(), 0, 0)


def test_dtype_mismatch(ctx):
    with expect_error(CBG_ERR_DTYPE, "source dtype float64 differs from destination dtype int64"):
        tensor_copy(ctx, np.zeros(3, np.int64), np.zeros(3, np.float64))


@pytest.mark.parametrize("dst_shape,src_shape,fragment", [
    ((3, 2), (2, 3), "source shape [2, 3] differs from destination shape [3, 2]"),
    ((6,), (2, 3), "source shape [2, 3] differs from destination shape [6]"),
])
def test_shape_mismatch(ctx, dst_shape, src_shape, fragment):
    with expect_error(CBG_ERR_SHAPE, fragment):
        tensor_copy(ctx, np.zeros(dst_shape), np.zeros(src_shape))


def test_negative_strides(ctx):
    with expect_error(CBG_ERR_SHAPE, "src", "negative stride"):
        tensor_copy(ctx, np.zeros(4), np.arange(4.0)[::-1])


def test_read_only_destination(ctx):
    dst = np.zeros(4)
    dst.flags.writeable = False  # NumPy exports it with DLPACK_FLAG_BITMASK_READ_ONLY
    with expect_error(CBG_ERR_READ_ONLY, "dst", "read-only"):
        tensor_copy(ctx, dst, np.ones(4))
    assert not dst.any()
    only_h2h(ctx.copy_stats(), 0, 0)


def test_read_only_source(ctx):
    src = np.arange(4.0)
    src.flags.writeable = False
    dst = np.zeros(4)
    tensor_copy(ctx, dst, src)
    np.testing.assert_array_equal(dst, src)


def test_legacy_producers(ctx):
    src = np.arange(6, dtype=np.uint16).reshape(2, 3)
    dst = np.zeros((2, 3), np.uint16)
    tensor_copy(ctx, LegacyProducer(dst), LegacyProducer(src))
    np.testing.assert_array_equal(dst, src)


def test_broadcast_source(ctx):
    src = np.broadcast_to(np.arange(3.0), (4, 3))  # stride 0 in dimension 0
    dst = np.zeros((4, 3))
    tensor_copy(ctx, dst, src)
    np.testing.assert_array_equal(dst, src)


def test_last_error_is_thread_local(ctx):
    with expect_error(CBG_ERR_DTYPE):
        tensor_copy(ctx, np.zeros(3, np.int8), np.zeros(3, np.uint8))
    seen = {}

    def other_thread():
        tensor_copy(ctx, np.zeros(3), np.ones(3))  # succeeds: clears only this thread's message
        seen["message"] = last_error()

    t = threading.Thread(target=other_thread)
    t.start()
    t.join()
    assert seen["message"] == ""
    assert "dtype" in last_error()


def test_null_src(ctx):
    dst = export(np.zeros(3))  # keeps the capsule, and so the memory, alive
    dst_ref = dst.borrowed_ref()
    assert_status(lib.cbg_tensor_copy(ctx.handle, ctypes.byref(dst_ref), None), CBG_ERR_NULL_POINTER,
                  "src is NULL")
    null_tensor = cbg_tensor_ref_t(CBG_TENSOR_DLPACK_VERSIONED, None)
    assert_status(lib.cbg_tensor_copy(ctx.handle, ctypes.byref(dst_ref), ctypes.byref(null_tensor)),
                  CBG_ERR_NULL_POINTER, "src: the tensor pointer is NULL")
