# SPDX-License-Identifier: Apache-2.0
"""CatBoost's conveniences with CatBoost's names and shapes: evals_result_, best_iteration_,
best_score_ (equal to what the catboost package reads from the same model file, both ways),
get_all_params(), eval_set forms, fit's early_stopping_rounds/use_best_model/verbose and the progress
lines, feature names, and feature importances (where the library has them)."""
import re

import numpy as np
import pytest

import cbgpu

catboost = pytest.importorskip("catboost")

LINE = re.compile(r"^(\d+):\tlearn: (-?\d+\.\d{7})\ttest: (-?\d+\.\d{7})\tbest: (-?\d+\.\d{7}) \((\d+)\)"
                  r"\ttotal: \S+( \S+)?\tremaining: \S+( \S+)?$")
QUICK = dict(learning_rate=0.5, depth=4, random_seed=3)


def data(seed=0, n=600, features=5):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, features)).astype(np.float32)
    y = (X[:, 0] + 0.9 * rng.standard_normal(n) > 0).astype(np.int64)
    split = n * 2 // 3
    return X[:split], y[:split], X[split:], y[split:]


def assert_same_nested(ours, theirs):
    """Equal keys at every level; numbers equal up to the last bits (catboost's JSON reader rounds
    some decimal texts one unit in the last place away from the nearest double)."""
    assert isinstance(ours, dict) and isinstance(theirs, dict)
    assert set(ours) == set(theirs), (ours.keys(), theirs.keys())
    for key in ours:
        if isinstance(ours[key], dict):
            assert_same_nested(ours[key], theirs[key])
        else:
            np.testing.assert_allclose(ours[key], theirs[key], rtol=1e-14, atol=0)


def early_stopped():
    X, y, eX, ey = data()
    clf = cbgpu.CatBoostClassifier(iterations=200, custom_metric=["AUC", "Accuracy"], **QUICK)
    return clf.fit(X, y, eval_set=(eX, ey), early_stopping_rounds=5)


def test_our_metric_history_reads_the_same_in_catboost(tmp_path):
    ours = early_stopped()
    run = len(ours.evals_result_["validation"]["Logloss"])
    assert run < 200 and run == ours.best_iteration_ + 6  # stopped 5 iterations after the best one
    assert ours.tree_count_ == ours.best_iteration_ + 1  # use_best_model: on with an eval set
    assert len(ours.evals_result_["learn"]["Logloss"]) == run  # the history keeps the cut iterations
    assert set(ours.evals_result_["validation"]) == {"Logloss", "AUC", "Accuracy"}
    best = ours.best_iteration_
    assert ours.best_score_["validation"]["Logloss"] == ours.evals_result_["validation"]["Logloss"][best]
    assert ours.best_score_["validation"]["Logloss"] == min(ours.evals_result_["validation"]["Logloss"])
    path = tmp_path / "ours.cbm"
    ours.save_model(str(path))
    theirs = catboost.CatBoostClassifier()
    theirs.load_model(str(path))
    assert theirs.best_iteration_ == ours.best_iteration_ and theirs.tree_count_ == ours.tree_count_
    assert_same_nested(ours.evals_result_, theirs.evals_result_)
    assert_same_nested(ours.best_score_, theirs.best_score_)


def test_catboosts_metric_history_reads_the_same_in_cbgpu(tmp_path):
    X, y, eX, ey = data(1)
    theirs = catboost.CatBoostClassifier(iterations=200, custom_metric=["AUC"], od_type="Iter", od_wait=5,
                                         verbose=0, thread_count=1, allow_writing_files=False, **QUICK)
    theirs.fit(X, y, eval_set=(eX, ey))
    path = tmp_path / "theirs.cbm"
    theirs.save_model(str(path))
    ours = cbgpu.CatBoostClassifier().load_model(str(path))
    assert ours.best_iteration_ == theirs.best_iteration_ and ours.tree_count_ == theirs.tree_count_
    assert_same_nested(ours.evals_result_, theirs.evals_result_)
    assert_same_nested(ours.best_score_, theirs.best_score_)
    assert ours.feature_names_ == theirs.feature_names_
    np.testing.assert_array_equal(ours.classes_, theirs.classes_)
    np.testing.assert_allclose(ours.predict_proba(eX), theirs.predict_proba(eX), rtol=1e-12)


def test_without_an_eval_set_only_learn_is_reported():
    X, y, _, _ = data()
    clf = cbgpu.CatBoostClassifier(iterations=7, **QUICK).fit(X, y)
    assert set(clf.evals_result_) == {"learn"} and len(clf.evals_result_["learn"]["Logloss"]) == 7
    assert clf.best_iteration_ is None and set(clf.best_score_) == {"learn"}
    assert clf.get_best_iteration() is None and clf.get_evals_result() == clf.evals_result_


def test_eval_set_as_pair_list_or_pool():
    X, y, eX, ey = data()
    fits = [cbgpu.CatBoostClassifier(iterations=15, **QUICK).fit(X, y, eval_set=e)
            for e in ((eX, ey), [(eX, ey)], catboost.Pool(eX, ey), [catboost.Pool(eX, ey)])]
    for other in fits[1:]:
        assert other.evals_result_ == fits[0].evals_result_
        np.testing.assert_array_equal(other.predict_proba(eX), fits[0].predict_proba(eX))
    with pytest.raises(ValueError, match="one \\(X, y\\) pair or catboost.Pool is supported, not 2"):
        cbgpu.CatBoostClassifier(iterations=2).fit(X, y, eval_set=[(eX, ey), (eX, ey)])


def test_fit_overrides_early_stopping_and_use_best_model():
    X, y, eX, ey = data()
    clf = cbgpu.CatBoostClassifier(iterations=200, **QUICK)
    clf.fit(X, y, eval_set=(eX, ey), early_stopping_rounds=4, use_best_model=False)
    run = len(clf.evals_result_["validation"]["Logloss"])
    assert run == clf.best_iteration_ + 5 and clf.tree_count_ == run  # every tree kept
    assert clf.get_params()["early_stopping_rounds"] is None  # fit's arguments are not parameters
    clf.fit(X, y, eval_set=(eX, ey), early_stopping_rounds=4)
    assert clf.tree_count_ == clf.best_iteration_ + 1


def test_verbose_prints_catboosts_progress_lines(capsys):
    X, y, eX, ey = data()
    clf = cbgpu.CatBoostClassifier(iterations=12, **QUICK).fit(X, y, eval_set=(eX, ey), verbose=5)
    out = capsys.readouterr().out
    lines = [m for m in map(LINE.match, out.splitlines()) if m]
    assert [int(m.group(1)) for m in lines] == [0, 5, 10, 11]
    history = clf.evals_result_
    for m in lines:
        it = int(m.group(1))
        assert m.group(2) == f"{history['learn']['Logloss'][it]:.7f}"
        assert m.group(3) == f"{history['validation']['Logloss'][it]:.7f}"
    assert f"bestTest = {clf.best_score_['validation']['Logloss']:.10g}" in out
    assert f"bestIteration = {clf.best_iteration_}" in out
    clf.fit(X, y, eval_set=(eX, ey))  # quiet by default
    assert capsys.readouterr().out == ""
    cbgpu.CatBoostClassifier(iterations=3, verbose=True, **QUICK).fit(X, y, eval_set=(eX, ey), verbose=None)
    assert [int(LINE.match(s).group(1)) for s in capsys.readouterr().out.splitlines() if LINE.match(s)] == [0, 1, 2]
    cbgpu.CatBoostClassifier(iterations=3, verbose=True, **QUICK).fit(X, y, verbose=False)
    assert capsys.readouterr().out == ""


def test_get_all_params_has_catboosts_plain_names_and_values():
    X, y, _, _ = data()
    given = dict(iterations=9, learning_rate=0.25, depth=3, l2_leaf_reg=2.0, random_seed=5, border_count=32,
                 bootstrap_type="Bernoulli", subsample=0.7, loss_function="Logloss", custom_metric=["AUC"],
                 od_type="Iter", od_wait=7, random_strength=0.5, leaf_estimation_iterations=2)
    ours = cbgpu.CatBoostClassifier(**given).fit(X, y).get_all_params()
    theirs = catboost.CatBoostClassifier(**given, verbose=0, thread_count=1, allow_writing_files=False)
    theirs = theirs.fit(X, y).get_all_params()
    for key, value in given.items():  # catboost keeps some numbers as float32 (subsample 0.699999988)
        expected = pytest.approx(value, rel=1e-7) if isinstance(value, float) else value
        assert ours[key] == expected and theirs[key] == expected, key
    for key in ("eval_metric", "nan_mode", "feature_border_type", "grow_policy", "boosting_type",
                "leaf_estimation_method", "leaf_estimation_backtracking", "score_function", "model_size_reg"):
        assert key in ours and key in theirs, key
    assert ours["eval_metric"] == theirs["eval_metric"] == "Logloss"


def test_catboost_reads_the_parameters_of_our_models(tmp_path):
    X, y, eX, ey = data()
    ours = cbgpu.CatBoostClassifier(iterations=5, depth=3, l2_leaf_reg=2, learning_rate=0.25, custom_metric=["AUC"])
    ours.fit(X, y, eval_set=(eX, ey), use_best_model=False)
    ours.save_model(str(tmp_path / "ours.cbm"))
    theirs = catboost.CatBoostClassifier()
    theirs.load_model(str(tmp_path / "ours.cbm"))
    params = theirs.get_all_params()
    assert (params["iterations"], params["depth"], params["l2_leaf_reg"]) == (5, 3, 2)
    assert params["learning_rate"] == pytest.approx(0.25) and params["custom_metric"] == ["AUC"]
    assert params["use_best_model"] is False  # the output options, read from their own key
    for key in ("iterations", "depth", "l2_leaf_reg", "learning_rate", "custom_metric", "loss_function"):
        assert ours.get_all_params()[key] == pytest.approx(params[key]) if isinstance(params[key], float) \
            else ours.get_all_params()[key] == params[key], key


needs_importances = pytest.mark.skipif(not hasattr(cbgpu.Model, "get_feature_importance"),
                                       reason="this build's Model has no get_feature_importance yet")


@needs_importances
def test_feature_importances_equal_catboosts(tmp_path):
    X, y, eX, ey = data(2)
    theirs = catboost.CatBoostClassifier(iterations=20, depth=4, verbose=0, thread_count=1,
                                         allow_writing_files=False, random_seed=0).fit(X, y)
    theirs.save_model(str(tmp_path / "m.cbm"))
    ours = cbgpu.CatBoostClassifier().load_model(str(tmp_path / "m.cbm"))
    np.testing.assert_allclose(ours.feature_importances_, theirs.feature_importances_, rtol=0, atol=1e-9)
    np.testing.assert_allclose(ours.get_feature_importance(), theirs.get_feature_importance(), rtol=0, atol=1e-9)
    pool = catboost.Pool(eX, ey)
    for kind in ("LossFunctionChange", "ShapValues"):
        np.testing.assert_allclose(ours.get_feature_importance(pool, type=kind),
                                   theirs.get_feature_importance(pool, type=kind), rtol=0, atol=1e-9)
    np.testing.assert_allclose(ours.get_feature_importance((eX, ey), type="ShapValues"),
                               theirs.get_feature_importance(pool, type="ShapValues"), rtol=0, atol=1e-9)
    pretty = ours.get_feature_importance(prettified=True)
    assert list(pretty.columns) == ["Feature Id", "Importances"] and len(pretty) == X.shape[1]


def test_feature_importances_say_clearly_when_the_library_has_none(monkeypatch):
    X, y, _, _ = data()
    clf = cbgpu.CatBoostClassifier(iterations=3).fit(X, y)
    monkeypatch.delattr(cbgpu.Model, "get_feature_importance", raising=False)
    with pytest.raises(NotImplementedError, match="feature importances need"):
        clf.feature_importances_
