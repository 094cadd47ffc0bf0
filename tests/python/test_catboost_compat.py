# SPDX-License-Identifier: Apache-2.0
"""Compatibility details against the `catboost` package (the oracle).

- A tree without splits (CatBoost writes "splits": null and one leaf per dimension) loads from JSON
  and .cbm, predicts as CatBoost does, and is written back as CatBoost writes it.
- Every prediction type of MultiClass, Logloss, MultiLogloss, Poisson and RMSEWithUncertainty models
  equals CatBoost's bit for bit (CatBoost's softmax and exponent use its fast exponent), also for
  raw values so large that the exponent's clamping matters.
- Training takes every feature_border_type and per_float_feature_quantization (CatBoost's syntax)
  and splits on CatBoost's borders for them.
- CatBoost's parameters and values that cbgpu lacks are refused as not implemented; unknown ones as
  invalid arguments.
"""
from __future__ import annotations

import json

import numpy as np
import pytest

catboost = pytest.importorskip("catboost")
pd = pytest.importorskip("pandas")

import cbgpu  # noqa: E402
from helpers import expect_error  # noqa: E402


def fit_catboost(X, y, **params):
    model = catboost.CatBoost(dict(params, verbose=0, thread_count=1, allow_writing_files=False))
    model.fit(X, y)
    return model


def floats32(X):
    return np.ascontiguousarray(X, dtype=np.float32)


def assert_same_predictions(cb_model, ours: cbgpu.Model, X, types):
    for t in types:
        got = ours.predict(floats32(X), None, t)
        raw_want = np.asarray(cb_model.predict(X, prediction_type=t))
        want = raw_want.astype(np.float64).reshape(got.shape) if raw_want.size == got.size else None
        if t == "Class" and raw_want.ndim == 1 and ours.class_names():
            index = {n: i for i, n in enumerate(ours.class_names())}
            want = np.array([index[str(v)] for v in raw_want.reshape(-1)], dtype=np.float64).reshape(got.shape)
        assert want is not None, f"{t}: shapes {raw_want.shape} and {got.shape}"
        assert got.tobytes() == want.tobytes(), f"{t}: max |diff| {np.max(np.abs(got - want))}"


# ---- trees without splits ---------------------------------------------------------------------------


@pytest.mark.parametrize("loss,dim", [("Logloss", 1), ("MultiClass", 3), ("RMSE", 1)])
def test_tree_without_splits_loads_predicts_and_round_trips(loss, dim, tmp_path):
    rng = np.random.default_rng(4)
    X = rng.normal(size=(300, 3))
    y = (X[:, 0] > 0).astype(int) if loss == "Logloss" else (
        np.digitize(X[:, 0], [-0.4, 0.4]) if loss == "MultiClass" else X[:, 0] + X[:, 1])
    base = fit_catboost(X, y, loss_function=loss, iterations=4, depth=2)
    base.save_model(str(tmp_path / "base.json"), format="json")
    doc = json.loads((tmp_path / "base.json").read_text())
    # Trees 0 and 2 lose their splits: one leaf per dimension, the weight of the whole learn set.
    for t in (0, 2):
        tree = doc["oblivious_trees"][t]
        tree["splits"] = None
        tree["leaf_values"] = [0.125 * (k + 1) * (-1) ** t for k in range(dim)]
        tree["leaf_weights"] = [float(sum(tree["leaf_weights"]))]
    (tmp_path / "nosplit.json").write_text(json.dumps(doc))
    cb = catboost.CatBoost()
    cb.load_model(str(tmp_path / "nosplit.json"), format="json")
    cb.save_model(str(tmp_path / "nosplit.cbm"))
    cb.save_model(str(tmp_path / "catboost_again.json"), format="json")
    assert json.loads((tmp_path / "catboost_again.json").read_text())["oblivious_trees"][0]["splits"] is None
    # CatBoost's reference for a file it reads: its own load of its own file of that format (its JSON
    # number parser is not correctly rounded, so the digits it reads matter).
    reference = {}
    for fmt, name in (("cbm", "nosplit.cbm"), ("json", "catboost_again.json")):
        again = catboost.CatBoost()
        again.load_model(str(tmp_path / name), format=fmt)
        reference[fmt] = again.predict(X, prediction_type="RawFormulaVal")
    types = {"Logloss": ["RawFormulaVal", "Probability", "LogProbability", "Class"],
             "MultiClass": ["RawFormulaVal", "Probability", "LogProbability", "Class"],
             "RMSE": ["RawFormulaVal"]}[loss]
    for path, fmt in ((tmp_path / "nosplit.json", "json"), (tmp_path / "nosplit.cbm", "cbm")):
        with cbgpu.Model.load(path, fmt) as m:
            assert m.info()["n_trees"] == 4
            assert np.array_equal(m.leaf_indexes(floats32(X), None), np.asarray(cb.calc_leaf_indexes(X)))
            assert_same_predictions(cb, m, X, types)
            # Written back as CatBoost writes it, and CatBoost reads what cbgpu writes.
            m.save(tmp_path / "ours.json", "json")
            ours_doc = json.loads((tmp_path / "ours.json").read_text())
            for t in (0, 2):
                assert ours_doc["oblivious_trees"][t]["splits"] is None
                assert len(ours_doc["oblivious_trees"][t]["leaf_values"]) == dim
                assert len(ours_doc["oblivious_trees"][t]["leaf_weights"]) == 1
            assert ours_doc["oblivious_trees"][1]["splits"]
            for out_fmt in ("json", "cbm"):
                m.save(tmp_path / f"ours.{out_fmt}", out_fmt)
                back = catboost.CatBoost()
                back.load_model(str(tmp_path / f"ours.{out_fmt}"), format=out_fmt)
                assert np.array_equal(back.predict(X, prediction_type="RawFormulaVal"), reference[out_fmt])


# ---- prediction types bit for bit ---------------------------------------------------------------------


def multiclass_model(classes, lr, iterations, seed, scale=None):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(400, 4))
    y = (np.floor((X[:, 0] + 0.5 * X[:, 1]) * 2) % classes).astype(int)
    y[:classes] = np.arange(classes)
    model = fit_catboost(X, y, loss_function="MultiClass", iterations=iterations, depth=4, learning_rate=lr)
    if scale is not None:
        model.set_scale_and_bias(scale, [0.0] * classes)
    return model, X


# (classes, learning rate, iterations, Scale): small and large raw values; 9 classes cover the
# exponent's vector lanes and its one-value tail; Scale 400 puts differences past exp's clamping.
MULTICLASS = [(3, 0.3, 40, None), (4, 0.8, 60, None), (5, 1.0, 120, 7.0), (9, 0.5, 50, None), (8, 0.5, 50, 400.0),
              (3, 0.5, 30, 2000.0)]


@pytest.mark.parametrize("classes,lr,iterations,scale", MULTICLASS)
def test_multiclass_prediction_types_equal_catboost_bit_for_bit(classes, lr, iterations, scale, tmp_path):
    cb, X = multiclass_model(classes, lr, iterations, seed=classes, scale=scale)
    cb.save_model(str(tmp_path / "m.cbm"))
    with cbgpu.Model.load(tmp_path / "m.cbm") as m:
        assert_same_predictions(cb, m, X, ["RawFormulaVal", "Probability", "LogProbability", "Class"])
    if scale is not None and scale >= 400:
        raw = cb.predict(X, prediction_type="RawFormulaVal")
        assert np.max(raw.max(axis=1) - raw.min(axis=1)) > 709  # the clamping is exercised


@pytest.mark.parametrize("loss,types", [
    ("Logloss", ["RawFormulaVal", "Probability", "LogProbability", "Class"]),
    ("MultiLogloss", ["RawFormulaVal", "Probability", "Class"]),
    ("MultiClassOneVsAll", ["RawFormulaVal", "Probability", "LogProbability", "Class"]),
    ("Poisson", ["RawFormulaVal", "Exponent"]),
    ("RMSEWithUncertainty", ["RawFormulaVal", "RMSEWithUncertainty"]),
])
def test_other_losses_prediction_types_equal_catboost_bit_for_bit(loss, types, tmp_path):
    rng = np.random.default_rng(11)
    X = rng.normal(size=(500, 4))
    s = X[:, 0] + 0.5 * X[:, 1] - 0.3 * X[:, 2]
    y = {"Logloss": (s > 0).astype(int),
         "MultiLogloss": np.stack([(s > 0), (X[:, 3] > 0.2)], axis=1).astype(int),
         "MultiClassOneVsAll": np.digitize(s, [-0.5, 0.5]),
         "Poisson": rng.poisson(np.exp(0.6 * s)),
         "RMSEWithUncertainty": s + rng.normal(size=len(s)) * 0.3}[loss]
    cb = fit_catboost(X, y, loss_function=loss, iterations=60, depth=4, learning_rate=0.5)
    cb.save_model(str(tmp_path / "m.cbm"))
    with cbgpu.Model.load(tmp_path / "m.cbm") as m:
        assert_same_predictions(cb, m, X, types)


# ---- border types in training -------------------------------------------------------------------------

BORDER_TYPES = ["GreedyLogSum", "GreedyMinEntropy", "Median", "Uniform", "UniformAndQuantiles", "MinEntropy",
                "MaxLogSum"]
DETERMINISTIC = {"bootstrap_type": "No", "random_strength": 0, "boosting_type": "Plain", "learning_rate": 0.2,
                 "depth": 4, "iterations": 6}


def border_data(n=1500, seed=3):
    rng = np.random.default_rng(seed)
    X = np.stack([rng.normal(size=n), rng.integers(0, 40, size=n), np.exp(rng.normal(size=n) * 2),
                  np.where(rng.random(n) < 0.1, np.nan, rng.normal(size=n))], axis=1).astype(np.float32)
    y = X[:, 0] + 0.05 * X[:, 1] - np.log(X[:, 2]) * 0.3 + np.nan_to_num(X[:, 3]) + rng.normal(size=n) * 0.2
    return X, y


def train_both(X, y, params, tmp_path):
    ctx = cbgpu.Context(cbgpu.CBG_DEVICE_CPU)
    ours = cbgpu.train(cbgpu.Pool(ctx, X, label=y), {**params, "verbose": False})
    theirs = fit_catboost(X, y, **params)
    ours.save(tmp_path / "ours.json", "json")
    theirs.save_model(str(tmp_path / "theirs.json"), format="json")
    return (json.loads((tmp_path / "ours.json").read_text()), json.loads((tmp_path / "theirs.json").read_text()),
            ours, theirs)


def splits_of(doc):
    return [[(s["float_feature_index"], np.float32(s["border"])) for s in t["splits"] or []]
            for t in doc["oblivious_trees"]]


@pytest.mark.parametrize("border_type", BORDER_TYPES)
def test_training_with_each_border_type_splits_on_catboosts_borders(border_type, tmp_path):
    X, y = border_data()
    params = {**DETERMINISTIC, "border_count": 16, "feature_border_type": border_type}
    ours_doc, theirs_doc, ours, _ = train_both(X, y, params, tmp_path)
    assert splits_of(ours_doc) == splits_of(theirs_doc)
    stored = json.loads(ours.info_value("params"))["data_processing_options"]["float_features_binarization"]
    assert stored["border_type"] == border_type
    assert json.loads(ours.info_value("params"))["flat_params"]["feature_border_type"] == border_type


def test_per_float_feature_quantization_like_catboost(tmp_path):
    X, y = border_data()
    params = {**DETERMINISTIC, "border_count": 32,
              "per_float_feature_quantization": ["0:border_count=3,border_type=Median", "3:nan_mode=Max",
                                                 "2:border_type=Uniform,border_count=7"]}
    ours_doc, theirs_doc, ours, _ = train_both(X, y, params, tmp_path)
    assert splits_of(ours_doc) == splits_of(theirs_doc)
    feats = {f["feature_index"]: f for f in ours_doc["features_info"]["float_features"]}
    assert len(feats[0]["borders"]) <= 3 and len(feats[2]["borders"]) <= 7
    assert feats[3]["nan_value_treatment"] == "AsTrue"
    per = json.loads(ours.info_value("params"))["data_processing_options"]["per_float_feature_quantization"]
    assert per["0"]["border_count"] == 3 and per["0"]["border_type"] == "Median"
    assert per["3"]["nan_mode"] == "Max" and per["3"]["border_count"] == 32
    # One string, and a feature named instead of indexed.
    ctx = cbgpu.Context(cbgpu.CBG_DEVICE_CPU)
    pool = cbgpu.Pool(ctx, X, label=y, feature_names=["a", "b", "c", "d"])
    named = cbgpu.train(pool, {**params, "per_float_feature_quantization": "a:border_count=2", "verbose": False})
    named.save(tmp_path / "named.json", "json")
    doc = json.loads((tmp_path / "named.json").read_text())
    assert len(doc["features_info"]["float_features"][0]["borders"]) <= 2


@pytest.mark.parametrize("value,fragment", [
    ("9:border_count=3", "out of range"),
    ("0:border_count=300", "border_count"),
    ("0:border_type=Nope", "not a border type"),
    ("0:nan_mode=Sometimes", "nan_mode"),
    ("0:colour=red", "unknown key 'colour'"),
    ("nosuchname:border_count=3", "no feature is named"),
])
def test_per_float_feature_quantization_errors(value, fragment):
    X, y = border_data(200)
    ctx = cbgpu.Context(cbgpu.CBG_DEVICE_CPU)
    pool = cbgpu.Pool(ctx, X, label=y)
    with expect_error(cbgpu.CBG_ERR_INVALID_ARGUMENT, "per_float_feature_quantization", fragment):
        cbgpu.train(pool, {"iterations": 2, "per_float_feature_quantization": [value], "verbose": False})


# ---- known but not implemented -------------------------------------------------------------------------


@pytest.mark.parametrize("params,code,fragment", [
    ({"fold_permutation_block": -1}, cbgpu.CBG_ERR_INVALID_ARGUMENT, "'fold_permutation_block'"),
    ({"rsm": 0.5}, cbgpu.CBG_ERR_NOT_IMPLEMENTED, "'rsm'"),
    ({"has_tyme": True}, cbgpu.CBG_ERR_INVALID_ARGUMENT, "unknown parameter 'has_tyme'"),
    ({"loss_function": "Huber:delta=1"}, cbgpu.CBG_ERR_NOT_IMPLEMENTED, "Huber"),
    ({"loss_function": "YetiRank"}, cbgpu.CBG_ERR_NOT_IMPLEMENTED, "YetiRank"),
    ({"loss_function": "AUC"}, cbgpu.CBG_ERR_INVALID_ARGUMENT, "not a loss"),
    ({"eval_metric": "MAPE"}, cbgpu.CBG_ERR_NOT_IMPLEMENTED, "MAPE"),
    ({"custom_metric": ["RMSE", "SMAPE"]}, cbgpu.CBG_ERR_NOT_IMPLEMENTED, "SMAPE"),
    ({"eval_metric": "Nope"}, cbgpu.CBG_ERR_INVALID_ARGUMENT, "Nope"),
    ({"score_function": "SolarL2"}, cbgpu.CBG_ERR_NOT_IMPLEMENTED, "SolarL2"),
    ({"score_function": "Solar"}, cbgpu.CBG_ERR_INVALID_ARGUMENT, "Solar"),
    ({"sampling_unit": "Group"}, cbgpu.CBG_ERR_NOT_IMPLEMENTED, "Group"),
    ({"feature_border_type": "Greedy"}, cbgpu.CBG_ERR_INVALID_ARGUMENT, "Greedy"),
    ({"simple_ctr": "Counter:PriorEstimation=BetaPrior"}, cbgpu.CBG_ERR_INVALID_ARGUMENT, "BetaPrior"),
    ({"combinations_ctr": "Borders:PriorEstimation=BetaPrior"}, cbgpu.CBG_ERR_INVALID_ARGUMENT, "combinations"),
    ({"simple_ctr": "Borders:PriorEstimation=Beta"}, cbgpu.CBG_ERR_INVALID_ARGUMENT, "PriorEstimation"),
    ({"simple_ctr": "Borders:TargetBorderCount=2"}, cbgpu.CBG_ERR_NOT_IMPLEMENTED, "TargetBorderCount"),
    ({"simple_ctr": "Borderz"}, cbgpu.CBG_ERR_INVALID_ARGUMENT, "not a CTR type"),
])
def test_known_unimplemented_is_not_implemented_unknown_is_invalid(params, code, fragment):
    X, y = border_data(200)
    ctx = cbgpu.Context(cbgpu.CBG_DEVICE_CPU)
    pool = cbgpu.Pool(ctx, X, label=y)
    with expect_error(code, fragment):
        cbgpu.train(pool, {"iterations": 2, "verbose": False, **params})


# ---- ctr_target_border_count ----------------------------------------------------------------------------


@pytest.mark.parametrize("loss,combinations", [("RMSE", 1), ("Poisson", 1), ("RMSE", 2)])
def test_ctr_target_border_count_above_one(loss, combinations, tmp_path):
    """A regression target split by several borders: Borders CTRs per target border, tables with one
    count per class; CatBoost loads the model and predicts what cbgpu predicts."""
    rng = np.random.default_rng(21)
    n = 1500
    cats = [rng.integers(0, k, n) for k in (7, 30, 12)]
    x = rng.normal(size=n).astype(np.float32)
    effects = [np.random.default_rng(100 + j).normal(size=50) for j in range(3)]
    signal = x + sum(e[c] for e, c in zip(effects, cats))
    y = np.exp(0.4 * signal) if loss == "Poisson" else signal
    if loss == "Poisson":
        y = rng.poisson(y).astype(np.float64)
    ctx = cbgpu.Context(cbgpu.CBG_DEVICE_CPU)
    cols = [np.ascontiguousarray(x)] + [np.ascontiguousarray(c.astype(np.int64)) for c in cats]
    pool = cbgpu.Pool(ctx, columns=cols, label=np.ascontiguousarray(y, dtype=np.float64), cat_features=[1, 2, 3])
    params = {"loss_function": loss, "iterations": 30, "depth": 4, "ctr_target_border_count": 3,
              "simple_ctr": ["Borders", "Buckets", "BinarizedTargetMeanValue", "Counter"],
              "max_ctr_complexity": combinations, "verbose": False}
    model = cbgpu.train(pool, params)
    model.save(tmp_path / "m.json", "json")
    model.save(tmp_path / "m.cbm", "cbm")
    doc = json.loads((tmp_path / "m.json").read_text())
    ctrs = doc["features_info"]["ctrs"]
    borders_idx = {c["target_border_idx"] for c in ctrs if c["ctr_type"] == "Borders"}
    assert borders_idx and borders_idx <= {0, 1, 2} and len(borders_idx) > 1
    strides = {json.loads(k)["type"]: v["hash_stride"] for k, v in doc["ctr_data"].items()}
    assert strides.get("Borders", 5) == 5 and strides.get("Buckets", 5) == 5  # key + 4 class counts
    assert json.loads(model.info_value("params"))["flat_params"]["ctr_target_border_count"] == 3
    frame = pd.DataFrame({"x": x, **{f"c{j}": c for j, c in enumerate(cats)}})
    ours = np.asarray(model.predict(cbgpu.Pool(ctx, columns=cols, cat_features=[1, 2, 3]))).reshape(-1)
    cb_pool = catboost.Pool(frame, cat_features=["c0", "c1", "c2"])
    cb = catboost.CatBoost()
    cb.load_model(str(tmp_path / "m.cbm"))
    assert np.array_equal(ours, cb.predict(cb_pool, prediction_type="RawFormulaVal"))
    # JSON: what CatBoost reads from cbgpu's file is what it reads from its own JSON of the model (its
    # JSON reader takes the sums of mean tables as integers, which these, over 4 classes, are not).
    cb.save_model(str(tmp_path / "catboost.json"), format="json")
    theirs = {}
    for name in ("catboost.json", "m.json"):
        again = catboost.CatBoost()
        again.load_model(str(tmp_path / name), format="json")
        theirs[name] = again.predict(cb_pool, prediction_type="RawFormulaVal")
    assert np.array_equal(theirs["m.json"], theirs["catboost.json"])


def test_catboost_permutation_options_are_taken():
    X, y = border_data(200)
    ctx = cbgpu.Context(cbgpu.CBG_DEVICE_CPU)
    model = cbgpu.train(cbgpu.Pool(ctx, X, label=y),
                        {"iterations": 2, "verbose": False, "has_time": False, "permutation_count": 1,
                         "fold_permutation_block": 64})
    assert model.info()["n_trees"] == 2
    # Without CTR features (or with has_time) any permutation_count means one permutation, as in CatBoost.
    one = cbgpu.train(cbgpu.Pool(ctx, X, label=y), {"iterations": 5, "verbose": False})
    for extra in ({"permutation_count": 4}, {"has_time": True, "permutation_count": 4}):
        model = cbgpu.train(cbgpu.Pool(ctx, X, label=y), {"iterations": 5, "verbose": False, **extra})
        assert np.array_equal(model.predict(X), one.predict(X))


@pytest.mark.parametrize("loss,ctrs", [("Logloss", ["Borders", "Buckets", "Counter"]),
                                       ("RMSE", ["Borders", "BinarizedTargetMeanValue", "Counter"]),
                                       ("MultiClass", ["Borders", "Buckets", "Counter"])])
def test_catboost_ctr_tables_written_as_catboost_writes_them(loss, ctrs, tmp_path):
    """A CatBoost model with CTR tables (simple and combinations), read from its .cbm or its JSON and
    written as JSON, is CatBoost's JSON document: the same keys in the same order, with the
    empty-bucket marker CatBoost's writer lists where it lists it."""
    rng = np.random.RandomState(3)
    n = 2000
    cats = [rng.randint(0, k, n) for k in (7, 30, 150)]
    x = rng.normal(size=n)
    signal = x + (cats[0] % 3 == 1) + 0.5 * ((cats[1] + cats[2]) % 4 == 0) + 0.3 * rng.normal(size=n)
    y = {"Logloss": signal > 0.8, "RMSE": signal, "MultiClass": np.digitize(signal, [0.3, 1.2])}[loss]
    frame = pd.DataFrame({"x": x, **{f"c{k}": c for k, c in enumerate(cats)}})
    theirs = catboost.CatBoost({"loss_function": loss, "iterations": 40, "depth": 4, "random_seed": 1,
                                "one_hot_max_size": 2, "simple_ctr": ctrs, "combinations_ctr": ctrs[:2],
                                "max_ctr_complexity": 2, "verbose": 0, "train_dir": str(tmp_path)})
    theirs.fit(catboost.Pool(frame, y.astype(np.float64), cat_features=[1, 2, 3]))
    theirs.save_model(str(tmp_path / "m.cbm"))
    theirs.save_model(str(tmp_path / "m.json"), format="json")
    expected = json.loads((tmp_path / "m.json").read_text())
    assert any(len(json.loads(k)["identifier"]) > 1 for k in expected["ctr_data"])  # a combination
    for path, fmt in ((tmp_path / "m.cbm", "cbm"), (tmp_path / "m.json", "json")):
        cbgpu.Model.load(path, fmt).save(tmp_path / "ours.json", "json")
        ours = json.loads((tmp_path / "ours.json").read_text())
        assert ours["ctr_data"] == expected["ctr_data"], fmt
        assert ours == expected, fmt
