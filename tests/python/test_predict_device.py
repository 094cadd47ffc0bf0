# SPDX-License-Identifier: Apache-2.0
"""Predictions from pools (cbg_predict_*) against CatBoost itself.

The models in tests/data/apply were trained by CatBoost (tests/data/apply/make_models.py) and come
with CatBoost's predictions for their test rows, so these tests need no catboost package: on the
host (a CPU pool: the host evaluator reading the pool's columns, hashing integer categories) and on
a GPU (CuPy arrays in device memory: the GPU evaluator; skipped without a GPU or CuPy) the
predictions must equal CatBoost's: RawFormulaVal and Class bit for bit, the rest within 1e-12
relative. Where catboost is importable and a GPU is visible, the model-file matrix of
test_model_parity.py is trained live and checked the same way.
"""
from __future__ import annotations

import ctypes
from pathlib import Path

import numpy as np
import pytest

import cbgpu
from cbgpu import _capi
from helpers import assert_status, expect_error

DATA = Path(__file__).resolve().parents[1] / "data" / "apply"
MODELS = sorted(p.stem for p in DATA.glob("*.cbm"))
REL_TOL = 1e-12


def load_case(name):
    data = np.load(DATA / f"{name}.npz")
    expected = {k[len("expected_"):]: data[k] for k in data.files if k.startswith("expected_")}
    return cbgpu.Model.load(DATA / f"{name}.cbm"), data["floats"], data["cats"], set(data["cat_idx"].tolist()), expected


def columns(floats, cats, cat_idx, xp=np):
    """Flat columns: float32 numeric ones, int64 categorical ones (per-column tensors)."""
    return [xp.ascontiguousarray(xp.asarray(cats[:, j] if j in cat_idx else floats[:, j]))
            for j in range(floats.shape[1])]


def compare(kind, expected, got):
    expected = np.asarray(expected, dtype=np.float64).reshape(got.shape)
    if kind in ("RawFormulaVal", "Class"):
        assert np.array_equal(expected, got), f"{kind}: max |diff| {np.max(np.abs(expected - got))}"
        return
    rel = np.abs(expected - got) / np.maximum(np.abs(expected), 1e-300)
    rel[expected == got] = 0.0
    assert rel.max() <= REL_TOL, f"{kind}: max relative diff {rel.max()}"


# ---- host: CPU pools ------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", MODELS)
def test_cpu_pool_predictions_equal_catboost(name):
    model, floats, cats, cat_idx, expected = load_case(name)
    with model, cbgpu.Context(cbgpu.CBG_DEVICE_CPU) as ctx:
        with cbgpu.Pool(ctx, columns=columns(floats, cats, cat_idx), cat_features=sorted(cat_idx)) as pool:
            for kind, want in expected.items():
                got = model.predict(pool, prediction_type=kind)
                assert isinstance(got, np.ndarray) and got.shape == model.output_shape(len(floats), kind)
                compare(kind, want, got)
            leaves = model.leaf_indexes(pool)
            assert leaves.dtype == np.uint32 and leaves.shape == (len(floats), model.info()["n_trees"])


def test_output_shape_and_argument_errors():
    model, floats, cats, cat_idx, _ = load_case("multiclass_ctr")
    with model, cbgpu.Context(cbgpu.CBG_DEVICE_CPU) as ctx:
        assert model.output_shape(10, "Probability") == (10, 3)
        assert model.output_shape(10, "Class") == (10, 1)
        assert model.output_shape(10, tree_begin=2, tree_end=7, leaf_indexes=True) == (10, 5)
        with expect_error(cbgpu.CBG_ERR_UNSUPPORTED):
            model.output_shape(10, "RMSEWithUncertainty")
        with expect_error(cbgpu.CBG_ERR_INVALID_ARGUMENT, "tree range"):
            model.output_shape(10, tree_begin=5, tree_end=4)
        # Raw C calls: NULL desc means the defaults; a wrong struct_size is refused.
        shape = (ctypes.c_int64 * 2)()
        assert_status(_capi.lib.cbg_predict_output_shape(model.handle, None, 4, shape), cbgpu.CBG_OK)
        assert list(shape) == [4, 3]
        d = _capi.cbg_predict_desc_t(struct_size=3)
        assert_status(_capi.lib.cbg_predict_output_shape(model.handle, ctypes.byref(d), 4, shape),
                      cbgpu.CBG_ERR_INVALID_ARGUMENT, "struct_size")
        d = _capi.cbg_predict_desc_t()
        _capi.lib.cbg_predict_desc_init(ctypes.byref(d))
        d.output = 7
        assert_status(_capi.lib.cbg_predict_output_shape(model.handle, ctypes.byref(d), 4, shape),
                      cbgpu.CBG_ERR_INVALID_ARGUMENT, "output")
        with cbgpu.Pool(ctx, columns=columns(floats, cats, cat_idx), cat_features=sorted(cat_idx)) as pool:
            with expect_error(cbgpu.CBG_ERR_SHAPE, "expected [200, 3]"):
                model.predict(pool, prediction_type="Probability", out=np.empty((200, 2)))
            with expect_error(cbgpu.CBG_ERR_DTYPE, "float32 or float64"):
                model.predict(pool, out=np.empty((200, 3), dtype=np.int32))
            # The device entry point refuses a CPU pool.
            out = np.empty((200, 3))
            e = cbgpu._dlpack.export(out)
            ref = e.borrowed_ref()
            assert_status(_capi.lib.cbg_predict_to_device(model.handle, pool.handle, None, ctypes.byref(ref), None),
                          cbgpu.CBG_ERR_NO_DEVICE, "cbg_predict_to_host")
        # Roles must agree: the categorical columns given as numeric ones.
        with cbgpu.Pool(ctx, columns=columns(floats, cats, cat_idx)) as pool:
            with expect_error(cbgpu.CBG_ERR_INVALID_ARGUMENT, "categorical in the model"):
                model.predict(pool)


# ---- GPU: CuPy arrays ---------------------------------------------------------------------------------


@pytest.mark.parametrize("name", MODELS)
def test_gpu_predictions_equal_catboost(cp, name):
    model, floats, cats, cat_idx, expected = load_case(name)
    with model, cbgpu.Context(0, strict_no_d2h=True) as ctx:
        with cbgpu.Pool(ctx, columns=columns(floats, cats, cat_idx, cp), cat_features=sorted(cat_idx)) as pool:
            before = ctx.copy_stats()
            for kind, want in expected.items():
                got = model.predict(pool, prediction_type=kind)
                assert isinstance(got, cp.ndarray)
                compare(kind, want, cp.asnumpy(got))
                got32 = model.predict(pool, prediction_type=kind, dtype=np.float32)
                assert np.allclose(cp.asnumpy(got32), np.asarray(want, dtype=np.float32).reshape(got32.shape),
                                   rtol=1e-6, atol=0)
                # Host output on request (small: allowed in strict mode).
                compare(kind, want, model.predict(pool, prediction_type=kind, output_type="numpy"))
            copied = ctx.copy_stats()["d2h_bytes"] - before["d2h_bytes"]
            asked = sum(np.asarray(w).size * 8 for w in expected.values())
            assert copied == asked, "only the host outputs asked for come back"
            n = model.info()["n_trees"]
            leaves = model.leaf_indexes(pool, tree_begin=1)
            with cbgpu.Context(cbgpu.CBG_DEVICE_CPU) as hctx, \
                    cbgpu.Pool(hctx, columns=columns(floats, cats, cat_idx), cat_features=sorted(cat_idx)) as hpool:
                assert np.array_equal(cp.asnumpy(leaves), model.leaf_indexes(hpool, tree_begin=1))
                assert leaves.shape == (len(floats), n - 1)
                raw_range = model.predict(pool, tree_begin=1, tree_end=max(n - 1, 1))
                assert np.array_equal(cp.asnumpy(raw_range), model.predict(hpool, tree_begin=1, tree_end=max(n - 1, 1)))


def test_gpu_matrix_input_and_out_argument(cp):
    model, floats, cats, cat_idx, expected = load_case("rmse_depth10")
    assert not cat_idx
    with model:
        x = cp.asarray(floats)  # one row-major float32 matrix in device memory
        got = model.predict(x)
        compare("RawFormulaVal", expected["RawFormulaVal"], cp.asnumpy(got))
        out = cp.zeros((len(floats), 1), dtype=cp.float64, order="F")
        assert model.predict(x, out=out) is out
        compare("RawFormulaVal", expected["RawFormulaVal"], cp.asnumpy(out))


def test_gpu_live_catboost_matrix(cp, tmp_path):
    """The model-file matrix of test_model_parity.py, trained now, predicted from CuPy pools."""
    pytest.importorskip("catboost")
    pd = pytest.importorskip("pandas")
    import test_model_parity as parity

    for name in sorted(parity.MATRIX):
        cb_model, cat_names, test_df, types = parity.train(name, tmp_path)
        path = tmp_path / f"{name}.cbm"
        cb_model.save_model(str(path))
        import catboost
        pool = catboost.Pool(test_df, cat_features=cat_names)
        if any(not pd.api.types.is_integer_dtype(test_df[c]) for c in cat_names):
            # String categories would need Arrow-layout device string columns (Pool string_columns=):
            # those are tested against CatBoost's hashes in test_categorical.py; here integers only.
            continue
        cols = [cp.asarray(test_df[c].to_numpy(np.int64 if c in cat_names else np.float32)) for c in test_df.columns]
        cat_idx = [i for i, c in enumerate(test_df.columns) if c in cat_names]
        with cbgpu.Model.load(path) as m, cbgpu.Context(0) as ctx, \
                cbgpu.Pool(ctx, columns=cols, cat_features=cat_idx or None) as dpool:
            for t in types:
                if t in ("Class", "MultiProbability"):
                    continue  # label mapping: covered by the stored cases
                compare(t, cb_model.predict(pool, prediction_type=t), cp.asnumpy(m.predict(dpool, prediction_type=t)))
