# SPDX-License-Identifier: Apache-2.0
"""catboost.Pool inputs to cbgpu.CatBoostRegressor / CatBoostClassifier: fit, eval_set and predict
take a numeric catboost.Pool (its features, label, weights and baseline) and give what the same data
as arrays gives; a pool with categorical features is refused by name (catboost.Pool does not give
their values back)."""
from __future__ import annotations

import numpy as np
import pytest

catboost = pytest.importorskip("catboost")

import cbgpu  # noqa: E402

PARAMS = {"iterations": 30, "depth": 4, "learning_rate": 0.2, "verbose": False}


def data(n: int, seed: int):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 5)).astype(np.float32)
    x[rng.random(n) < 0.05, 2] = np.nan
    y = x[:, 0] - 0.5 * np.nan_to_num(x[:, 2]) + 0.3 * rng.normal(size=n)
    w = rng.uniform(0.5, 2.0, n).astype(np.float32)
    return x, y.astype(np.float32), w


def test_regressor_from_catboost_pools_equals_arrays(tmp_path):
    x, y, w = data(600, 1)
    ex, ey, _ = data(200, 2)
    base = np.arange(600, dtype=np.float64) % 8 / 64  # exact in float32, as catboost.Pool keeps it
    by_pool = cbgpu.CatBoostRegressor(**PARAMS).fit(
        catboost.Pool(x, label=y, weight=w, baseline=base), eval_set=catboost.Pool(ex, label=ey))
    by_arrays = cbgpu.CatBoostRegressor(**PARAMS).fit(x, y, sample_weight=w, baseline=base, eval_set=(ex, ey))
    a, b = tmp_path / "pool.cbm", tmp_path / "arrays.cbm"
    by_pool.save_model(str(a))
    by_arrays.save_model(str(b))
    assert a.read_bytes() == b.read_bytes()
    assert by_pool.evals_result() == by_arrays.evals_result()
    np.testing.assert_array_equal(by_pool.predict(catboost.Pool(ex)), by_arrays.predict(ex))


def test_classifier_takes_pool_labels_and_a_pool_list_eval_set(tmp_path):
    x, y, _ = data(500, 3)
    labels = np.where(y > 0, "yes", "no")
    ex, ey, _ = data(150, 4)
    elabels = np.where(ey > 0, "yes", "no")
    by_pool = cbgpu.CatBoostClassifier(**PARAMS).fit(catboost.Pool(x, label=labels),
                                                     eval_set=[catboost.Pool(ex, label=elabels)])
    by_arrays = cbgpu.CatBoostClassifier(**PARAMS).fit(x, labels, eval_set=(ex, elabels))
    assert list(by_pool.classes_) == ["no", "yes"]
    np.testing.assert_array_equal(by_pool.predict_proba(catboost.Pool(ex)), by_arrays.predict_proba(ex))
    np.testing.assert_array_equal(by_pool.predict(catboost.Pool(ex)), by_arrays.predict(ex))


def test_a_pool_with_categorical_features_is_refused_by_name():
    pool = catboost.Pool([[1.0, "a"], [2.0, "b"], [3.0, "a"]], label=[0, 1, 0], cat_features=[1])
    with pytest.raises(ValueError, match="categorical features: catboost.Pool does not give"):
        cbgpu.CatBoostRegressor(**PARAMS).fit(pool, None)
    with pytest.raises(ValueError, match="one \\(X, y\\) pair or catboost.Pool is supported, not 2"):
        x, y, _ = data(50, 5)
        cbgpu.CatBoostRegressor(**PARAMS).fit(x, y, eval_set=[(x, y), (x, y)])
