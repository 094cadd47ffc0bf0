# SPDX-License-Identifier: Apache-2.0
"""CatBoost model files, both ways, against the `catboost` package (the oracle).

A matrix of small models is trained with CatBoost on generated data, saved as .cbm and .json, loaded
by cbgpu and evaluated on fresh rows (with NaNs and unseen categories): RawFormulaVal must be
bit-identical, the other prediction types within 1e-12 relative. The reverse: every model cbgpu
writes (cbm and json) loads in CatBoost and predicts bit-identically; .cbm -> .json -> .cbm keeps
the predictions. The largest differences seen per prediction type are printed (pytest -s) and kept
in MAX_DIFF.
"""
from __future__ import annotations

import json
import zlib

import numpy as np
import pytest

catboost = pytest.importorskip("catboost")
pd = pytest.importorskip("pandas")

import cbgpu  # noqa: E402

REL_TOL = 1e-12
MAX_DIFF: dict[str, float] = {}

LONG = ["x" * 33, "y" * 64, "z" * 65, "The quick brown fox jumps over the lazy dog", "w" * 200,
        "Married-civ-spouse", "Москва", "", "a", "abcd", "abcdefghi", "q" * 17, "r" * 32]


def make_data(seed: int, n: int, n_float: int = 4, n_cat: int = 0, nan_share: float = 0.0,
              card=(3, 12, 40), int_cats: bool = False, test: bool = False):
    """A DataFrame with float and categorical columns interleaved, and a latent signal."""
    rng = np.random.default_rng(seed)
    cols = {}
    signal = np.zeros(n)
    order = []
    for j in range(n_float):
        x = rng.normal(size=n).astype(np.float32)
        signal += (j + 1) * 0.3 * np.nan_to_num(x)
        if nan_share:
            x[rng.random(n) < nan_share] = np.nan
        cols[f"f{j}"] = x
        order.append(f"f{j}")
        if j < n_cat:
            k = card[j % len(card)]
            # unseen categories at test time: values beyond the training range
            v = rng.integers(0, k + (3 if test else 0), n)
            signal += np.where(v % 3 == 0, 1.0, -0.5)
            if int_cats:
                cols[f"c{j}"] = v.astype(np.int64) * 7 - 5
            else:
                names = [LONG[i] if i < len(LONG) else f"cat_{j}_{i}" for i in range(k + 3)]
                cols[f"c{j}"] = [names[i] for i in v]
            order.append(f"c{j}")
    df = pd.DataFrame({c: cols[c] for c in order})
    cat_names = [c for c in order if c.startswith("c")]
    return df, cat_names, signal + rng.normal(size=n) * 0.3


# name -> (training parameters, label kind, prediction types, data options)
MATRIX = {
    "rmse_numeric_d1": (dict(loss_function="RMSE", depth=1, iterations=15), "reg", ["RawFormulaVal"], {}),
    "rmse_nan_min_d6_weights": (dict(loss_function="RMSE", depth=6, iterations=20, nan_mode="Min"), "reg",
                                ["RawFormulaVal"], dict(nan_share=0.2, weights=True)),
    "rmse_nan_max_d4": (dict(loss_function="RMSE", depth=4, iterations=20, nan_mode="Max"), "reg",
                        ["RawFormulaVal"], dict(nan_share=0.2)),
    "rmse_cat_ctr": (dict(loss_function="RMSE", depth=4, iterations=30, one_hot_max_size=3,
                          max_ctr_complexity=2,
                          simple_ctr=["Borders", "Buckets", "Counter", "BinarizedTargetMeanValue"],
                          combinations_ctr=["Borders", "Counter"]),
                     "reg", ["RawFormulaVal"], dict(n_cat=3, nan_share=0.1)),
    "logloss_onehot_ctr_baseline": (dict(loss_function="Logloss", depth=5, iterations=30, one_hot_max_size=4,
                                         max_ctr_complexity=3,
                                         simple_ctr=["Borders", "Buckets", "Counter", "BinarizedTargetMeanValue"],
                                         combinations_ctr=["Borders", "Counter"]),
                                    "bin", ["RawFormulaVal", "Probability", "LogProbability", "Class"],
                                    dict(n_cat=3, nan_share=0.1, baseline=True)),
    "logloss_int_cats_d8": (dict(loss_function="Logloss", depth=8, iterations=10, one_hot_max_size=2),
                            "bin", ["RawFormulaVal", "Probability", "Class"], dict(n_cat=2, int_cats=True)),
    "crossentropy_weights": (dict(loss_function="CrossEntropy", depth=3, iterations=20), "prob",
                             ["RawFormulaVal", "Probability"], dict(n_cat=1, weights=True)),
    "multiclass_ctr": (dict(loss_function="MultiClass", depth=4, iterations=25, one_hot_max_size=3,
                            simple_ctr=["Borders", "Buckets", "Counter"], max_ctr_complexity=2),
                       "multi", ["RawFormulaVal", "Probability", "LogProbability", "Class", "MultiProbability"],
                       dict(n_cat=3, nan_share=0.1)),
    "multiclass_ova": (dict(loss_function="MultiClassOneVsAll", depth=3, iterations=20), "multi",
                       ["RawFormulaVal", "Probability", "Class"], dict(n_cat=1)),
    "poisson": (dict(loss_function="Poisson", depth=3, iterations=20), "count", ["RawFormulaVal", "Exponent"], {}),
    "rmse_uncertainty": (dict(loss_function="RMSEWithUncertainty", depth=3, iterations=20), "reg",
                         ["RawFormulaVal", "RMSEWithUncertainty"], dict(n_cat=1)),
    "logloss_scale_bias": (dict(loss_function="Logloss", depth=4, iterations=15), "bin",
                           ["RawFormulaVal", "Probability", "Class"], dict(n_cat=2, scale_bias=(0.75, [0.125]))),
    "multiclass_scale_bias": (dict(loss_function="MultiClass", depth=2, iterations=10), "multi",
                              ["RawFormulaVal", "Probability", "Class"],
                              dict(n_cat=1, scale_bias=(1.5, [0.1, -0.2, 0.3]))),
    "multilogloss": (dict(loss_function="MultiLogloss", depth=3, iterations=15), "multilabel",
                     ["RawFormulaVal", "Probability", "Class"], {}),
}


def labels(kind: str, signal: np.ndarray, seed: int):
    rng = np.random.default_rng(seed + 1000)
    if kind == "reg":
        return signal
    if kind == "bin":
        return (signal > np.median(signal)).astype(int)
    if kind == "prob":
        return 1 / (1 + np.exp(-signal))
    if kind == "multi":
        return np.digitize(signal, np.quantile(signal, [0.33, 0.66]))
    if kind == "count":
        return rng.poisson(np.exp(np.clip(signal, -3, 2) * 0.5))
    if kind == "multilabel":
        return np.stack([(signal > 0).astype(int), (signal + rng.normal(size=len(signal)) > 0.5).astype(int)], axis=1)
    raise AssertionError(kind)


def train(name: str, tmp_path):
    params, kind, types, opts = MATRIX[name]
    seed = zlib.crc32(name.encode()) % 1000  # stable across processes (unlike hash())
    data_opts = {k: v for k, v in opts.items() if k in ("n_cat", "nan_share", "int_cats")}
    df, cats, signal = make_data(seed, 400, **data_opts)
    y = labels(kind, signal, seed)
    rng = np.random.default_rng(seed)
    weight = rng.uniform(0.2, 3.0, len(df)) if opts.get("weights") else None
    baseline = rng.normal(size=len(df)) * 0.2 if opts.get("baseline") else None
    pool = catboost.Pool(df, y, cat_features=cats, weight=weight, baseline=baseline)
    model = catboost.CatBoost(dict(params, verbose=0, thread_count=2, random_seed=seed,
                                   allow_writing_files=False))
    model.fit(pool)
    if "scale_bias" in opts:
        model.set_scale_and_bias(*opts["scale_bias"])
    test_df, _, _ = make_data(seed + 1, 300, test=True, **data_opts)
    return model, cats, test_df, types


def cbgpu_inputs(m: cbgpu.Model, df):
    cols = list(df.columns)
    floats = np.stack([df[cols[j]].to_numpy(np.float32) for j in m.float_feature_indices()], axis=1) \
        if m.info()["n_float_features"] else None
    cats = np.array([[cbgpu.cat_hash(v) for v in df[cols[j]]] for j in m.cat_feature_indices()],
                    dtype=np.uint32).T.copy() if m.info()["n_cat_features"] else None
    return floats, cats


def record(kind: str, diff: float) -> None:
    MAX_DIFF[kind] = max(MAX_DIFF.get(kind, 0.0), diff)


def compare(kind: str, expected, got) -> None:
    expected = np.asarray(expected, dtype=np.float64).reshape(got.shape)
    if kind == "RawFormulaVal":
        record(kind, float(np.max(np.abs(expected - got))) if got.size else 0.0)
        assert np.array_equal(expected, got), f"max |diff| {np.max(np.abs(expected - got))}"
        return
    rel = np.abs(expected - got) / np.maximum(np.abs(expected), 1e-300)
    rel[expected == got] = 0.0
    record(kind, float(rel.max()) if rel.size else 0.0)
    assert rel.max() <= REL_TOL, f"{kind}: max relative diff {rel.max()}"


def check_predictions(cb_model, m: cbgpu.Model, test_df, cats, types) -> None:
    pool = catboost.Pool(test_df, cat_features=cats)
    floats, hashes = cbgpu_inputs(m, test_df)
    for t in types:
        got = m.predict(floats, hashes, t)
        if t == "Class":
            expected = np.asarray(cb_model.predict(pool, prediction_type="Class"))
            names = m.class_names()
            if expected.ndim == 2 and expected.shape[1] == got.shape[1] and got.shape[1] > 1:  # multi-label
                compare(t, expected.astype(np.float64), got)
                continue
            index = {n: i for i, n in enumerate(names)}
            expected = np.array([index[str(v)] for v in expected.reshape(-1)], dtype=np.float64)
            compare(t, expected, got)
        elif t == "MultiProbability":  # CatBoost's evaluator-level type; Python's predict lacks it
            raw = np.asarray(cb_model.predict(pool, prediction_type="RawFormulaVal"))
            compare(t, 1.0 / (1.0 + np.exp(-raw)), got)
        else:
            compare(t, cb_model.predict(pool, prediction_type=t), got)
    # tree ranges and leaf indexes
    n = m.info()["n_trees"]
    if n >= 3:
        b, e = 1, n - 1
        compare("RawFormulaVal", cb_model.predict(pool, prediction_type="RawFormulaVal", ntree_start=b, ntree_end=e),
                m.predict(floats, hashes, "RawFormulaVal", b, e))
    leaves = np.asarray(cb_model.calc_leaf_indexes(pool))
    assert np.array_equal(leaves, m.leaf_indexes(floats, hashes))


@pytest.mark.parametrize("name", sorted(MATRIX))
def test_catboost_to_cbgpu_and_back(name, tmp_path):
    cb_model, cats, test_df, types = train(name, tmp_path)
    pool = catboost.Pool(test_df, cat_features=cats)
    # CatBoost's reference for a file it reads: its own load of its own file of that format. (Its
    # JSON number parser is not correctly rounded: a model loaded from CatBoost's own JSON can
    # differ from the .cbm one in the last bit of a leaf value; cbgpu parses exactly.)
    reference = {}
    for fmt in ("cbm", "json"):
        path = tmp_path / f"model.{fmt}"
        cb_model.save_model(str(path), format=fmt)
        again = catboost.CatBoost()
        again.load_model(str(path), format=fmt)
        reference[fmt] = again.predict(pool, prediction_type="RawFormulaVal")
    assert np.array_equal(reference["cbm"], cb_model.predict(pool, prediction_type="RawFormulaVal"))
    for fmt in ("cbm", "json"):
        path = tmp_path / f"model.{fmt}"
        with cbgpu.Model.load(path, fmt) as m:
            check_predictions(cb_model, m, test_df, cats, types)
            # the reverse: what cbgpu writes, CatBoost reads and predicts identically
            for out_fmt in ("cbm", "json"):
                out = tmp_path / f"from_{fmt}.{out_fmt}"
                m.save(out, out_fmt)
                back = catboost.CatBoost()
                back.load_model(str(out), format=out_fmt)
                got = back.predict(pool, prediction_type="RawFormulaVal")
                assert np.array_equal(got, reference[out_fmt]), (fmt, out_fmt)
            # .cbm -> .json -> .cbm through cbgpu keeps every prediction
            with cbgpu.Model.from_bytes(m.to_bytes("json"), "json") as j, \
                    cbgpu.Model.from_bytes(j.to_bytes("cbm"), "cbm") as c:
                floats, hashes = cbgpu_inputs(c, test_df)
                for t in types:
                    assert np.array_equal(c.predict(floats, hashes, t), m.predict(floats, hashes, t))


def test_catboost_hashes_of_long_and_unicode_strings(tmp_path):
    """One-hot values of a model are CatBoost's own hashes: covers every CityHash length class."""
    values = LONG + [f"v{i}" * i for i in range(1, 40)]
    n = len(values) * 8
    rng = np.random.default_rng(3)
    idx = rng.integers(0, len(values), n)
    df = pd.DataFrame({"c": [values[i] for i in idx]})
    y = (idx % 2).astype(int)
    model = catboost.CatBoostClassifier(iterations=40, depth=6, one_hot_max_size=255, verbose=0, thread_count=2,
                                        allow_writing_files=False)
    model.fit(df, y, cat_features=["c"])
    path = tmp_path / "m.json"
    model.save_model(str(path), format="json")
    doc = json.loads(path.read_text())
    used = doc["features_info"]["categorical_features"][0].get("values", [])
    assert used, "no one-hot values in the model"
    ours = {np.int32(np.uint32(cbgpu.cat_hash(v))).item() for v in values}
    assert set(used) <= ours


def test_zzz_report_max_diff():
    """Prints the largest differences seen (run after the matrix: pytest -s)."""
    print("\nlargest |CatBoost - cbgpu| per prediction type (RawFormulaVal absolute, others relative):")
    for k, v in sorted(MAX_DIFF.items()):
        print(f"  {k}: {v:.3g}")


def test_unsupported_models_are_refused_by_name(tmp_path):
    rng = np.random.default_rng(5)
    X = rng.normal(size=(120, 3))
    y = X[:, 0]
    depthwise = catboost.CatBoostRegressor(iterations=3, grow_policy="Depthwise", verbose=0, allow_writing_files=False)
    depthwise.fit(X, y)
    for fmt in ("cbm", "json"):
        depthwise.save_model(str(tmp_path / f"dw.{fmt}"), format=fmt)
        with pytest.raises(cbgpu.CbgError) as e:
            cbgpu.Model.load(tmp_path / f"dw.{fmt}", fmt)
        assert e.value.code == cbgpu.CBG_ERR_UNSUPPORTED and "non-symmetric trees" in e.value.message
    df = pd.DataFrame({"t": ["a b c", "b c d", "hello world"] * 40, "f": np.arange(120.0)})
    text = catboost.CatBoostClassifier(iterations=3, verbose=0, allow_writing_files=False)
    text.fit(df, [0, 1, 1] * 40, text_features=["t"])
    text.save_model(str(tmp_path / "text.cbm"))
    with pytest.raises(cbgpu.CbgError) as e:
        cbgpu.Model.load(tmp_path / "text.cbm")
    assert e.value.code == cbgpu.CBG_ERR_UNSUPPORTED and "text features" in e.value.message


def test_model_info_queries(tmp_path):
    cb_model, cats, test_df, _ = train("multiclass_ctr", tmp_path)
    cb_model.save_model(str(tmp_path / "m.cbm"))
    with cbgpu.Model.load(tmp_path / "m.cbm") as m:
        info = m.info()
        assert info["n_trees"] == cb_model.tree_count_
        assert info["approx_dimension"] == 3
        assert m.feature_names() == list(test_df.columns)
        assert [m.feature_names()[j] for j in m.cat_feature_indices()] == cats
        assert m.class_names() == [str(c) for c in cb_model.classes_]
        assert json.loads(m.info_value("params"))["loss_function"]["type"] == "MultiClass"
        assert m.info_value("no such key") is None
        assert m.prediction_columns("Probability") == 3 and m.prediction_columns("Class") == 1
        with pytest.raises(cbgpu.CbgError) as e:
            m.prediction_columns("RMSEWithUncertainty")
        assert e.value.code == cbgpu.CBG_ERR_UNSUPPORTED
        with pytest.raises(cbgpu.CbgError) as e:
            m.predict(np.zeros((2, info["n_float_features"])), np.zeros((2, info["n_cat_features"])),
                      tree_begin=2, tree_end=1)
        assert e.value.code == cbgpu.CBG_ERR_INVALID_ARGUMENT
