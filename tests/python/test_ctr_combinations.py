# SPDX-License-Identifier: Apache-2.0
"""Feature combinations (max_ctr_complexity > 1, issue #5) against the `catboost` package, host path.

Generated data whose label depends on two categorical features jointly (a 10 x 10 table of effects
without main effects) plus weaker single-feature and numeric effects. Trained with
max_ctr_complexity 2..4: the model holds combination CTR features; CatBoost loads our .cbm and
predicts exactly what our evaluator predicts (RawFormulaVal); the held-out Logloss (mean over three
seeds: the ordered CTRs depend on the permutation, ours is not CatBoost's) is within 1% of CatBoost's
trained with the same parameters. (On a GPU, with device-memory data, the model is the host's byte
for byte: the [gpu] unit tests in tests/unit/ctr/test_combinations_device.cpp.)
"""
from __future__ import annotations

import json

import numpy as np
import pytest

catboost = pytest.importorskip("catboost")
pd = pytest.importorskip("pandas")
import catboost.utils  # noqa: E402

import cbgpu  # noqa: E402

PARAMS = {"iterations": 150, "learning_rate": 0.1, "depth": 6, "boosting_type": "Plain", "loss_function": "Logloss",
          "one_hot_max_size": 2, "simple_ctr": ["Borders", "Counter"], "combinations_ctr": ["Borders", "Counter"]}


def joint(n: int, seed: int):
    rng = np.random.RandomState(seed)
    fixed = np.random.RandomState(7)  # the same effects for learn and test
    table = fixed.normal(0, 1.2, (10, 10))
    table -= table.mean(axis=0, keepdims=True)
    table -= table.mean(axis=1, keepdims=True)  # no main effect of a or b alone
    d_eff = fixed.normal(0, 0.4, 30)
    x = rng.normal(size=n).astype(np.float32)
    a, b = rng.randint(0, 10, n), rng.randint(0, 10, n)
    c, d = rng.randint(0, 6, n), rng.randint(0, 30, n)
    signal = table[a, b] + d_eff[d] + 0.3 * x + 0.6 * rng.normal(size=n)
    y = (signal > 0).astype(np.float64)
    cats = [a * 5 + 1, b * 3 - 4, c * 7, d]
    return x, [col.astype(np.int64) for col in cats], y


def frame(x, cats):
    df = pd.DataFrame({"x": x})
    for k, col in enumerate(cats):
        df[f"c{k}"] = col
    return df


def our_pool(ctx, x, cats, y=None):
    cols = [np.ascontiguousarray(x)] + [np.ascontiguousarray(col) for col in cats]
    return cbgpu.Pool(ctx, columns=cols, label=None if y is None else np.ascontiguousarray(y),
                      cat_features=list(range(1, 1 + len(cats))))


@pytest.mark.parametrize("complexity", [2, 3, 4])
def test_combinations_catboost_predicts_and_quality(tmp_path, complexity):
    x, cats, y = joint(4000, 1)
    tx, tcats, ty = joint(3000, 2)
    params = {**PARAMS, "max_ctr_complexity": complexity}
    ctx = cbgpu.Context(cbgpu.CBG_DEVICE_CPU)
    models = [cbgpu.train(our_pool(ctx, x, cats, y), {**params, "verbose": False, "random_seed": s}) for s in range(3)]
    ours = models[0]
    path = tmp_path / "m.cbm"
    ours.save(str(path))
    loaded = catboost.CatBoost()
    loaded.load_model(str(path))
    # The model uses combination CTRs (the label needs (a, b) together); none above the complexity.
    as_json = tmp_path / "m.json"
    ours.save(str(as_json), format="json")
    ctrs = json.loads(as_json.read_text())["features_info"].get("ctrs", [])
    sizes = [len(f["elements"]) for f in ctrs]
    assert max(sizes) >= 2 and max(sizes) <= complexity, sizes

    cat_idx = list(range(1, 1 + len(cats)))
    test = our_pool(ctx, tx, tcats)
    our_raw = ours.predict(test)[:, 0]
    again = loaded.predict(catboost.Pool(frame(tx, tcats), cat_features=cat_idx), prediction_type="RawFormulaVal")
    np.testing.assert_allclose(again, our_raw, rtol=1e-9, atol=1e-12)

    theirs = catboost.CatBoost({**params, "verbose": 0, "thread_count": 1, "allow_writing_files": False})
    theirs.fit(catboost.Pool(frame(x, cats), y, cat_features=cat_idx))
    their_raw = theirs.predict(catboost.Pool(frame(tx, tcats), cat_features=cat_idx), prediction_type="RawFormulaVal")
    ours_m = np.mean([catboost.utils.eval_metric(ty, m.predict(test)[:, 0], "Logloss")[0] for m in models])
    theirs_m = catboost.utils.eval_metric(ty, their_raw, "Logloss")[0]
    simple = cbgpu.train(our_pool(ctx, x, cats, y), {**params, "max_ctr_complexity": 1, "verbose": False})
    simple_m = catboost.utils.eval_metric(ty, simple.predict(test)[:, 0], "Logloss")[0]
    print(f"max_ctr_complexity {complexity}: ours {ours_m:.5f} catboost {theirs_m:.5f} (ours without combinations "
          f"{simple_m:.5f})")
    assert ours_m < simple_m  # the combinations help
    assert ours_m <= theirs_m * 1.01


@pytest.mark.parametrize("loss", ["RMSE", "MultiClass", "Logloss"])
def test_projections_with_float_and_one_hot_splits_catboost_predicts(tmp_path, loss):
    """Combinations built on a tree's float and one-hot splits (c is one-hot here), with regression (binarized
    target, NaN float values), multiclass and binary targets: CatBoost loads the model and predicts what our
    evaluator predicts."""
    x, cats, y = joint(3000, 3)
    tx, tcats, _ = joint(1000, 4)
    if loss == "RMSE":
        y = y + 0.3 * np.nan_to_num(x)
        x, tx = x.copy(), tx.copy()
        x[::17], tx[::13] = np.nan, np.nan  # NaN float values (nan_mode Min) under the projections' float splits
    elif loss == "MultiClass":
        y = y + (x > 0.5)
    ctx = cbgpu.Context(cbgpu.CBG_DEVICE_CPU)
    params = {"iterations": 60, "depth": 6, "learning_rate": 0.2, "loss_function": loss, "one_hot_max_size": 6,
              "max_ctr_complexity": 3, "verbose": False}
    ours = cbgpu.train(our_pool(ctx, x, cats, y), params)
    as_json = tmp_path / "m.json"
    ours.save(str(as_json), format="json")
    ctrs = json.loads(as_json.read_text())["features_info"].get("ctrs", [])
    kinds = {e["combination_element"] for f in ctrs for e in f["elements"]}
    assert {"cat_feature_value", "float_feature"} <= kinds, kinds  # float splits in the projections
    path = tmp_path / "m.cbm"
    ours.save(str(path))
    loaded = catboost.CatBoost()
    loaded.load_model(str(path))
    cat_idx = list(range(1, 1 + len(cats)))
    theirs = loaded.predict(catboost.Pool(frame(tx, tcats), cat_features=cat_idx), prediction_type="RawFormulaVal")
    mine = ours.predict(our_pool(ctx, tx, tcats))
    np.testing.assert_allclose(np.asarray(theirs).reshape(mine.shape), mine, rtol=1e-9, atol=1e-12)
