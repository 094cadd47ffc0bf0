# SPDX-License-Identifier: Apache-2.0
"""cbgpu.dask on a LocalCluster with one in-process worker (the host path in CI; CuPy chunks on a
GPU): training equals cbgpu.train of the concatenated rows byte for byte, eval sets and early
stopping, predictions partitioned like the input (arrays and dataframes), categorical columns by
name and index, the estimators, and a worker's error raised on the client with its message."""
import sys

import numpy as np
import pytest

import cbgpu

dask = pytest.importorskip("dask")
distributed = pytest.importorskip("distributed")
da = pytest.importorskip("dask.array")
import cbgpu.dask as cdask  # noqa: E402
from cbgpu._estimators import make_pool  # noqa: E402


@pytest.fixture
def dd():
    """dask.dataframe (it needs pandas and pyarrow; the GPU machines' Python has no pyarrow)."""
    return pytest.importorskip("dask.dataframe")


pd = pytest.importorskip("pandas")

PARAMS = {"iterations": 20, "depth": 4, "learning_rate": 0.2, "random_seed": 5}


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False,
                                       dashboard_address=None)
    with distributed.Client(cluster) as c:
        yield c
    cluster.close()


def _data(rows=1200, features=5, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(rows, features)).astype(np.float32)
    y = (X[:, 0] * 2 + np.sin(X[:, 1]) + rng.normal(scale=0.2, size=rows)).astype(np.float32)
    return X, y


def _single(X, y, params, eval_set=None, device=cbgpu.CBG_DEVICE_CPU, weight=None, cat_features=None):
    """cbgpu.train on the whole data in one process (the pools the estimators make): the reference."""
    with cbgpu.Context(device, seed=int(params.get("random_seed", 0))) as ctx:
        learn = make_pool(ctx, X, y, cat_features, weight)
        test = make_pool(ctx, eval_set[0], eval_set[1], cat_features) if eval_set is not None else None
        return cbgpu.train(learn, params, eval_set=test)


def test_train_equals_single_process(client):
    X, y = _data()
    w = np.linspace(0.5, 1.5, len(y), dtype=np.float32)
    model = cdask.train(client, PARAMS, da.from_array(X, chunks=(300, 5)), da.from_array(y, chunks=300),
                        weight=da.from_array(w, chunks=300))
    assert model.to_bytes("cbm") == _single(X, y, PARAMS, weight=w).to_bytes("cbm")
    # Columns split over chunks are joined on the workers.
    split = cdask.train(client, PARAMS, da.from_array(X, chunks=(400, 2)), da.from_array(y, chunks=400))
    assert split.to_bytes("cbm") == _single(X, y, PARAMS).to_bytes("cbm")


def test_eval_set_and_early_stopping(client):
    X, y = _data(seed=1)
    ex, ey = _data(rows=400, seed=2)
    ey = ey + np.random.default_rng(3).normal(scale=3.0, size=len(ey)).astype(np.float32)  # a noisy test
    params = {**PARAMS, "iterations": 200, "learning_rate": 0.5, "early_stopping_rounds": 5}
    model = cdask.train(client, params, da.from_array(X, chunks=(500, 5)), da.from_array(y, chunks=500),
                        eval_set=(da.from_array(ex, chunks=(150, 5)), da.from_array(ey, chunks=150)))
    reference = _single(X, y, params, eval_set=(ex, ey))
    assert model.tree_count < 200  # stopped early
    assert model.to_bytes("cbm") == reference.to_bytes("cbm")


def test_predict_array_keeps_partitions(client):
    X, y = _data()
    model = _single(X, y, PARAMS)
    dx = da.from_array(X, chunks=(250, 5))
    pred = cdask.predict(client, model, dx)
    assert pred.chunks == ((250, 250, 250, 250, 200),)
    np.testing.assert_array_equal(pred.compute(), model.predict(X).reshape(-1))
    # Several columns per row: [rows, classes] chunks.
    labels = (np.digitize(y, [-1.0, 1.0])).astype(np.float32)
    multi = _single(X, labels, {**PARAMS, "loss_function": "MultiClass"})
    proba = cdask.predict(client, multi, dx, prediction_type="Probability")
    assert proba.chunks == ((250, 250, 250, 250, 200), (3,))
    np.testing.assert_array_equal(proba.compute(), multi.predict(X, prediction_type="Probability"))


def test_predict_dataframe_keeps_partitions(client, dd):
    X, y = _data()
    frame = pd.DataFrame(X, columns=[f"f{j}" for j in range(5)], index=np.arange(1000, 1000 + len(X)))
    ddf = dd.from_pandas(frame, npartitions=3)
    model = cdask.train(client, PARAMS, ddf, dd.from_pandas(pd.Series(y, index=frame.index), npartitions=3))
    assert model.to_bytes("cbm") == _single(frame, y, PARAMS).to_bytes("cbm")
    pred = cdask.predict(client, model, ddf)
    assert pred.npartitions == ddf.npartitions
    out = pred.compute()
    assert list(out.index) == list(frame.index)
    np.testing.assert_array_equal(out.to_numpy(), model.predict(X).reshape(-1))


def _cat_frame(rows=900, seed=4):
    rng = np.random.default_rng(seed)
    city = rng.choice(["Paris", "Rome", "Oslo", "Lima"], size=rows)
    x = rng.normal(size=rows).astype(np.float32)
    y = (x + (city == "Rome") * 2.0 + rng.normal(scale=0.1, size=rows)).astype(np.float32)
    return pd.DataFrame({"x": x, "city": city, "z": rng.normal(size=rows).astype(np.float32)}), y


def test_categorical_columns_by_name_and_index(client, dd):
    frame, y = _cat_frame()
    ddf = dd.from_pandas(frame, npartitions=3)
    dy = dd.from_pandas(pd.Series(y), npartitions=3)
    params = {**PARAMS, "loss_function": "RMSE", "one_hot_max_size": 2}
    by_name = cdask.train(client, params, ddf, dy, cat_features=["city"])
    by_index = cdask.train(client, params, ddf, dy, cat_features=[1])
    reg = cbgpu.CatBoostRegressor(**params).fit(frame, y, cat_features=["city"])
    assert by_name.to_bytes("cbm") == by_index.to_bytes("cbm") == reg.model_.to_bytes("cbm")
    pred = cdask.predict(client, by_name, ddf).compute()
    np.testing.assert_array_equal(pred.to_numpy(), reg.predict(frame))
    est = cdask.DaskCatBoostRegressor(**params).fit(ddf, dy, cat_features=["city"])
    assert est.model_.to_bytes("cbm") == reg.model_.to_bytes("cbm")
    assert list(est.feature_names_in_) == ["x", "city", "z"]


def test_estimators_mirror_the_single_machine_ones(client):
    X, y = _data(seed=6)
    labels = np.where(y > 0, "yes", "no")
    dx = da.from_array(X, chunks=(400, 5))
    clf = cdask.DaskCatBoostClassifier(**PARAMS).fit(dx, da.from_array(labels, chunks=400))
    local = cbgpu.CatBoostClassifier(**PARAMS).fit(X, labels)
    assert list(clf.classes_) == ["no", "yes"]
    assert clf.model_.to_bytes("cbm") == local.model_.to_bytes("cbm")
    np.testing.assert_array_equal(clf.predict(dx).compute(), local.predict(X))
    np.testing.assert_array_equal(clf.predict_proba(dx).compute(), local.predict_proba(X))
    reg = cdask.DaskCatBoostRegressor(**PARAMS).fit(dx, da.from_array(y, chunks=400))
    assert reg.get_params()["depth"] == 4 and reg.tree_count_ == 20
    np.testing.assert_array_equal(reg.predict(dx).compute(), cbgpu.CatBoostRegressor(**PARAMS).fit(X, y).predict(X))


def test_worker_error_reaches_the_client(client):
    X, y = _data(rows=300)
    with pytest.raises(cbgpu.CbgError, match="NoSuchLoss") as raised:
        cdask.train(client, {**PARAMS, "loss_function": "NoSuchLoss"}, da.from_array(X, chunks=(100, 5)),
                    da.from_array(y, chunks=100))
    if sys.version_info >= (3, 11):
        assert any("cbgpu.dask: raised on" in note for note in raised.value.__notes__)
    with pytest.raises(ValueError, match="partitions"):
        cdask.train(client, PARAMS, da.from_array(X, chunks=(100, 5)), da.from_array(y, chunks=150))


def test_import_error_names_the_packages(monkeypatch):
    monkeypatch.setitem(sys.modules, "distributed", None)
    monkeypatch.delitem(sys.modules, "cbgpu.dask")
    with pytest.raises(ImportError, match="pip install"):
        import cbgpu.dask  # noqa: F401


def test_cupy_chunks_on_one_gpu(client, cp):
    X, y = _data()
    params = {**PARAMS, "task_type": "GPU"}
    dx = da.from_array(cp.asarray(X), chunks=(300, 5), asarray=False)
    dy = da.from_array(cp.asarray(y), chunks=300, asarray=False)
    model = cdask.train(client, params, dx, dy)
    assert model.to_bytes("cbm") == _single(cp.asarray(X), cp.asarray(y), params, device=0).to_bytes("cbm")
    pred = cdask.predict(client, model, dx)
    assert pred.chunks == ((300, 300, 300, 300),)
    out = pred.compute()
    assert type(out).__module__.startswith("cupy")
    np.testing.assert_allclose(cp.asnumpy(out), model.predict(X).reshape(-1), rtol=1e-6)


def test_ranks_and_eval_placement_for_several_workers():
    """Rank order follows the first partition each worker holds; every rank gets an eval partition
    (one moved from the rank holding the most), or the eval set is refused as too small."""
    by_worker = {"tcp://b": [(2, "p2"), (3, "p3")], "tcp://a": [(0, "p0"), (1, "p1")], "tcp://c": [(4, "p4")]}
    workers = cdask._rank_order(by_worker)
    assert workers == ["tcp://a", "tcp://b", "tcp://c"]
    placed = cdask._eval_placement({"tcp://a": [(0, "e0"), (1, "e1"), (2, "e2")], "tcp://d": [(3, "e3")]}, workers)
    assert all(placed[w] for w in workers)
    assert sorted(i for w in workers for i, _ in placed[w]) == [0, 1, 2, 3]  # nothing lost or doubled
    with pytest.raises(ValueError, match="fewer partitions than there are workers"):
        cdask._eval_placement({"tcp://a": [(0, "e0")]}, workers)
