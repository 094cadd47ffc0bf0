# SPDX-License-Identifier: Apache-2.0
"""The classification metrics beyond the losses (AUC with weights and of type Mu, PRAUC,
NormalizedGini, BrierScore, LogLikelihoodOfPrediction, TotalF1, MCC, BalancedAccuracy, Kappa,
WKappa), logged while training as custom_metric and eval_metric, equal to catboost.utils.eval_metric
on the model's predictions, with CatBoost's defaults of use_weights and of skipping a metric on the
learn set."""
import numpy as np
import pytest

import cbgpu

catboost = pytest.importorskip("catboost")
from catboost.utils import eval_metric  # noqa: E402

QUICK = dict(iterations=8, learning_rate=0.3, depth=3, random_seed=5, use_best_model=False)

BINARY = ["AUC", "AUC:use_weights=true", "PRAUC", "PRAUC:use_weights=false", "NormalizedGini", "BrierScore",
          "LogLikelihoodOfPrediction", "TotalF1", "TotalF1:average=Macro", "TotalF1:average=Micro", "MCC",
          "BalancedAccuracy", "Kappa", "WKappa", "MCC:use_weights=false"]
MULTICLASS = ["AUC", "AUC:type=Mu;use_weights=true", "TotalF1", "TotalF1:average=Macro", "TotalF1:average=Micro",
              "MCC", "Kappa", "WKappa", "Kappa:use_weights=false"]
SKIPPED_ON_LEARN = {"AUC", "AUC:use_weights=true", "NormalizedGini", "AUC:type=Mu;use_weights=true"}


def data(classes, seed=0, n=400):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 4)).astype(np.float32)
    score = X[:, 0] + 0.8 * rng.standard_normal(n)
    y = (score > 0).astype(np.int64) if classes == 2 else np.digitize(score, [-0.5, 0.5]).astype(np.int64)
    w = rng.uniform(0.2, 2.0, n).astype(np.float32)
    split = n * 3 // 4
    return X[:split], y[:split], w[:split], X[split:], y[split:]


def catboost_value(metric, y, approx, weight):
    """CatBoost's value; eval_metric weighs whenever weights are given, so use_weights is applied here
    (CatBoost's training default: weights used except by AUC)."""
    name, _, params = metric.partition(":")
    settings = dict(p.split("=") for p in params.split(";")) if params else {}
    use = settings.pop("use_weights", "false" if name == "AUC" else "true") == "true"
    text = name + (":" + ";".join(f"{k}={v}" for k, v in settings.items()) if settings else "")
    return eval_metric(y, approx, text, weight=weight if use else None)[0]


@pytest.mark.parametrize("classes,metrics", [(2, BINARY), (3, MULTICLASS)], ids=["binary", "multiclass"])
def test_custom_metrics_equal_catboost(classes, metrics):
    X, y, w, eX, ey = data(classes)
    learn_metrics = [m if m not in SKIPPED_ON_LEARN else m + (";" if ":" in m else ":") + "hints=skip_train~false"
                     for m in metrics]
    clf = cbgpu.CatBoostClassifier(custom_metric=metrics + learn_metrics, **QUICK)
    clf.fit(X, y, sample_weight=w, eval_set=(eX, ey))
    history = clf.evals_result_
    learn_approx = clf.predict(X, prediction_type="RawFormulaVal")
    eval_approx = clf.predict(eX, prediction_type="RawFormulaVal")
    for metric, learn_metric in zip(metrics, learn_metrics):
        test_value = history["validation"][metric][-1]
        assert test_value == pytest.approx(catboost_value(metric, ey, eval_approx, None), rel=1e-7, abs=1e-9), metric
        # The default skips AUC and NormalizedGini on learn; hints=skip_train~false computes them.
        assert (metric in history["learn"]) == (metric not in SKIPPED_ON_LEARN), metric
        learn_value = history["learn"][learn_metric][-1]
        assert learn_value == pytest.approx(catboost_value(metric, y, learn_approx, w), rel=1e-7, abs=1e-9), metric


@pytest.mark.parametrize("metric", ["MCC", "PRAUC", "Kappa", "BrierScore"])
def test_eval_metric_drives_early_stopping(metric):
    X, y, w, eX, ey = data(2, seed=1)
    clf = cbgpu.CatBoostClassifier(iterations=60, learning_rate=0.5, depth=4, random_seed=3, eval_metric=metric)
    clf.fit(X, y, eval_set=(eX, ey), early_stopping_rounds=4)
    values = clf.evals_result_["validation"][metric]
    best = clf.best_iteration_
    higher_is_better = metric != "BrierScore"
    assert values[best] == (max(values) if higher_is_better else min(values))
    assert len(values) <= best + 5  # stopped 4 iterations after the best one (or at the end)
    assert clf.tree_count_ == best + 1


def test_metric_parameters_are_checked():
    X, y, w, eX, ey = data(2)
    with pytest.raises(cbgpu.CbgError, match="average"):
        cbgpu.CatBoostClassifier(custom_metric=["TotalF1:average=Median"], **QUICK).fit(X, y)
    with pytest.raises(cbgpu.CbgError, match="PRAUC is implemented for binary classification only"):
        X3, y3, _, _, _ = data(3)
        cbgpu.CatBoostClassifier(custom_metric=["PRAUC"], **QUICK).fit(X3, y3)
