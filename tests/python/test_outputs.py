# SPDX-License-Identifier: Apache-2.0
"""Where predictions go (output_type), staged_predict and calc_leaf_indexes, against CatBoost.

Host part (CI): NumPy in -> NumPy out, "dlpack" outputs, staged_predict and calc_leaf_indexes equal
to catboost's own on a model catboost trained, the estimators' predict/staged_predict/
calc_leaf_indexes/load_model, errors with the library's message. GPU part (skipped without a GPU,
CuPy or PyTorch): CuPy in -> CuPy out, torch in -> torch out, "numpy" through pinned memory (and the
only device-to-host copy), "dlpack" on the device, GPU == host for every output.
"""
from __future__ import annotations

import numpy as np
import pytest

import cbgpu
from helpers import expect_error

ROWS, FEATURES = 300, 5


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(7)
    x = rng.normal(size=(ROWS, FEATURES)).astype(np.float32)
    y = (x[:, 0] + 0.5 * rng.normal(size=ROWS) > 0).astype(np.int64) + (x[:, 1] > 0.8)
    return x, y


@pytest.fixture(scope="module")
def catboost_multiclass(data, tmp_path_factory):
    """A MultiClass model trained by catboost itself, and the path of its .cbm."""
    catboost = pytest.importorskip("catboost")
    x, y = data
    m = catboost.CatBoostClassifier(iterations=12, depth=3, loss_function="MultiClass", thread_count=1,
                                    verbose=0, random_seed=1, allow_writing_files=False).fit(x, y)
    path = tmp_path_factory.mktemp("outputs") / "multiclass.cbm"
    m.save_model(str(path))
    return m, path


@pytest.fixture(scope="module")
def own_multiclass(data, tmp_path_factory):
    """A MultiClass model trained by cbgpu on the host (for the GPU tests: the GPU machines have no
    catboost package), and its path."""
    x, y = data
    clf = cbgpu.CatBoostClassifier(iterations=12, depth=3, loss_function="MultiClass").fit(x, y)
    path = tmp_path_factory.mktemp("outputs_own") / "multiclass.cbm"
    clf.save_model(path)
    return path


# ---- host ------------------------------------------------------------------------------------------


def test_output_type_on_host(data, catboost_multiclass):
    x, _ = data
    _, path = catboost_multiclass
    with cbgpu.Model.load(path) as model:
        plain = model.predict(x, prediction_type="Probability")
        assert isinstance(plain, np.ndarray) and plain.shape == (ROWS, 3) and plain.dtype == np.float64
        wrapped = model.predict(x, prediction_type="Probability", output_type="dlpack")
        assert isinstance(wrapped, cbgpu.DLPackArray) and wrapped.shape == (ROWS, 3)
        assert wrapped.__dlpack_device__()[0] == 1  # kDLCPU
        assert np.array_equal(np.from_dlpack(wrapped), plain)
        assert np.array_equal(model.predict(x, prediction_type="Probability", output_type="numpy"), plain)
        with pytest.raises(ValueError, match="output_type must be one of"):
            model.predict(x, output_type="jax")
        # A CPU pool: the same, through cbg_predict_to_host.
        with cbgpu.Context(cbgpu.CBG_DEVICE_CPU) as ctx, cbgpu.Pool(ctx, x) as pool:
            assert np.array_equal(model.predict(pool, prediction_type="Probability"), plain)
            leaves = model.leaf_indexes(pool, output_type="dlpack")
            assert np.array_equal(np.from_dlpack(leaves), model.leaf_indexes(x))


def test_dlpack_array_forwards_and_falls_back():
    """DLPackArray passes a consumer's max_version on, and retries without it for a producer that
    predates DLPack 1.0 (legacy capsule)."""
    seen = []

    class Legacy:
        def __init__(self, a):
            self.a = a

        def __dlpack_device__(self):
            return self.a.__dlpack_device__()

        def __dlpack__(self, stream=None):
            seen.append(stream)
            return self.a.__dlpack__()

    base = np.arange(6.0).reshape(3, 2)
    assert np.array_equal(np.from_dlpack(cbgpu.DLPackArray(Legacy(base))), base)
    assert seen == [None]
    capsule = cbgpu.DLPackArray(base).__dlpack__(max_version=(1, 0))
    assert type(capsule).__name__ == "PyCapsule"


@pytest.mark.parametrize("prediction_type", ["RawFormulaVal", "Probability", "Class"])
@pytest.mark.parametrize("start,end,period", [(0, 0, 1), (2, 0, 3), (1, 9, 4)])
def test_staged_predict_equals_catboost(data, catboost_multiclass, prediction_type, start, end, period):
    x, _ = data
    cb, path = catboost_multiclass
    want = list(cb.staged_predict(x, prediction_type=prediction_type, ntree_start=start, ntree_end=end,
                                  eval_period=period))
    with cbgpu.Model.load(path) as model:
        got = list(model.staged_predict(x, prediction_type=prediction_type, ntree_start=start, ntree_end=end,
                                        eval_period=period))
    assert len(got) == len(want)
    for w, g in zip(want, got):
        # CatBoost adds the stages up incrementally, we evaluate each range: rounding only.
        np.testing.assert_allclose(g, np.asarray(w, dtype=np.float64).reshape(g.shape), rtol=1e-12, atol=1e-12)


def test_calc_leaf_indexes_equals_catboost(data, catboost_multiclass):
    x, _ = data
    cb, path = catboost_multiclass
    with cbgpu.Model.load(path) as model:
        for start, end in ((0, 0), (3, 10)):
            want = cb.calc_leaf_indexes(x, ntree_start=start, ntree_end=end)
            got = model.calc_leaf_indexes(x, tree_begin=start, tree_end=end)
            assert got.dtype == np.uint32 and np.array_equal(got, want)
        with pytest.raises(ValueError, match="tree range"):
            next(model.staged_predict(x, ntree_start=12))
        with pytest.raises(ValueError, match="eval_period"):
            next(model.staged_predict(x, eval_period=0))


def test_estimators_on_host(data, tmp_path, catboost_multiclass):
    x, y = data
    reg = cbgpu.CatBoostRegressor(iterations=8, depth=3).fit(x, y.astype(np.float32))
    pred = reg.predict(x)
    assert pred.shape == (ROWS,) and reg.tree_count_ == 8
    stages = list(reg.staged_predict(x, eval_period=3))
    assert len(stages) == 3 and np.array_equal(stages[-1], pred)
    assert np.array_equal(reg.predict(x, ntree_end=6), stages[1])
    assert reg.calc_leaf_indexes(x).shape == (ROWS, 8)
    reg.save_model(tmp_path / "reg.cbm")
    again = cbgpu.CatBoostRegressor().load_model(tmp_path / "reg.cbm")
    assert np.array_equal(again.predict(x), pred)
    assert isinstance(reg.predict(x, output_type="dlpack"), cbgpu.DLPackArray)

    names = np.array(["low", "mid", "high"])
    clf = cbgpu.CatBoostClassifier(iterations=6, depth=2).fit(x, names[y])
    labels = clf.predict(x)
    proba = clf.predict_proba(x)
    assert proba.shape == (ROWS, 3) and set(labels) <= set(names)
    assert np.array_equal(labels, clf.classes_[np.argmax(proba, axis=1)])
    assert [s.shape for s in clf.staged_predict_proba(x, eval_period=2)] == [(ROWS, 3)] * 3
    assert np.array_equal(list(clf.staged_predict(x, eval_period=6))[0], labels)
    # catboost's own model through our classifier: the same classes as catboost predicts.
    cb, path = catboost_multiclass
    loaded = cbgpu.CatBoostClassifier().load_model(path)
    assert np.array_equal(loaded.predict(x), cb.predict(x).reshape(-1))


def test_errors_carry_the_library_message(data, own_multiclass):
    x, _ = data
    path = own_multiclass
    with cbgpu.Model.load(path) as model, cbgpu.Context(cbgpu.CBG_DEVICE_CPU) as ctx:
        with cbgpu.Pool(ctx, x[:, :3].copy()) as pool, expect_error(cbgpu.CBG_ERR_SHAPE, "pool has 3 features") as e:
            model.predict(pool)
        assert e.value.message  # cbg_last_error() of the failed call
        with expect_error(cbgpu.CBG_ERR_UNSUPPORTED):
            model.predict(x, prediction_type="RMSEWithUncertainty")


def test_torch_cpu_in_torch_out(data, own_multiclass):
    torch = pytest.importorskip("torch")
    x, _ = data
    path = own_multiclass
    with cbgpu.Model.load(path) as model:
        got = model.predict(torch.from_numpy(x))
        assert isinstance(got, torch.Tensor) and got.device.type == "cpu"
        assert np.array_equal(got.numpy(), model.predict(x))
        leaves = model.leaf_indexes(torch.from_numpy(x))
        assert leaves.dtype == torch.int32


# ---- GPU ------------------------------------------------------------------------------------------------


def test_cupy_in_cupy_out(cp, data, own_multiclass):
    x, _ = data
    path = own_multiclass
    with cbgpu.Model.load(path) as model:
        host = model.predict(x, prediction_type="Probability")
        xd = cp.asarray(x)
        got = model.predict(xd, prediction_type="Probability")
        assert isinstance(got, cp.ndarray) and got.device.id == 0
        np.testing.assert_allclose(cp.asnumpy(got), host, rtol=1e-13, atol=0)
        # "numpy": one copy into pinned memory.
        pinned = model.predict(xd, prediction_type="Probability", output_type="numpy")
        assert isinstance(pinned, np.ndarray)
        attrs = cp.cuda.runtime.pointerGetAttributes(pinned.ctypes.data)
        assert attrs.type == getattr(cp.cuda.runtime, "memoryTypeHost", 1), "the host copy lands in pinned memory"
        np.testing.assert_allclose(pinned, host, rtol=1e-13, atol=0)
        dl = model.predict(xd, prediction_type="Probability", output_type="dlpack")
        assert isinstance(dl, cbgpu.DLPackArray) and dl.__dlpack_device__()[0] == 2  # kDLCUDA
        assert cp.array_equal(cp.from_dlpack(dl), got)
        leaves = model.calc_leaf_indexes(xd, tree_begin=2)
        assert isinstance(leaves, cp.ndarray) and leaves.dtype == cp.uint32
        assert np.array_equal(cp.asnumpy(leaves), model.calc_leaf_indexes(x, tree_begin=2))
        for g, h in zip(model.staged_predict(xd, ntree_start=1, eval_period=5), model.staged_predict(x, ntree_start=1,
                                                                                                      eval_period=5)):
            assert isinstance(g, cp.ndarray) and np.array_equal(cp.asnumpy(g), h)  # RawFormulaVal: bit for bit


def test_gpu_outputs_stay_on_the_device_in_strict_mode(cp, data, own_multiclass):
    x, _ = data
    path = own_multiclass
    with cbgpu.Model.load(path) as model, cbgpu.Context(0, strict_no_d2h=True) as ctx, \
            cbgpu.Pool(ctx, cp.asarray(x)) as pool:
        before = ctx.copy_stats()["d2h_bytes"]
        for kind in ("cupy", "dlpack", None):
            model.predict(pool, prediction_type="Probability", output_type=kind)
        list(model.staged_predict(pool, eval_period=4))
        assert ctx.copy_stats()["d2h_bytes"] == before
        model.predict(pool, output_type="numpy")
        assert ctx.copy_stats()["d2h_bytes"] == before + ROWS * 3 * 8


def test_torch_in_torch_out(torch, data, own_multiclass):
    x, y = data
    path = own_multiclass
    with cbgpu.Model.load(path) as model:
        xt = torch.from_numpy(x).cuda()
        got = model.predict(xt, prediction_type="Probability")
        assert isinstance(got, torch.Tensor) and got.is_cuda and got.dtype == torch.float64
        host = model.predict(x, prediction_type="Probability")
        np.testing.assert_allclose(got.cpu().numpy(), host, rtol=1e-13, atol=0)
        leaves = model.calc_leaf_indexes(xt)
        assert leaves.is_cuda and leaves.dtype == torch.int32
        assert np.array_equal(leaves.cpu().numpy(), model.calc_leaf_indexes(x).astype(np.int32))
        f32 = model.predict(xt, dtype=np.float32)
        assert f32.dtype == torch.float32
        dl = model.predict(xt, output_type="dlpack")
        assert torch.equal(torch.from_dlpack(dl), model.predict(xt))
    # The estimators: train on the GPU from torch, predict to torch on the device.
    clf = cbgpu.CatBoostClassifier(iterations=6, depth=3).fit(xt, torch.from_numpy(y).cuda())
    labels = clf.predict(xt)
    assert isinstance(labels, torch.Tensor) and labels.is_cuda and labels.shape == (ROWS,)
    assert np.array_equal(labels.cpu().numpy(), clf.predict(x))
    proba = clf.predict_proba(xt, output_type="numpy")
    assert isinstance(proba, np.ndarray) and proba.shape == (ROWS, 3)
    reg = cbgpu.CatBoostRegressor(iterations=6, depth=3).fit(xt, torch.from_numpy(y.astype(np.float32)).cuda())
    stages = list(reg.staged_predict(xt, eval_period=2))
    assert len(stages) == 3 and all(s.is_cuda and s.shape == (ROWS,) for s in stages)
    assert torch.equal(stages[-1], reg.predict(xt))


def test_estimator_cupy_round_trip(cp, data):
    x, y = data
    reg = cbgpu.CatBoostRegressor(iterations=6, depth=3).fit(cp.asarray(x), cp.asarray(y, dtype=cp.float32))
    pred = reg.predict(cp.asarray(x))
    assert isinstance(pred, cp.ndarray) and pred.shape == (ROWS,)
    assert np.array_equal(cp.asnumpy(pred), reg.predict(x))
