# SPDX-License-Identifier: Apache-2.0
"""Categorical features in cbg_train (issue #5) against the `catboost` package, host reference path.

A generated "adult-like" census set (two numeric columns, six integer categorical columns of 2 to
60 values with skewed frequencies) and a regression set: both trainers get the same parameters
(one-hot for small features, Borders and Counter CTRs for the rest, no combinations); the held-out
metric (mean over three seeds: the ordered CTRs depend on the permutation) is within 1% of CatBoost's; CatBoost loads our .cbm (one-hot features, CTR features and
their tables) and predicts exactly what our evaluator predicts; CTR parameters are refused by name.
"""
from __future__ import annotations

import json

import numpy as np
import pytest

catboost = pytest.importorskip("catboost")
pd = pytest.importorskip("pandas")
import catboost.utils  # noqa: E402

import cbgpu  # noqa: E402

CARDS = [2, 5, 9, 16, 40, 60]
PARAMS = {"iterations": 150, "learning_rate": 0.1, "depth": 6, "boosting_type": "Plain",
          "one_hot_max_size": 2, "simple_ctr": ["Borders", "Counter"], "max_ctr_complexity": 1}


def adult_like(n: int, kind: str, seed: int):
    rng = np.random.RandomState(seed)
    effects = np.random.RandomState(100)  # the same category effects for learn and test
    age = rng.uniform(17, 90, n).astype(np.float32)
    hours = np.clip(rng.normal(40, 12, n), 1, 99).astype(np.float32)
    cats, signal = [], 0.03 * (age - 40) + 0.02 * (hours - 40)
    for card in CARDS:
        p = 1.0 / np.arange(1, card + 1) ** 1.1
        col = rng.choice(card, size=n, p=p / p.sum()).astype(np.int64) * 3 - 7
        eff = effects.normal(0, 0.8, card)
        signal = signal + eff[(col + 7) // 3]
        cats.append(col)
    signal = signal + 0.5 * rng.normal(size=n)
    y = (signal > 0.5).astype(np.float64) if kind == "binary" else signal.astype(np.float64)
    return age, hours, cats, y


def frames(age, hours, cats):
    df = pd.DataFrame({"age": age, "hours": hours})
    for k, c in enumerate(cats):
        df[f"c{k}"] = c
    return df


def our_pool(ctx, age, hours, cats, y=None):
    cols = [np.ascontiguousarray(age), np.ascontiguousarray(hours)] + [np.ascontiguousarray(c) for c in cats]
    return cbgpu.Pool(ctx, columns=cols, label=None if y is None else np.ascontiguousarray(y),
                      cat_features=list(range(2, 2 + len(cats))))


@pytest.mark.parametrize("kind,loss,metric", [("binary", "Logloss", "Logloss"), ("regression", "RMSE", "RMSE")])
def test_quality_and_catboost_predicts_our_model(tmp_path, kind, loss, metric):
    a, h, c, y = adult_like(5000, kind, 1)
    ta, th, tc, ty = adult_like(2000, kind, 2)
    params = {**PARAMS, "loss_function": loss}
    ctx = cbgpu.Context(cbgpu.CBG_DEVICE_CPU)
    # Ordered CTRs depend on the permutation (ours is not CatBoost's): quality over three seeds.
    models = [cbgpu.train(our_pool(ctx, a, h, c, y), {**params, "verbose": False, "random_seed": s})
              for s in range(3)]
    ours = models[0]
    cat_idx = list(range(2, 2 + len(c)))
    theirs = catboost.CatBoost({**params, "verbose": 0, "thread_count": 1, "allow_writing_files": False})
    theirs.fit(catboost.Pool(frames(a, h, c), y, cat_features=cat_idx))

    test_pool = our_pool(ctx, ta, th, tc)
    our_raw = ours.predict(test_pool)[:, 0]
    their_raw = theirs.predict(catboost.Pool(frames(ta, th, tc), cat_features=cat_idx),
                               prediction_type="RawFormulaVal")
    ours_m = np.mean([catboost.utils.eval_metric(ty, m.predict(test_pool)[:, 0], metric)[0] for m in models])
    theirs_m = catboost.utils.eval_metric(ty, their_raw, metric)[0]
    print(f"{kind}: ours {ours_m:.5f} catboost {theirs_m:.5f}")
    assert ours_m <= theirs_m * 1.01

    # CatBoost loads our model (one-hot and CTR features with their tables) and predicts the same.
    path = tmp_path / "m.cbm"
    ours.save(str(path))
    loaded = catboost.CatBoost()
    loaded.load_model(str(path))
    again = loaded.predict(catboost.Pool(frames(ta, th, tc), cat_features=cat_idx), prediction_type="RawFormulaVal")
    np.testing.assert_allclose(again, our_raw, rtol=1e-12, atol=1e-12)
    assert ours.info()["n_cat_features"] == len(c)


def test_gpu_default_ctrs_train_and_catboost_predicts(tmp_path):
    """CatBoost's GPU default CTR set (Borders priors 0, 0.5, 1 and FeatureFreq): CatBoost predicts our model."""
    a, h, c, y = adult_like(3000, "binary", 3)
    ctx = cbgpu.Context(cbgpu.CBG_DEVICE_CPU)
    ours = cbgpu.train(our_pool(ctx, a, h, c, y), {"iterations": 60, "loss_function": "Logloss", "verbose": False})
    path = tmp_path / "d.cbm"
    ours.save(str(path))
    loaded = catboost.CatBoost()
    loaded.load_model(str(path))
    cat_idx = list(range(2, 2 + len(c)))
    theirs = loaded.predict(catboost.Pool(frames(a, h, c), cat_features=cat_idx), prediction_type="RawFormulaVal")
    np.testing.assert_allclose(theirs, ours.predict(our_pool(ctx, a, h, c))[:, 0], rtol=1e-12, atol=1e-12)


def test_ctr_parameters_refused_by_name():
    a, h, c, y = adult_like(200, "binary", 4)
    ctx = cbgpu.Context(cbgpu.CBG_DEVICE_CPU)
    pool = our_pool(ctx, a, h, c, y)
    for bad, name in [({"simple_ctr": ["Bordrs"]}, "simple_ctr"), ({"one_hot_max_size": -1}, "one_hot_max_size"),
                      ({"counter_calc_method": "x"}, "counter_calc_method"),
                      ({"max_ctr_complexity": 0}, "max_ctr_complexity")]:
        with pytest.raises(cbgpu.CbgError) as e:
            cbgpu.train(pool, {"iterations": 2, **bad})
        assert name in str(e.value)


@pytest.mark.parametrize("loss", ["MultiClass", "Logloss"])
def test_target_ctr_types_catboost_predicts(tmp_path, loss):
    """Buckets, BinarizedTargetMeanValue, FloatTargetMeanValue and Borders (one CTR per target border on MultiClass):
    CatBoost loads the model and predicts what our evaluator predicts."""
    a, h, c, y = adult_like(3000, "regression", 6)
    y = np.digitize(y, [0.0, 1.0]).astype(np.float64) if loss == "MultiClass" else (y > 0.5).astype(np.float64)
    ctx = cbgpu.Context(cbgpu.CBG_DEVICE_CPU)
    params = {"iterations": 40, "loss_function": loss, "verbose": False, "max_ctr_complexity": 1,
              "simple_ctr": ["Borders", "Buckets:Prior=0.5", "BinarizedTargetMeanValue", "Counter",
                             "FloatTargetMeanValue"]}
    ours = cbgpu.train(our_pool(ctx, a, h, c, y), params)
    path = tmp_path / "t.cbm"
    ours.save(str(path))
    loaded = catboost.CatBoost()
    loaded.load_model(str(path))
    cat_idx = list(range(2, 2 + len(c)))
    ta, th, tc, _ = adult_like(1000, "regression", 7)
    theirs = loaded.predict(catboost.Pool(frames(ta, th, tc), cat_features=cat_idx), prediction_type="RawFormulaVal")
    mine = ours.predict(our_pool(ctx, ta, th, tc))
    np.testing.assert_allclose(np.asarray(theirs).reshape(mine.shape), mine, rtol=1e-12, atol=1e-12)


def test_per_feature_ctr_full_counter_and_eval_set(tmp_path):
    """per_feature_ctr, counter_calc_method=Full and an eval set: the eval metric the trainer reports
    is the metric of the saved model's predictions, which CatBoost reproduces."""
    a, h, c, y = adult_like(3000, "binary", 8)
    ta, th, tc, ty = adult_like(1000, "binary", 9)
    ctx = cbgpu.Context(cbgpu.CBG_DEVICE_CPU)
    seen = []
    ours = cbgpu.train(our_pool(ctx, a, h, c, y),
                       {"iterations": 30, "loss_function": "Logloss", "verbose": False, "use_best_model": False,
                        "one_hot_max_size": 5, "counter_calc_method": "Full", "simple_ctr": ["Counter"],
                        "per_feature_ctr": ["6:Borders:Prior=0.2;FeatureFreq", "7:Buckets"]},
                       eval_set=our_pool(ctx, ta, th, tc, ty), callback=seen.append)
    info = json.loads(ours.to_bytes("json"))["features_info"]
    assert {f["ctr_type"] for f in info.get("ctrs", [])} <= {"Borders", "FeatureFreq", "Buckets", "Counter"}
    path = tmp_path / "f.cbm"
    ours.save(str(path))
    loaded = catboost.CatBoost()
    loaded.load_model(str(path))
    cat_idx = list(range(2, 2 + len(c)))
    raw = loaded.predict(catboost.Pool(frames(ta, th, tc), cat_features=cat_idx), prediction_type="RawFormulaVal")
    assert abs(catboost.utils.eval_metric(ty, raw, "Logloss")[0] - seen[-1]["eval_metric"]) < 1e-6


def test_counter_full_keeps_eval_only_values_as_catboost(tmp_path):
    """counter_calc_method=Full with an eval set: the eval values the learn set lacks become table keys
    with their eval counts, after the learn keys, as in CatBoost's table (same keys, counts, order and
    denominator); CatBoost predicts our model as we do."""
    rng = np.random.RandomState(0)
    n = 400
    c = rng.randint(1, 6, n).astype(np.int64)
    x = rng.normal(size=n).astype(np.float32)
    y = ((c % 2) + 0.3 * rng.normal(size=n) > 0.5).astype(np.float64)
    ec = np.array([77] * 40 + [99] * 20 + [1] * 10, dtype=np.int64)  # 77 and 99: eval only
    ex = rng.normal(size=ec.size).astype(np.float32)
    ey = (rng.rand(ec.size) > 0.5).astype(np.float64)
    params = {"iterations": 5, "depth": 2, "boosting_type": "Plain", "one_hot_max_size": 1,
              "simple_ctr": ["Counter"], "counter_calc_method": "Full", "max_ctr_complexity": 1,
              "random_seed": 0, "learning_rate": 0.1}
    theirs = catboost.CatBoostClassifier(**params, task_type="CPU", verbose=0, train_dir=str(tmp_path))
    df, edf = pd.DataFrame({"x": x, "c": c}), pd.DataFrame({"x": ex, "c": ec})
    theirs.fit(catboost.Pool(df, y, cat_features=[1]), eval_set=catboost.Pool(edf, ey, cat_features=[1]))
    theirs.save_model(str(tmp_path / "cb.json"), format="json")
    ctx = cbgpu.Context(cbgpu.CBG_DEVICE_CPU)
    ours = cbgpu.train(cbgpu.Pool(ctx, columns=[x, c], label=y, cat_features=[1]),
                       dict(params, loss_function="Logloss", verbose=False),
                       eval_set=cbgpu.Pool(ctx, columns=[ex, ec], label=ey, cat_features=[1]))

    def entries(model_json):
        (table,) = model_json["ctr_data"].values()
        pairs = list(zip(table["hash_map"][0::2], table["hash_map"][1::2]))
        # CatBoost's JSON also lists its empty-bucket marker; it is no key.
        return [(int(k), v) for k, v in pairs if int(k) != 2**64 - 1], table["counter_denominator"]

    mine, their_tables = entries(json.loads(ours.to_bytes("json"))), entries(json.load(open(tmp_path / "cb.json")))
    assert len(mine[0]) == 7  # five learn values, two eval-only
    assert mine == their_tables
    path = tmp_path / "ours.cbm"
    ours.save(str(path))
    loaded = catboost.CatBoost()
    loaded.load_model(str(path))
    raw = loaded.predict(catboost.Pool(edf, cat_features=[1]), prediction_type="RawFormulaVal")
    ours_raw = ours.predict(cbgpu.Pool(ctx, columns=[ex, ec], cat_features=[1]))[:, 0]
    np.testing.assert_allclose(ours_raw, raw, rtol=0, atol=1e-12)


def test_beta_prior_estimation_catboost_predicts(tmp_path):
    """PriorEstimation=BetaPrior (CatBoost's GPU trainer's option; its CPU trainer refuses it, our CPU
    context computes the GPU's result): each Borders CTR carries one estimated prior alpha/(alpha+beta),
    per feature; CatBoost loads the model (.cbm and JSON) and predicts what our evaluator predicts."""
    a, h, c, y = adult_like(3000, "binary", 11)
    ctx = cbgpu.Context(cbgpu.CBG_DEVICE_CPU)
    ours = cbgpu.train(our_pool(ctx, a, h, c, y),
                       {"iterations": 40, "loss_function": "Logloss", "verbose": False, "max_ctr_complexity": 1,
                        "simple_ctr": ["Borders:PriorEstimation=BetaPrior", "Counter"]})
    ctrs = json.loads(ours.to_bytes("json"))["features_info"]["ctrs"]
    priors = {}
    for f in ctrs:
        if f["ctr_type"] == "Borders":
            feature = tuple(e["cat_feature_index"] for e in f["elements"])
            priors.setdefault(feature, set()).add((f["prior_numerator"], f["prior_denomerator"]))
    assert priors, "no Borders CTR in the model"
    for feature, ps in priors.items():
        assert len(ps) == 1, f"feature {feature}: one estimated prior, got {ps}"
        num, denom = next(iter(ps))
        assert 0 < num < denom and (num, denom) not in {(0, 1), (0.5, 1), (1, 1)}
    cat_idx = list(range(2, 2 + len(c)))
    ta, th, tc, _ = adult_like(1000, "binary", 12)
    mine = ours.predict(our_pool(ctx, ta, th, tc))[:, 0]
    for fmt in ("cbm", "json"):
        path = tmp_path / f"b.{fmt}"
        ours.save(str(path), format=fmt)
        loaded = catboost.CatBoost()
        loaded.load_model(str(path), format=fmt)
        theirs = loaded.predict(catboost.Pool(frames(ta, th, tc), cat_features=cat_idx),
                                prediction_type="RawFormulaVal")
        np.testing.assert_allclose(theirs, mine, rtol=1e-12, atol=1e-12)
