# SPDX-License-Identifier: Apache-2.0
"""Categorical input: string, integer and dictionary columns hashed as CatBoost hashes them, through
cbg_pool_from_dlpack (string_columns) and cbg_pool_from_arrow (pyarrow, hand-built Arrow structs,
and CuPy device buffers on a GPU); nulls and malformed input refused by feature and row; Arrow
release callbacks called exactly once."""
import ctypes
import json

import numpy as np
import pytest

import cbgpu
from cbgpu import (CBG_ERR_BAD_DATA, CBG_ERR_DTYPE, CBG_ERR_INVALID_ARGUMENT, Context, Pool)
from cbgpu._capi import (ARROW_DEVICE_CPU, ARROW_DEVICE_CUDA, ArrowArray, ArrowDeviceArray, ArrowSchema, lib)
from helpers import expect_error

# Every CityHash length class, empty, non-ASCII UTF-8, and integer-looking text.
VALUES = ["", "a", "b", "17", "-5", "0", "x" * 16, "y" * 17, "z" * 32, "w" * 33, "v" * 64, "u" * 65,
          "long " * 40, "é", "日本語", "Ünïcödé ✓", "emoji 🙂", "tab\tsep", "None"]


def arrow_layout(strings, wide=False):
    """(offsets, bytes) of `strings` in Arrow's utf8 (int32) or large_utf8 (int64) layout."""
    enc = [s.encode("utf-8") for s in strings]
    offsets = np.zeros(len(enc) + 1, dtype=np.int64 if wide else np.int32)
    offsets[1:] = np.cumsum([len(e) for e in enc])
    data = np.frombuffer(b"".join(enc), dtype=np.uint8).copy() if enc and offsets[-1] else np.zeros(0, np.uint8)
    return offsets, data


def scalar_hashes(values):
    return np.array([cbgpu.cat_hash(v) for v in values], dtype=np.uint32)


# ---- string and dictionary columns as tensors (cbg_pool_from_dlpack) --------------------------------------


@pytest.mark.parametrize("wide", [False, True], ids=["utf8", "large_utf8"])
def test_string_column_hashes_equal_catboost_hash(ctx, wide):
    rng = np.random.default_rng(1)
    rows = [VALUES[i] for i in rng.integers(0, len(VALUES), 500)]
    offsets, data = arrow_layout(rows, wide)
    x = rng.normal(size=(500, 2)).astype(np.float32)
    with Pool(ctx, columns=[x[:, 0], None, x[:, 1]], string_columns=[(1, offsets, data)]) as p:
        assert p.info()["n_features"] == 3 and p.info()["n_cat_features"] == 1
        assert p.is_categorical(1) and not p.is_categorical(0)
        assert np.array_equal(p.cat_hashes(1), scalar_hashes(rows))


def test_dictionary_column_maps_codes(ctx):
    offsets, data = arrow_layout(VALUES)
    codes = np.random.default_rng(2).integers(0, len(VALUES), 300).astype(np.int16)
    with Pool(ctx, string_columns=[(0, offsets, data, codes)]) as p:
        assert np.array_equal(p.cat_hashes(0), scalar_hashes([VALUES[c] for c in codes]))


def test_integer_columns_hash_as_decimal_text(ctx):
    v = np.array([0, 17, -5, 2**62, -(2**63)], dtype=np.int64)
    with Pool(ctx, columns=[v], cat_features=[0]) as p:
        assert np.array_equal(p.cat_hashes(0), scalar_hashes([str(int(i)) for i in v]))


def test_bad_codes_and_offsets_name_feature_and_row(ctx):
    offsets, data = arrow_layout(["a", "b"])
    with expect_error(CBG_ERR_BAD_DATA, "feature 0", "row 2", "null"):
        Pool(ctx, string_columns=[(0, offsets, data, np.array([0, 1, -1], dtype=np.int8))])
    bad = offsets.copy()
    bad[1] = 5
    with expect_error(CBG_ERR_BAD_DATA, "feature 0", "row 0"):
        Pool(ctx, string_columns=[(0, bad, data)])
    with expect_error(CBG_ERR_DTYPE, "offsets"):
        Pool(ctx, string_columns=[(0, offsets.astype(np.float32), data)])
    with expect_error(CBG_ERR_INVALID_ARGUMENT, "feature 0", "twice"):
        Pool(ctx, columns=[np.zeros(2, np.float32)], string_columns=[(0, offsets, data)])


def test_catboost_uses_the_same_hashes(ctx, tmp_path):
    """CatBoost's one-hot values (its own hashes) are the hashes of our pool's string column."""
    catboost = pytest.importorskip("catboost")
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(3)
    idx = rng.integers(0, len(VALUES), len(VALUES) * 20)
    rows = [VALUES[i] for i in idx]
    model = catboost.CatBoostRegressor(iterations=60, depth=4, one_hot_max_size=255, verbose=0, thread_count=1,
                                       allow_writing_files=False, random_seed=0)
    model.fit(pd.DataFrame({"c": rows}), idx.astype(float), cat_features=[0])
    model.save_model(str(tmp_path / "m.json"), format="json")
    used = json.loads((tmp_path / "m.json").read_text())["features_info"]["categorical_features"][0]["values"]
    offsets, data = arrow_layout(rows)
    with Pool(ctx, string_columns=[(0, offsets, data)]) as p:
        ours = {int(np.int32(np.uint32(h))) for h in p.cat_hashes(0)}
    assert len(used) >= len(VALUES) // 2, "too few one-hot values to compare"
    assert set(used) <= ours


# ---- Arrow (pyarrow) --------------------------------------------------------------------------------------


@pytest.fixture
def pa():
    return pytest.importorskip("pyarrow")


def test_pyarrow_record_batch(ctx, pa):
    base = pa.total_allocated_bytes()
    rng = np.random.default_rng(4)
    n = 400
    s = [VALUES[i] for i in rng.integers(0, len(VALUES), n)]
    ints = rng.integers(-50, 50, n)
    f = rng.normal(size=n)
    batch = pa.record_batch({
        "f": pa.array(f),
        "s": pa.array(s, pa.string()),
        "ls": pa.array(s, pa.large_string()),
        "d": pa.array(s).dictionary_encode(),
        "i": pa.array(ints, pa.int32()),
        "f32": pa.array(f.astype(np.float32)),
    })
    label = rng.normal(size=n)
    with Pool(ctx, batch.slice(7, 300), label=label[7:307], cat_features=[4]) as p:
        info = p.info()
        assert (info["n_rows"], info["n_features"], info["n_cat_features"]) == (300, 6, 4)
        assert [p.feature_name(j) for j in range(6)] == ["f", "s", "ls", "d", "i", "f32"]
        want = scalar_hashes(s[7:307])
        for j in (1, 2, 3):
            assert np.array_equal(p.cat_hashes(j), want), j
        assert np.array_equal(p.cat_hashes(4), scalar_hashes([str(int(i)) for i in ints[7:307]]))
        assert not p.is_categorical(0) and not p.is_categorical(5)
    del batch
    assert pa.total_allocated_bytes() == base  # the pool released the array it was given


def test_pyarrow_single_arrays_and_names(ctx, pa):
    arr = pa.array(["b", "a", "", "日本語"])
    with Pool(ctx, arr) as p:
        assert np.array_equal(p.cat_hashes(0), scalar_hashes(["b", "a", "", "日本語"]))
    with Pool(ctx, pa.record_batch({"x": [1.0, 2.0]}), feature_names=["renamed"]) as p:
        assert p.feature_name(0) == "renamed"


def test_pyarrow_table_of_chunks(ctx, pa):
    t = pa.concat_tables([pa.table({"s": ["a", "b"], "x": [1.0, 2.0]}), pa.table({"s": ["", "a"], "x": [3.0, 4.0]})])
    with Pool(ctx, t) as p:
        assert p.info()["n_rows"] == 4 and p.feature_name(0) == "s"
        assert np.array_equal(p.cat_hashes(0), scalar_hashes(["a", "b", "", "a"]))


def test_pyarrow_nulls_are_refused_by_feature_and_row(ctx, pa):
    batch = pa.record_batch({"f": pa.array([1.0, 2.0, 3.0]), "s": pa.array(["a", "b", None])})
    with expect_error(CBG_ERR_BAD_DATA, "arrow column 1", "'s'", "row 2"):
        Pool(ctx, batch)
    with expect_error(CBG_ERR_BAD_DATA, "row 1"):
        Pool(ctx, pa.array(["a", None, "c"]).dictionary_encode())
    with expect_error(CBG_ERR_DTYPE, "'b'"):
        Pool(ctx, pa.record_batch({"flag": pa.array([True, False])}))


# ---- hand-built Arrow structs: ownership, devices --------------------------------------------------------

RELEASE_SCHEMA = ArrowSchema._fields_[7][1]
RELEASE_ARRAY = ArrowArray._fields_[8][1]


class HandArrow:
    """A struct<columns> Arrow array over given buffer addresses, built in ctypes; counts how often
    the top-level release callbacks run (each must run exactly once)."""

    def __init__(self, columns, length, device_type=ARROW_DEVICE_CPU, device_id=0):
        """columns: (name, format, [buffer addresses]) or (name, index format, [validity, codes],
        (dictionary format, [buffers], dictionary length))."""
        self.schema_releases = 0
        self.array_releases = 0
        self._keep = []
        self._noop_schema = RELEASE_SCHEMA(lambda s: None)
        self._noop_array = RELEASE_ARRAY(lambda a: None)

        def on_schema(ptr):
            self.schema_releases += 1
            ctypes.c_void_p.from_address(ctypes.addressof(ptr.contents) + ArrowSchema.release.offset).value = None

        def on_array(ptr):
            self.array_releases += 1
            ctypes.c_void_p.from_address(ctypes.addressof(ptr.contents) + ArrowArray.release.offset).value = None

        self._release_schema = RELEASE_SCHEMA(on_schema)
        self._release_array = RELEASE_ARRAY(on_array)
        child_schemas, child_arrays = [], []
        for col in columns:
            name, fmt, buffers = col[:3]
            cs = self._schema(fmt, name)
            ca = self._array(buffers, length)
            if len(col) > 3:
                dfmt, dbuffers, dlen = col[3]
                cs.dictionary = ctypes.pointer(self._schema(dfmt, b""))
                ca.dictionary = ctypes.pointer(self._array(dbuffers, dlen))
            child_schemas.append(ctypes.pointer(cs))
            child_arrays.append(ctypes.pointer(ca))
        self.schema = self._schema(b"+s", b"", release=self._release_schema)
        self.schema.n_children = len(columns)
        self.schema.children = self._hold((ctypes.POINTER(ArrowSchema) * len(columns))(*child_schemas))
        self.array = ArrowDeviceArray()
        self.array.array = self._array([0], length, release=self._release_array)
        self.array.array.n_children = len(columns)
        self.array.array.children = self._hold((ctypes.POINTER(ArrowArray) * len(columns))(*child_arrays))
        self.array.device_type = device_type
        self.array.device_id = device_id

    def _hold(self, obj):
        self._keep.append(obj)
        return obj

    def _schema(self, fmt, name, release=None):
        s = self._hold(ArrowSchema())
        s.format = fmt
        s.name = name
        s.release = release or self._noop_schema
        return s

    def _array(self, buffers, length, release=None):
        a = self._hold(ArrowArray())
        a.length = length
        a.null_count = 0
        a.n_buffers = len(buffers)
        a.buffers = self._hold((ctypes.c_void_p * len(buffers))(*buffers))
        a.release = release or self._noop_array
        return a

    def call(self, ctx, desc=None):
        out = ctypes.c_void_p()
        status = lib.cbg_pool_from_arrow(ctx.handle, desc, ctypes.addressof(self.schema),
                                         ctypes.addressof(self.array), ctypes.byref(out))
        return status, out.value


def test_release_callbacks_run_once_on_success_and_error(ctx):
    offsets, data = arrow_layout(["a", "bb", "ccc"])
    floats = np.arange(3, dtype=np.float64)
    cols = [(b"f", b"g", [0, floats.ctypes.data]), (b"s", b"u", [0, offsets.ctypes.data, data.ctypes.data])]
    h = HandArrow(cols, 3)
    status, pool = h.call(ctx)
    assert status == 0, cbgpu.last_error()
    assert h.schema_releases == 1 and h.array_releases == 0  # the pool keeps the array until freed
    assert not h.array.array.release  # moved: the caller's struct is marked released
    hashes = np.empty(3, np.uint32)
    assert lib.cbg_pool_cat_hashes(pool, 1, hashes.ctypes.data_as(ctypes.POINTER(ctypes.c_uint32)), 3) == 0
    assert np.array_equal(hashes, scalar_hashes(["a", "bb", "ccc"]))
    assert lib.cbg_pool_free(pool) == 0
    assert h.array_releases == 1

    bad = HandArrow([(b"s", b"z", [0, floats.ctypes.data])], 3)  # binary: unsupported
    status, pool = bad.call(ctx)
    assert status == CBG_ERR_DTYPE and pool is None
    assert (bad.schema_releases, bad.array_releases) == (1, 1)
    # Already released structs are refused, and nothing is called twice.
    status, _ = bad.call(ctx)
    assert status == CBG_ERR_INVALID_ARGUMENT
    assert (bad.schema_releases, bad.array_releases) == (1, 1)


def test_hand_built_dictionary_and_offset(ctx):
    offsets, data = arrow_layout(VALUES)
    codes = np.array([3, 0, 5, 18, 7], dtype=np.uint8)
    h = HandArrow([(b"d", b"C", [0, codes.ctypes.data], (b"u", [0, offsets.ctypes.data, data.ctypes.data],
                                                       len(VALUES)))], 5)
    h.array.array.offset = 1  # rows 1..4 of the struct
    h.array.array.length = 4
    status, pool = h.call(ctx)
    assert status == 0, cbgpu.last_error()
    hashes = np.empty(4, np.uint32)
    assert lib.cbg_pool_cat_hashes(pool, 0, hashes.ctypes.data_as(ctypes.POINTER(ctypes.c_uint32)), 4) == 0
    assert np.array_equal(hashes, scalar_hashes([VALUES[c] for c in codes[1:]]))
    lib.cbg_pool_free(pool)
    assert h.array_releases == 1


def test_cuda_arrays_are_refused_by_a_cpu_context(ctx):
    h = HandArrow([(b"f", b"g", [0, 16])], 1, device_type=ARROW_DEVICE_CUDA)
    status, _ = h.call(ctx)
    assert status == cbgpu.CBG_ERR_DEVICE
    assert (h.schema_releases, h.array_releases) == (1, 1)


# ---- GPU: device strings through CuPy ----------------------------------------------------------------------


def test_gpu_device_arrow_strings_equal_host(cp):
    rng = np.random.default_rng(6)
    rows = [VALUES[i] for i in rng.integers(0, len(VALUES), 5000)]
    offsets, data = arrow_layout(rows, wide=True)
    codes = rng.integers(0, len(VALUES), 5000).astype(np.int32)
    doffsets, ddata = arrow_layout(VALUES)
    d_off, d_data, d_codes = cp.asarray(offsets), cp.asarray(data), cp.asarray(codes)
    d_doff, d_ddata = cp.asarray(doffsets), cp.asarray(ddata)
    event = cp.cuda.Event()
    event.record()
    event_ptr = ctypes.c_void_p(event.ptr)
    with Context(0) as gpu:
        h = HandArrow([(b"s", b"U", [0, d_off.data.ptr, d_data.data.ptr]),
                       (b"d", b"i", [0, d_codes.data.ptr], (b"u", [0, d_doff.data.ptr, d_ddata.data.ptr],
                                                           len(VALUES)))], 5000, ARROW_DEVICE_CUDA, 0)
        h.array.sync_event = ctypes.addressof(event_ptr)
        status, pool = h.call(gpu)
        assert status == 0, cbgpu.last_error()
        out = np.empty(5000, np.uint32)
        assert lib.cbg_pool_cat_hashes(pool, 0, out.ctypes.data_as(ctypes.POINTER(ctypes.c_uint32)), 5000) == 0
        assert np.array_equal(out, scalar_hashes(rows))
        assert lib.cbg_pool_cat_hashes(pool, 1, out.ctypes.data_as(ctypes.POINTER(ctypes.c_uint32)), 5000) == 0
        assert np.array_equal(out, scalar_hashes([VALUES[c] for c in codes]))
        lib.cbg_pool_free(pool)
        assert h.array_releases == 1

        # Device string columns through cbg_pool_from_dlpack as well, and a device null named by row.
        with Pool(gpu, string_columns=[(0, d_off, d_data)]) as p:
            assert np.array_equal(p.cat_hashes(0), scalar_hashes(rows))
        validity = cp.asarray(np.array([0xff, 0xfb], dtype=np.uint8))  # row 10 is null
        h = HandArrow([(b"s", b"U", [validity.data.ptr, d_off.data.ptr, d_data.data.ptr])], 16, ARROW_DEVICE_CUDA)
        h.array.array.children[0].contents.null_count = -1  # unknown: the bitmap is scanned
        status, _ = h.call(gpu)
        assert status == CBG_ERR_BAD_DATA and "row 10" in cbgpu.last_error()


# ---- end to end: a CatBoost model applied to a pool of string columns ----------------------------------


def test_catboost_model_predicts_from_string_pools(ctx, tmp_path, pa):
    """One-hot and CTR features of a CatBoost model read our pool's hashes: the predictions of a pool
    built from Arrow strings equal CatBoost's own."""
    catboost = pytest.importorskip("catboost")
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(9)
    n = 600
    small = [VALUES[i] for i in rng.integers(0, 3, n)]           # one-hot (3 values)
    big = [VALUES[i] for i in rng.integers(0, len(VALUES), n)]   # CTRs
    x = rng.normal(size=n)
    y = x + np.array([len(s) % 3 for s in big]) + (np.array(small) == "a")
    df = pd.DataFrame({"x": x, "small": small, "big": big})
    model = catboost.CatBoostRegressor(iterations=30, depth=4, one_hot_max_size=3, verbose=0, thread_count=1,
                                       allow_writing_files=False, random_seed=0)
    model.fit(df, y, cat_features=[1, 2])
    path = tmp_path / "m.cbm"
    model.save_model(str(path))
    expected = model.predict(df)
    batch = pa.record_batch({"x": pa.array(x.astype(np.float32)), "small": pa.array(small),
                             "big": pa.array(big).dictionary_encode()})
    with cbgpu.Model.load(path) as m, Pool(ctx, batch) as p:
        got = m.predict(p, prediction_type="RawFormulaVal")
    assert np.allclose(np.ravel(got), expected, rtol=1e-6, atol=1e-6)


def test_gpu_predictions_from_device_string_pools(cp, tmp_path):
    """The GPU evaluator reads the hashes of device string and dictionary columns: CatBoost's predictions."""
    catboost = pytest.importorskip("catboost")
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(10)
    n = 2000
    small = [VALUES[i] for i in rng.integers(0, 3, n)]
    codes = rng.integers(0, len(VALUES), n).astype(np.int32)
    big = [VALUES[c] for c in codes]
    x = rng.normal(size=n).astype(np.float32)
    y = x + np.array([len(s) % 3 for s in big]) + (np.array(small) == "a")
    df = pd.DataFrame({"x": x, "small": small, "big": big})
    model = catboost.CatBoostRegressor(iterations=30, depth=4, one_hot_max_size=3, verbose=0, thread_count=1,
                                       allow_writing_files=False, random_seed=0)
    model.fit(df, y, cat_features=[1, 2])
    model.save_model(str(tmp_path / "m.cbm"))
    offsets, data = arrow_layout(small)
    doffsets, ddata = arrow_layout(VALUES, wide=True)
    with Context(0) as gpu, cbgpu.Model.load(tmp_path / "m.cbm") as m:
        with Pool(gpu, columns=[cp.asarray(x), None, None],
                  string_columns=[(1, cp.asarray(offsets), cp.asarray(data)),
                                  (2, cp.asarray(doffsets), cp.asarray(ddata), cp.asarray(codes))]) as p:
            got = m.predict(p, prediction_type="RawFormulaVal", output_type="numpy")
    assert np.allclose(np.ravel(got), model.predict(df), rtol=1e-6, atol=1e-6)
