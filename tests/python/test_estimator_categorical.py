# SPDX-License-Identifier: Apache-2.0
"""`cat_features` in cbgpu.CatBoostClassifier / CatBoostRegressor against the `catboost` package.

The same data and parameters go to both: pandas DataFrames with object, string, category and
integer columns (cat_features by name), NumPy object arrays of strings and integer arrays
(cat_features by index), nested lists, eval sets. The held-out metric of ours (mean over three
seeds: ordered CTRs depend on the permutation) is within 1% of CatBoost's; CatBoost loads the model
we save and predicts on the same input exactly what our estimator predicts; the estimator predicts
on the same kind of input it was fitted on. Values CatBoost refuses (real numbers, NaN) are refused.
"""
from __future__ import annotations

import numpy as np
import pytest

catboost = pytest.importorskip("catboost")
pd = pytest.importorskip("pandas")
import catboost.utils  # noqa: E402

import cbgpu  # noqa: E402

PARAMS = {"iterations": 80, "learning_rate": 0.15, "depth": 5, "boosting_type": "Plain", "one_hot_max_size": 3,
          "max_ctr_complexity": 1}
CITIES = ["Москва", "Paris", "東京", "Lyon", "7", "007", "Nice", "Oslo", "Rome", "Bern", "Kyiv", "Riga"]
JOBS = ["clerk", "smith", "baker", "pilot", "nurse", "chef", "judge"]


def frame(n: int, seed: int):
    """Numeric x, string city (object), category job, integer code (int64), binary sex (str)."""
    rng = np.random.default_rng(seed)
    effects = np.random.default_rng(100)
    city_eff, job_eff, code_eff = effects.normal(0, 1, len(CITIES)), effects.normal(0, 0.8, len(JOBS)), \
        effects.normal(0, 0.6, 9)
    x = rng.normal(size=n).astype(np.float32)
    city = rng.integers(0, len(CITIES), n)
    job = rng.integers(0, len(JOBS), n)
    code = rng.integers(0, 9, n)
    sex = rng.integers(0, 2, n)
    signal = 0.8 * x + city_eff[city] + job_eff[job] + code_eff[code] + 0.4 * sex + 0.6 * rng.normal(size=n)
    df = pd.DataFrame({
        "x": x,
        "city": pd.Series([CITIES[i] for i in city], dtype=object),
        "job": pd.Categorical([JOBS[i] for i in job]),
        "code": (code * 11 - 20).astype(np.int64),
        "sex": [("F", "M")[i] for i in sex],
    })
    return df, signal


CATS = ["city", "job", "code", "sex"]


def catboost_raw_of_saved(est, tmp_path, X, cat_features):
    path = tmp_path / "m.cbm"
    est.save_model(str(path))
    loaded = catboost.CatBoost()
    loaded.load_model(str(path))
    return np.asarray(loaded.predict(catboost.Pool(X, cat_features=cat_features), prediction_type="RawFormulaVal"))


def test_classifier_dataframe_quality_and_catboost_predicts_ours(tmp_path):
    df, s = frame(4000, 1)
    tdf, ts = frame(2000, 2)
    y, ty = (s > 0.3).astype(int), (ts > 0.3).astype(int)
    ours = [cbgpu.CatBoostClassifier(**PARAMS, random_seed=seed, verbose=False).fit(df, y, cat_features=CATS)
            for seed in range(3)]
    theirs = catboost.CatBoostClassifier(**PARAMS, verbose=0, thread_count=1, allow_writing_files=False)
    theirs.fit(df, y, cat_features=CATS)
    ours_m = np.mean([catboost.utils.eval_metric(ty, m.predict_proba(tdf)[:, 1], "Logloss")[0] for m in ours])
    theirs_m = catboost.utils.eval_metric(ty, theirs.predict_proba(tdf)[:, 1], "Logloss")[0]
    print(f"Logloss: ours {ours_m:.5f} catboost {theirs_m:.5f}")
    assert ours_m <= theirs_m * 1.01

    m = ours[0]
    info = m.model_.info()
    assert info["n_cat_features"] == 4 and m.model_.cat_feature_indices() == [1, 2, 3, 4]
    assert m.model_.feature_names() == list(df.columns)
    raw = m.predict(tdf, prediction_type="RawFormulaVal")
    np.testing.assert_allclose(catboost_raw_of_saved(m, tmp_path, tdf, CATS), raw, rtol=1e-12, atol=1e-12)
    assert set(np.unique(m.predict(tdf))) <= {0, 1}
    # A loaded model keeps its categorical features: predict on the same frame.
    again = cbgpu.CatBoostClassifier().load_model(str(tmp_path / "m.cbm"))
    np.testing.assert_array_equal(again.predict_proba(tdf), m.predict_proba(tdf))


def test_regressor_object_array_eval_set_and_constructor_cat_features(tmp_path):
    df, s = frame(3000, 3)
    tdf, ts = frame(1000, 4)
    cols = ["x", "city", "sex", "code"]
    X, tX = df[cols].to_numpy(dtype=object), tdf[cols].to_numpy(dtype=object)
    assert isinstance(X[0, 1], str) and isinstance(X[0, 3], (int, np.integer))
    params = {**PARAMS, "loss_function": "RMSE", "use_best_model": False}
    seen = []
    ours = cbgpu.CatBoostRegressor(**params, cat_features=[1, 2, 3], verbose=False)
    ours.fit(X, s, eval_set=(tX, ts), callback=seen.append)
    theirs = catboost.CatBoostRegressor(**params, verbose=0, thread_count=1, allow_writing_files=False)
    theirs.fit(catboost.Pool(X, s, cat_features=[1, 2, 3]))
    pred = ours.predict(tX)
    assert pred.shape == (len(tX),)
    ours_rmse = catboost.utils.eval_metric(ts, pred, "RMSE")[0]
    theirs_rmse = catboost.utils.eval_metric(ts, theirs.predict(catboost.Pool(tX, cat_features=[1, 2, 3])), "RMSE")[0]
    print(f"RMSE: ours {ours_rmse:.5f} catboost {theirs_rmse:.5f}")
    assert ours_rmse <= theirs_rmse * 1.01
    assert abs(seen[-1]["eval_metric"] - ours_rmse) < 1e-5  # the eval set went through the same columns
    np.testing.assert_allclose(catboost_raw_of_saved(ours, tmp_path, tX, [1, 2, 3]), pred, rtol=1e-12, atol=1e-12)
    # The same rows as a nested list, and as a DataFrame whose categorical columns are strings and ints.
    np.testing.assert_array_equal(ours.predict(tX.tolist()), pred)
    np.testing.assert_array_equal(ours.predict(tdf[cols]), pred)
    assert ours.get_params()["cat_features"] == [1, 2, 3]


def test_integer_array_categories_hash_as_catboost(tmp_path):
    """Integer categorical columns of a NumPy array hash as CatBoost hashes them (decimal text)."""
    rng = np.random.default_rng(5)
    n = 2000
    X = np.stack([rng.integers(-50, 50, n), rng.integers(0, 30, n) * 1000, rng.integers(0, 2, n)], axis=1)
    y = ((X[:, 0] % 7 == 0) | (X[:, 1] % 3000 == 0)).astype(int) ^ (rng.random(n) < 0.1)
    ours = cbgpu.CatBoostClassifier(**PARAMS, verbose=False).fit(X, y, cat_features=[0, 1, 2])
    tX = X[:500]
    np.testing.assert_allclose(catboost_raw_of_saved(ours, tmp_path, tX, [0, 1, 2]),
                               ours.predict(tX, prediction_type="RawFormulaVal"), rtol=1e-12, atol=1e-12)
    # The same values as strings are the same categories.
    np.testing.assert_array_equal(ours.predict_proba(tX.astype(str).astype(object)), ours.predict_proba(tX))


def test_refused_inputs():
    df, s = frame(200, 6)
    y = (s > 0).astype(int)
    est = cbgpu.CatBoostClassifier(iterations=2, verbose=False)
    with pytest.raises(ValueError, match="not a feature name"):
        est.fit(df, y, cat_features=["nope"])
    with pytest.raises(ValueError, match="not numeric"):
        est.fit(df, y, cat_features=["city"])  # job, code, sex not listed: "job"/"sex" are text
    with pytest.raises(ValueError, match="floating-point"):
        est.fit(df[["x", "code"]].to_numpy(dtype=np.float64), y, cat_features=[1])
    bad = df.copy()
    bad.loc[3, "city"] = np.nan
    with pytest.raises(ValueError, match="real numbers, NaN"):
        est.fit(bad, y, cat_features=CATS)
    with pytest.raises(ValueError, match="out of range"):
        est.fit(df, y, cat_features=[9])
    fitted = cbgpu.CatBoostClassifier(iterations=3, verbose=False).fit(df, y, cat_features=CATS)
    with pytest.raises(ValueError, match="floating-point"):
        fitted.predict(np.zeros((3, 5)))


def _ctr_tables(model_json: dict) -> list[dict]:
    """Each CTR table of a JSON model as {hash: counts}, without empty buckets (hash 2^64 - 1)."""
    out = []
    for table in model_json.get("ctr_data", {}).values():
        stride, flat = table["hash_stride"], table["hash_map"]
        out.append({int(flat[i]): tuple(flat[i + 1:i + stride]) for i in range(0, len(flat), stride)
                    if int(flat[i]) != (1 << 64) - 1})
    return sorted(out, key=lambda t: sorted(t.items()))


def test_sample_weights_do_not_enter_ctr_counts(tmp_path):
    """CatBoost counts objects, not weights, in CTRs: the GPU learner gives learn objects CTR weight 1
    (catboost/cuda/gpu_data/dataset_helpers.cpp, BuildCtrTarget) and the model's tables are integer
    counts over the learn set (online_ctr.cpp). With sample weights, our tables equal CatBoost's."""
    import json
    rng = np.random.default_rng(8)
    n = 3000
    city = rng.integers(0, 25, n)
    x = rng.normal(size=n)
    y = ((np.sin(city) + 0.5 * x + 0.5 * rng.normal(size=n)) > 0).astype(int)
    w = rng.uniform(0.1, 5.0, n)
    df = pd.DataFrame({"x": x, "city": [f"c{v}" for v in city]})
    params = {"iterations": 30, "depth": 4, "one_hot_max_size": 2, "max_ctr_complexity": 1,
              "simple_ctr": ["Borders:Prior=0.5"], "boosting_type": "Plain"}
    ours = cbgpu.CatBoostClassifier(**params, verbose=False).fit(df, y, sample_weight=w, cat_features=["city"])
    theirs = catboost.CatBoostClassifier(**params, verbose=0, thread_count=1, allow_writing_files=False)
    theirs.fit(df, y, sample_weight=w, cat_features=["city"])
    theirs.save_model(str(tmp_path / "theirs.json"), format="json")
    their_tables = _ctr_tables(json.loads((tmp_path / "theirs.json").read_text()))
    our_tables = _ctr_tables(json.loads(ours.model_.to_bytes("json")))
    assert our_tables and our_tables == their_tables
    assert all(float(c).is_integer() for t in our_tables for counts in t.values() for c in counts)
    np.testing.assert_allclose(catboost_raw_of_saved(ours, tmp_path, df, ["city"]),
                               ours.predict(df, prediction_type="RawFormulaVal"), rtol=1e-12, atol=1e-12)
