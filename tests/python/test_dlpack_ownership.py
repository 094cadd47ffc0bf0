# SPDX-License-Identifier: Apache-2.0
"""DLPack ownership: consumed tensors are deleted exactly once (on pool free, or on any failure);
borrowed ones never. Also the validation of hand-built DLPack structs."""
import ctypes

import numpy as np
import pytest

from cbgpu import (CBG_DEVICE_CPU, CBG_ERR_DEVICE, CBG_ERR_DLPACK_VERSION, CBG_ERR_DTYPE,
                   CBG_ERR_INVALID_ARGUMENT, CBG_ERR_INVALID_HANDLE, CBG_ERR_NULL_POINTER,
                   CBG_ERR_READ_ONLY, CBG_ERR_SHAPE, CBG_OK, CbgError, Context, Pool, tensor_copy)
from cbgpu._capi import cbg_pool_desc_t, cbg_tensor_ref_t, lib
from cbgpu._dlpack import (DLPACK_FLAG_BITMASK_READ_ONLY, kDLBfloat, kDLComplex, kDLCUDA,
                           kDLCUDAManaged, kDLFloat, kDLInt, kDLOpaqueHandle, kDLUInt)
from helpers import LegacyProducer, ManagedTensor, assert_status, expect_error, refcount

# ---- NumPy producers: the array's reference count shows the deleter ran exactly once ---------------------


def test_refcount_while_pool_lives(ctx):
    x, y, w, b = np.zeros((5, 2)), np.zeros(5), np.ones(5), np.zeros((5, 3))
    before = [refcount(a) for a in (x, y, w, b)]
    p = Pool(ctx, x, label=y, weight=w, baseline=b)
    assert [refcount(a) for a in (x, y, w, b)] == [n + 1 for n in before]
    p.close()
    assert [refcount(a) for a in (x, y, w, b)] == before


def test_refcount_columns(ctx):
    cols = [np.zeros(4, np.float32), np.zeros(4, np.int64)]
    before = [refcount(c) for c in cols]
    with Pool(ctx, columns=cols):
        assert [refcount(c) for c in cols] == [n + 1 for n in before]
    assert [refcount(c) for c in cols] == before


def test_refcount_after_failed_call(ctx):
    x, y, w = np.zeros((4, 2)), np.zeros(5), np.ones(4)  # label has the wrong row count
    before = [refcount(a) for a in (x, y, w)]
    with expect_error(CBG_ERR_SHAPE, "label has 5 rows"):
        Pool(ctx, x, label=y, weight=w)
    assert [refcount(a) for a in (x, y, w)] == before


@pytest.mark.parametrize("bad", [
    dict(cat_features=[7]), dict(feature_names=["a"]), dict(baseline=np.zeros((4, 1, 1))),
], ids=["cat-index", "names", "baseline-rank"])
def test_refcount_after_other_failures(ctx, bad):
    x, y = np.zeros((4, 2), np.int32), np.zeros(4)
    before = [refcount(x), refcount(y)]
    with pytest.raises(CbgError):
        Pool(ctx, x, label=y, **bad)
    assert [refcount(x), refcount(y)] == before


def test_refcount_after_python_side_failure(ctx):
    # The second object cannot be exported: the first capsule was never handed over, so its own
    # destructor must release the array.
    x = np.zeros((4, 2))
    before = refcount(x)
    with pytest.raises(TypeError):
        Pool(ctx, x, label=[0, 1, 2, 3])
    assert refcount(x) == before


def test_refcount_closed_context():
    x = np.zeros((4, 2))
    before = refcount(x)
    c = Context(CBG_DEVICE_CPU)
    c.close()
    with pytest.raises(ValueError, match="closed"):
        Pool(c, x)
    assert refcount(x) == before


def test_legacy_producer(ctx):
    x = np.zeros((4, 2))
    before = refcount(x)
    p = Pool(ctx, LegacyProducer(x))
    assert refcount(x) == before + 1
    p.close()
    assert refcount(x) == before


def test_legacy_producer_failure(ctx):
    x = np.zeros((4, 2))
    before = refcount(x)
    with expect_error(CBG_ERR_SHAPE):
        Pool(ctx, LegacyProducer(x), label=LegacyProducer(np.zeros(3)))
    assert refcount(x) == before


def test_capsule_can_be_passed_directly(ctx):
    x = np.zeros((4, 2))
    before = refcount(x)
    capsule = x.__dlpack__(max_version=(1, 0))
    with Pool(ctx, capsule) as p:
        assert p.info()["n_rows"] == 4
        with pytest.raises(ValueError, match="used_dltensor_versioned"):
            Pool(ctx, capsule)  # already consumed
    del capsule
    assert refcount(x) == before


# ---- hand-built structs: deleter calls counted directly -----------------------------------------------------


def raw_pool(ctx_handle, *, features=None, label=None, out=True):
    """Calls cbg_pool_from_dlpack directly; returns (status, handle)."""
    desc = cbg_pool_desc_t()
    lib.cbg_pool_desc_init(ctypes.byref(desc))
    if features is not None:
        desc.features = features
    if label is not None:
        desc.label = label
    handle = ctypes.c_void_p()
    status = lib.cbg_pool_from_dlpack(ctx_handle, ctypes.byref(desc),
                                      ctypes.byref(handle) if out else None)
    return status, handle.value


@pytest.mark.parametrize("legacy", [False, True], ids=["versioned", "legacy"])
def test_deleted_once_on_free(ctx, legacy):
    t = ManagedTensor(legacy=legacy)
    with Pool(ctx, t.ref()) as p:
        assert p.info()["n_rows"] == 4
        assert t.deleted == 0
    t.assert_deleted_once()


@pytest.mark.parametrize("version", [(2, 0), (0, 8), (3, 1)])
def test_unsupported_major_version(ctx, version):
    t = ManagedTensor(version=version)
    with expect_error(CBG_ERR_DLPACK_VERSION, f"version {version[0]}.{version[1]}"):
        Pool(ctx, t.ref())
    t.assert_deleted_once()


def test_newer_minor_version_accepted(ctx):
    t = ManagedTensor(version=(1, 7))
    Pool(ctx, t.ref()).close()
    t.assert_deleted_once()


def test_read_only_input_is_fine_for_a_pool(ctx):
    t = ManagedTensor(flags=DLPACK_FLAG_BITMASK_READ_ONLY)
    Pool(ctx, t.ref()).close()
    t.assert_deleted_once()


@pytest.mark.parametrize("device,fragment", [
    ((kDLCUDA, 0), "kDLCUDA device 0"),
    ((kDLCUDAManaged, 0), "kDLCUDAManaged"),
    ((4, 0), "device type 4"),  # kDLOpenCL
    ((10, 0), "device type 10"),  # kDLROCM
])
def test_device_refused_on_cpu_context(ctx, device, fragment):
    t = ManagedTensor(device=device)
    with expect_error(CBG_ERR_DEVICE, fragment):
        Pool(ctx, t.ref())
    t.assert_deleted_once()


@pytest.mark.parametrize("dtype,fragment", [
    ((kDLComplex, 64, 1), "code=5"),
    ((kDLBfloat, 16, 1), "code=4"),
    ((kDLFloat, 32, 2), "lanes=2"),
    ((kDLFloat, 8, 1), "bits=8"),
    ((kDLInt, 128, 1), "bits=128"),
    ((kDLUInt, 1, 1), "bits=1"),
    ((kDLOpaqueHandle, 64, 1), "code=3"),
    ((6, 16, 1), "code=6"),  # bool must be 8 bits
])
def test_unsupported_dtype(ctx, dtype, fragment):
    t = ManagedTensor(dtype=dtype)
    with expect_error(CBG_ERR_DTYPE, fragment):
        Pool(ctx, t.ref())
    t.assert_deleted_once()


@pytest.mark.parametrize("fields,code,fragment", [
    (dict(strides=[-1, 4]), CBG_ERR_SHAPE, "negative stride"),
    (dict(shape=[4, -3]), CBG_ERR_SHAPE, "negative extent"),
    (dict(null_shape=True), CBG_ERR_SHAPE, "shape is NULL"),
    (dict(byte_offset=2), CBG_ERR_SHAPE, "not aligned"),
    (dict(data=None), CBG_ERR_NULL_POINTER, "data pointer is NULL"),
], ids=["negative-stride", "negative-extent", "null-shape", "misaligned-offset", "null-data"])
def test_bad_layout(ctx, fields, code, fragment):
    t = ManagedTensor(**fields)
    with expect_error(code, "features", fragment):
        Pool(ctx, t.ref())
    t.assert_deleted_once()


def test_misaligned_data_pointer(ctx):
    storage = np.zeros(16, np.float64)
    t = ManagedTensor(storage, data=storage.ctypes.data + 4, shape=[2, 2], strides=[2, 1])
    with expect_error(CBG_ERR_SHAPE, "not aligned to the 8-byte element size"):
        Pool(ctx, t.ref())
    t.assert_deleted_once()


def test_null_data_with_zero_size_is_fine(ctx):
    t = ManagedTensor(data=None, shape=[0, 3], strides=[3, 1])
    with Pool(ctx, t.ref()) as p:
        assert p.info()["n_rows"] == 0
    t.assert_deleted_once()


def test_null_deleter_is_allowed(ctx):
    t = ManagedTensor(with_deleter=False)
    Pool(ctx, t.ref()).close()
    assert t.deleted == 0


def test_every_consumed_tensor_deleted_on_failure(ctx):
    features, label = ManagedTensor(), ManagedTensor(np.zeros(4), version=(2, 0))
    legacy_weight = ManagedTensor(np.ones(4), legacy=True)
    with expect_error(CBG_ERR_DLPACK_VERSION):
        Pool(ctx, features.ref(), label=label.ref(), weight=legacy_weight.ref())
    for t in (features, label, legacy_weight):
        t.assert_deleted_once()


def test_columns_deleted_on_failure(ctx):
    cols = [ManagedTensor(np.zeros(4)), ManagedTensor(np.zeros(3)), ManagedTensor(np.zeros(4))]
    with expect_error(CBG_ERR_SHAPE, "column 1 has 3 rows"):
        Pool(ctx, columns=[c.ref() for c in cols])
    for c in cols:
        c.assert_deleted_once()


def test_borrowed_dltensor_never_deleted(ctx):
    t = ManagedTensor()
    with Pool(ctx, t.dltensor_ref()) as p:
        assert p.info()["n_rows"] == 4
    assert t.deleted == 0
    bad = ManagedTensor(strides=[-1, 4])
    with expect_error(CBG_ERR_SHAPE):
        Pool(ctx, bad.dltensor_ref())
    assert bad.deleted == 0


def test_deleted_when_out_is_null(ctx):
    t = ManagedTensor()
    status, _ = raw_pool(ctx.handle, features=t.ref(), out=False)
    assert_status(status, CBG_ERR_NULL_POINTER, "out is NULL")
    t.assert_deleted_once()


def test_deleted_when_ctx_is_null():
    t = ManagedTensor()
    status, _ = raw_pool(None, features=t.ref())
    assert_status(status, CBG_ERR_NULL_POINTER, "ctx is NULL")
    t.assert_deleted_once()


def test_deleted_when_ctx_is_stale():
    c = Context(CBG_DEVICE_CPU)
    stale = c.handle
    c.close()
    t = ManagedTensor()
    status, _ = raw_pool(stale, features=t.ref())
    assert_status(status, CBG_ERR_INVALID_HANDLE, "not a live cbg_context_t")
    t.assert_deleted_once()


def test_deleted_when_ctx_is_a_pool(ctx):
    with Pool(ctx, np.zeros((2, 2))) as p:
        t = ManagedTensor()
        status, _ = raw_pool(p.handle, features=t.ref())
        assert_status(status, CBG_ERR_INVALID_HANDLE, "cbg_context_t")
        t.assert_deleted_once()


def test_deleted_when_names_are_short(ctx):
    t = ManagedTensor()
    with expect_error(CBG_ERR_INVALID_ARGUMENT, "1 feature names given"):
        Pool(ctx, t.ref(), feature_names=["only one"])
    t.assert_deleted_once()


@pytest.mark.parametrize("delta", [8, -8])
def test_invalid_struct_size_consumes_nothing(ctx, delta):
    # cbgpu.h: with an invalid struct_size the layout is unknown, so the caller keeps every tensor.
    t = ManagedTensor()
    desc = cbg_pool_desc_t()
    lib.cbg_pool_desc_init(ctypes.byref(desc))
    desc.features = t.ref()
    desc.struct_size += delta
    out = ctypes.c_void_p()
    assert_status(lib.cbg_pool_from_dlpack(ctx.handle, ctypes.byref(desc), ctypes.byref(out)),
                  CBG_ERR_INVALID_ARGUMENT, "struct_size")
    assert t.deleted == 0


def test_pool_free_after_context_free_deletes_once():
    c = Context(CBG_DEVICE_CPU)
    t = ManagedTensor()
    p = Pool(c, t.ref())
    c.close()
    assert t.deleted == 0
    p.close()
    t.assert_deleted_once()


# ---- tensor_copy borrows even the consumed kinds -------------------------------------------------------------


def raw_copy(ctx_handle, dst_ref, src_ref):
    return lib.cbg_tensor_copy(ctx_handle, ctypes.byref(dst_ref), ctypes.byref(src_ref))


@pytest.mark.parametrize("legacy", [False, True], ids=["versioned", "legacy"])
def test_tensor_copy_never_deletes(ctx, legacy):
    src = ManagedTensor(np.arange(6, dtype=np.float32).reshape(2, 3), legacy=legacy)
    dst = ManagedTensor(np.zeros((2, 3), np.float32), legacy=legacy)
    assert_status(raw_copy(ctx.handle, dst.ref(), src.ref()), CBG_OK)
    np.testing.assert_array_equal(dst.array, src.array)
    assert (src.deleted, dst.deleted) == (0, 0)


def test_tensor_copy_failure_never_deletes(ctx):
    src = ManagedTensor(version=(2, 0))
    dst = ManagedTensor()
    assert_status(raw_copy(ctx.handle, dst.ref(), src.ref()), CBG_ERR_DLPACK_VERSION, "src")
    assert (src.deleted, dst.deleted) == (0, 0)


def test_tensor_copy_read_only_flag(ctx):
    src = ManagedTensor(np.ones((4, 3), np.float32))
    dst = ManagedTensor(np.zeros((4, 3), np.float32), flags=DLPACK_FLAG_BITMASK_READ_ONLY)
    assert_status(raw_copy(ctx.handle, dst.ref(), src.ref()), CBG_ERR_READ_ONLY, "dst", "read-only")
    assert not dst.array.any(), "a read-only destination was written"
    # A read-only source is fine.
    src_ro = ManagedTensor(np.ones((4, 3), np.float32), flags=DLPACK_FLAG_BITMASK_READ_ONLY)
    plain_dst = ManagedTensor(np.zeros((4, 3), np.float32))
    assert_status(raw_copy(ctx.handle, plain_dst.ref(), src_ro.ref()), CBG_OK)
    assert plain_dst.array.all()


def test_tensor_copy_borrowed_dltensors(ctx):
    src = ManagedTensor(np.arange(12, dtype=np.int16).reshape(3, 4))
    dst = ManagedTensor(np.zeros((3, 4), np.int16))
    assert_status(raw_copy(ctx.handle, dst.dltensor_ref(), src.dltensor_ref()), CBG_OK)
    np.testing.assert_array_equal(dst.array, src.array)


def test_tensor_copy_cuda_tensor_on_cpu_context(ctx):
    src = ManagedTensor(device=(kDLCUDA, 0))
    dst = ManagedTensor()
    assert_status(raw_copy(ctx.handle, dst.ref(), src.ref()), CBG_ERR_DEVICE, "src", "CPU")
    assert src.deleted == 0


def test_tensor_copy_via_binding_keeps_numpy_refcounts(ctx):
    src, dst = np.arange(5.0), np.zeros(5)
    before = refcount(src), refcount(dst)
    tensor_copy(ctx, dst, src)
    assert (refcount(src), refcount(dst)) == before
    with expect_error(CBG_ERR_SHAPE):
        tensor_copy(ctx, np.zeros(4), src)
    assert (refcount(src), refcount(dst)) == before


def test_unused_invalid_kind_is_not_deleted(ctx):
    # kind NONE with a pointer: nothing to own, nothing to delete; and the slot counts as empty.
    t = ManagedTensor()
    with Pool(ctx, np.zeros((4, 2)), label=cbg_tensor_ref_t(0, t.address)) as p:
        assert p.info()["label_dims"] == 0
    assert t.deleted == 0
    with expect_error(CBG_ERR_INVALID_ARGUMENT, "kind 9"):
        Pool(ctx, np.zeros((4, 2)), label=cbg_tensor_ref_t(9, t.address))
    assert t.deleted == 0
