# SPDX-License-Identifier: Apache-2.0
"""cbg_pool_from_dlpack with NumPy data on a CPU context: layouts, dtypes, roles, and refusals."""
import ctypes

import numpy as np
import pytest

from cbgpu import (CBG_DEVICE_CPU, CBG_ERR_BAD_DATA, CBG_ERR_DTYPE, CBG_ERR_INVALID_ARGUMENT,
                   CBG_ERR_NULL_POINTER, CBG_ERR_SHAPE, CBG_OK, Context, Pool)
from cbgpu._capi import cbg_pool_desc_t, cbg_pool_info_t, cbg_tensor_ref_t, lib
from helpers import assert_status, expect_error, refcount

ALL_DTYPES = [np.float16, np.float32, np.float64, np.int8, np.int16, np.int32, np.int64, np.uint8,
              np.uint16, np.uint32, np.uint64, np.bool_]


def info_of(rows, features, *, cats=0, label=0, baseline=0, weight=False):
    return {"n_rows": rows, "n_features": features, "n_cat_features": cats, "label_dims": label,
            "baseline_dims": baseline, "has_weight": weight, "device": CBG_DEVICE_CPU}


# ---- layouts ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("order", ["C", "F"])
def test_matrix_orders(ctx, order):
    x = np.asarray(np.arange(20, dtype=np.float32).reshape(5, 4), order=order)
    with Pool(ctx, x) as p:
        assert p.info() == info_of(5, 4)


@pytest.mark.parametrize("make", [
    lambda a: a.T,                 # transposed: column-major view
    lambda a: a[::2, :],           # every other row
    lambda a: a[:, 1::3],          # every third column
    lambda a: a.T[1:, ::2],        # both
], ids=["transposed", "row-slice", "column-slice", "both"])
def test_strided_matrices(ctx, make):
    base = np.arange(7 * 9, dtype=np.float64).reshape(7, 9)
    x = make(base)
    assert not x.flags.c_contiguous
    with Pool(ctx, x) as p:
        assert p.info() == info_of(*x.shape)


def test_columns_of_every_dtype(ctx):
    rows = 6
    columns = [np.arange(rows).astype(t) for t in ALL_DTYPES]
    with Pool(ctx, columns=columns) as p:
        assert p.info() == info_of(rows, len(ALL_DTYPES))


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_matrix_of_every_dtype(ctx, dtype):
    with Pool(ctx, np.ones((3, 2), dtype)) as p:
        assert p.info() == info_of(3, 2)


def test_strided_column(ctx):
    base = np.arange(20, dtype=np.int32)
    with Pool(ctx, columns=[base[::2], np.zeros(10, np.float32)]) as p:
        assert p.info() == info_of(10, 2)


def test_zero_rows(ctx):
    with Pool(ctx, np.zeros((0, 3), np.float32), label=np.zeros(0)) as p:
        assert p.info() == info_of(0, 3, label=1)


# ---- roles ----------------------------------------------------------------------------------------------


def test_label_weight_baseline_1d(ctx):
    n = 8
    with Pool(ctx, np.zeros((n, 3)), label=np.ones(n, np.float32), weight=np.ones(n),
              baseline=np.zeros(n)) as p:
        assert p.info() == info_of(n, 3, label=1, baseline=1, weight=True)


def test_label_and_baseline_2d(ctx):
    n = 8
    with Pool(ctx, np.zeros((n, 3)), label=np.zeros((n, 4)), baseline=np.zeros((n, 5))) as p:
        assert p.info() == info_of(n, 3, label=4, baseline=5)


def test_integer_label(ctx):
    with Pool(ctx, np.zeros((4, 1)), label=np.array([0, 1, 2, 1], np.int64)) as p:
        assert p.info()["label_dims"] == 1


def test_cat_features(ctx):
    cols = [np.zeros(4, np.float32), np.array([1, 2, 1, 3], np.int32), np.arange(4, dtype=np.uint8)]
    with Pool(ctx, columns=cols, cat_features=[2, 1]) as p:
        assert p.info() == info_of(4, 3, cats=2)
        assert [p.is_categorical(i) for i in range(3)] == [False, True, True]


def test_cat_features_in_integer_matrix(ctx):
    with Pool(ctx, np.zeros((4, 3), np.int64), cat_features=[0]) as p:
        assert p.info()["n_cat_features"] == 1
        assert p.is_categorical(0) and not p.is_categorical(2)


def test_feature_names(ctx):
    names = ["age", "zip code", "größe"]  # UTF-8 round trip
    with Pool(ctx, np.zeros((2, 3)), feature_names=names) as p:
        assert [p.feature_name(i) for i in range(3)] == names


def test_no_feature_names_gives_empty(ctx):
    with Pool(ctx, np.zeros((2, 3))) as p:
        assert [p.feature_name(i) for i in range(3)] == ["", "", ""]


@pytest.mark.parametrize("index", [-1, 3, 2**40])
def test_feature_index_out_of_range(ctx, index):
    with Pool(ctx, np.zeros((2, 3))) as p:
        with expect_error(CBG_ERR_INVALID_ARGUMENT, f"index {index}", "outside 0..2"):
            p.feature_name(index)
        with expect_error(CBG_ERR_INVALID_ARGUMENT, f"index {index}", "outside 0..2"):
            p.is_categorical(index)


def test_pool_outlives_its_context():
    x = np.zeros((3, 2))
    before = refcount(x)
    c = Context(CBG_DEVICE_CPU)
    p = Pool(c, x)
    c.close()
    assert p.info() == info_of(3, 2)
    p.close()
    assert refcount(x) == before


def test_info_struct_size(ctx):
    with Pool(ctx, np.zeros((2, 2))) as p:
        info = cbg_pool_info_t(struct_size=8)
        assert_status(lib.cbg_pool_info(p.handle, ctypes.byref(info)), CBG_ERR_INVALID_ARGUMENT,
                      "struct_size is 8")
        info = cbg_pool_info_t(struct_size=ctypes.sizeof(cbg_pool_info_t) + 32)  # a newer caller
        assert_status(lib.cbg_pool_info(p.handle, ctypes.byref(info)), CBG_OK)
        assert (info.n_rows, info.n_features) == (2, 2)


# ---- refusals ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("cats,fragment", [([3], "index 3 is outside 0..2"),
                                           ([-1], "index -1 is outside 0..2"),
                                           ([1, 1], "index 1 is listed twice")])
def test_bad_cat_feature_indices(ctx, cats, fragment):
    with expect_error(CBG_ERR_INVALID_ARGUMENT, fragment):
        Pool(ctx, np.zeros((4, 3), np.int32), cat_features=cats)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_categorical_float_column(ctx, dtype):
    cols = [np.zeros(4, np.int32), np.zeros(4, dtype)]
    with expect_error(CBG_ERR_DTYPE, "categorical feature 1", np.dtype(dtype).name):
        Pool(ctx, columns=cols, cat_features=[1])


def test_too_few_feature_names(ctx):
    with expect_error(CBG_ERR_INVALID_ARGUMENT, "2 feature names given for 3 features"):
        Pool(ctx, np.zeros((2, 3)), feature_names=["a", "b"])


def test_too_many_feature_names(ctx):
    x = np.zeros((2, 3))
    before = refcount(x)
    with expect_error(CBG_ERR_INVALID_ARGUMENT, "4 feature names given for 3 features"):
        Pool(ctx, x, feature_names=["a", "b", "c", "d"])
    assert refcount(x) == before  # the deleter ran once on the failure path


def test_features_and_columns_together(ctx):
    with expect_error(CBG_ERR_INVALID_ARGUMENT, "not both"):
        Pool(ctx, np.zeros((2, 2)), columns=[np.zeros(2)])


def test_no_features(ctx):
    with expect_error(CBG_ERR_INVALID_ARGUMENT, "no features"):
        Pool(ctx, label=np.zeros(2))


@pytest.mark.parametrize("shape", [(6,), (2, 3, 1)])
def test_features_rank(ctx, shape):
    with expect_error(CBG_ERR_SHAPE, "features", f"rank {len(shape)}"):
        Pool(ctx, np.zeros(shape))


def test_matrix_without_columns(ctx):
    with expect_error(CBG_ERR_SHAPE, "no columns"):
        Pool(ctx, np.zeros((5, 0)))


def test_column_lengths_differ(ctx):
    with expect_error(CBG_ERR_SHAPE, "column 1 has 3 rows but column 0 has 4"):
        Pool(ctx, columns=[np.zeros(4), np.zeros(3)])


def test_column_rank(ctx):
    with expect_error(CBG_ERR_SHAPE, "column 0", "rank 2"):
        Pool(ctx, columns=[np.zeros((4, 1))])


@pytest.mark.parametrize("role", ["label", "weight", "baseline"])
def test_role_row_count(ctx, role):
    with expect_error(CBG_ERR_SHAPE, f"{role} has 5 rows but the features have 4"):
        Pool(ctx, np.zeros((4, 2)), **{role: np.zeros(5)})


def test_weight_must_be_1d(ctx):
    with expect_error(CBG_ERR_SHAPE, "weight", "rank 2"):
        Pool(ctx, np.zeros((4, 2)), weight=np.zeros((4, 1)))


@pytest.mark.parametrize("role", ["label", "baseline"])
def test_role_rank_3(ctx, role):
    with expect_error(CBG_ERR_SHAPE, role, "rank 3"):
        Pool(ctx, np.zeros((4, 2)), **{role: np.zeros((4, 1, 1))})


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex_features(ctx, dtype):
    with expect_error(CBG_ERR_DTYPE, "features", "not supported"):
        Pool(ctx, np.zeros((3, 2), dtype))


def test_negative_strides(ctx):
    x = np.arange(12.0).reshape(4, 3)[::-1]
    with expect_error(CBG_ERR_SHAPE, "negative stride"):
        Pool(ctx, x)


def test_producer_stream_on_cpu_context(ctx):
    with expect_error(CBG_ERR_INVALID_ARGUMENT, "producer stream", "CPU"):
        Pool(ctx, np.zeros((2, 2)), producer_stream=0x1234)


def test_non_dlpack_object(ctx):
    with pytest.raises(TypeError, match="does not support DLPack"):
        Pool(ctx, [[1.0, 2.0]])


# ---- value checks (cbgpu.h: "#CBG_ERR_BAD_DATA (NaN/inf label, negative weight, ...)") --------------------

@pytest.mark.parametrize("value", [np.nan, np.inf, -np.inf])
def test_non_finite_label(ctx, value):
    label = np.zeros(4)
    label[2] = value
    with expect_error(CBG_ERR_BAD_DATA, "label"):
        Pool(ctx, np.zeros((4, 2)), label=label)


def test_negative_weight(ctx):
    with expect_error(CBG_ERR_BAD_DATA, "weight"):
        Pool(ctx, np.zeros((4, 2)), weight=np.array([1.0, -0.5, 1.0, 1.0]))


def test_nan_baseline(ctx):
    with expect_error(CBG_ERR_BAD_DATA, "baseline"):
        Pool(ctx, np.zeros((4, 2)), baseline=np.array([0.0, np.nan, 0.0, 0.0]))


def test_nan_features_are_fine(ctx):
    x = np.zeros((4, 2))
    x[1, 1] = np.nan  # missing values are data, not an error
    with Pool(ctx, x) as p:
        assert p.info()["n_rows"] == 4


# ---- raw descriptor errors ---------------------------------------------------------------------------------


def _raw_desc():
    desc = cbg_pool_desc_t()
    assert_status(lib.cbg_pool_desc_init(ctypes.byref(desc)), CBG_OK)
    return desc


def test_desc_init():
    desc = _raw_desc()
    assert desc.struct_size == ctypes.sizeof(cbg_pool_desc_t)
    assert desc.features.kind == 0 and not desc.columns and desc.n_columns == 0
    assert not desc.cat_features and not desc.feature_names and desc.producer_stream is None


def test_null_desc(ctx):
    out = ctypes.c_void_p()
    assert_status(lib.cbg_pool_from_dlpack(ctx.handle, None, ctypes.byref(out)), CBG_ERR_NULL_POINTER,
                  "desc is NULL")


@pytest.mark.parametrize("delta", [-8, 8])
def test_desc_struct_size(ctx, delta):
    desc = _raw_desc()
    desc.struct_size += delta
    out = ctypes.c_void_p()
    assert_status(lib.cbg_pool_from_dlpack(ctx.handle, ctypes.byref(desc), ctypes.byref(out)),
                  CBG_ERR_INVALID_ARGUMENT, "cbg_pool_desc_t.struct_size")


def test_columns_null_with_count(ctx):
    desc = _raw_desc()
    desc.n_columns = 2
    out = ctypes.c_void_p()
    assert_status(lib.cbg_pool_from_dlpack(ctx.handle, ctypes.byref(desc), ctypes.byref(out)),
                  CBG_ERR_NULL_POINTER, "columns is NULL")


def test_cat_features_null_with_count(ctx):
    desc = _raw_desc()
    desc.n_cat_features = 1
    out = ctypes.c_void_p()
    assert_status(lib.cbg_pool_from_dlpack(ctx.handle, ctypes.byref(desc), ctypes.byref(out)),
                  CBG_ERR_NULL_POINTER, "cat_features is NULL")


@pytest.mark.parametrize("kind", [4, -1, 1000])
def test_unknown_tensor_kind(ctx, kind):
    dummy = ctypes.c_double()
    with expect_error(CBG_ERR_INVALID_ARGUMENT, f"kind {kind}"):
        Pool(ctx, cbg_tensor_ref_t(kind, ctypes.addressof(dummy)))
