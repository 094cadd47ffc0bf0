# SPDX-License-Identifier: Apache-2.0
"""The estimators in scikit-learn's workflows: parameters through clone/get_params/set_params, Pipeline,
cross_val_score, GridSearchCV and joblib fits in other processes, score, tags; copies and pickles that
carry the model as bytes; wrong feature counts refused by name from every entry point; scikit-learn
optional."""
import copy
import gc
import os
import pickle
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import cbgpu

sklearn = pytest.importorskip("sklearn")
from sklearn.base import clone, is_classifier, is_regressor  # noqa: E402
from sklearn.exceptions import NotFittedError  # noqa: E402
from sklearn.model_selection import GridSearchCV, cross_val_score  # noqa: E402
from sklearn.pipeline import Pipeline  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402
from sklearn.utils.validation import check_is_fitted  # noqa: E402

SMALL = dict(iterations=12, depth=3, learning_rate=0.3)


def data(n=300, features=5, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, features)).astype(np.float32)
    y = X[:, 0] + 0.5 * X[:, 1] + 0.3 * rng.standard_normal(n)
    return X, y.astype(np.float64), (y > 0).astype(np.int64)


def test_parameters_survive_clone_get_and_set_params():
    est = cbgpu.CatBoostClassifier(**SMALL, random_seed=7, device=cbgpu.CBG_DEVICE_CPU, custom_metric=["AUC"],
                                   grow_policy="SymmetricTree", mvs_reg=None)
    params = est.get_params()
    assert params["random_seed"] == 7 and params["device"] == cbgpu.CBG_DEVICE_CPU
    assert params["grow_policy"] == "SymmetricTree" and "mvs_reg" in params  # **kwargs are parameters too
    copy_ = clone(est)
    assert copy_.get_params() == params and copy_ is not est
    copy_.set_params(depth=4, border_count=32, random_seed=9, mvs_reg=0.5, sampling_unit="Object")
    assert copy_.depth == 4 and copy_.get_params()["border_count"] == 32 and copy_.random_seed == 9
    assert copy_.get_params()["mvs_reg"] == 0.5 and copy_.get_params()["sampling_unit"] == "Object"
    assert est.depth == 3 and est.get_params()["border_count"] is None  # the original is untouched
    assert est.get_params()["mvs_reg"] is None and "sampling_unit" not in est.get_params()
    assert "random_seed=7" in repr(est) and "grow_policy='SymmetricTree'" in repr(est)


def test_settings_reach_the_trainer_and_fitted_clones_start_unfitted():
    X, _, y = data()
    est = cbgpu.CatBoostClassifier(**SMALL, random_seed=11, l2_leaf_reg=5, border_count=16)
    with pytest.raises(NotFittedError):
        check_is_fitted(est)
    est.fit(X, y)
    check_is_fitted(est)
    params = est.get_all_params()
    assert (params["random_seed"], params["l2_leaf_reg"], params["border_count"], params["depth"]) == (11, 5, 16, 3)
    fresh = clone(est)
    with pytest.raises(NotFittedError):
        check_is_fitted(fresh)
    np.testing.assert_array_equal(fresh.fit(X, y).predict_proba(X), est.predict_proba(X))  # same seed, same model


def test_score_tags_and_pipeline():
    X, yr, yc = data()
    reg = cbgpu.CatBoostRegressor(**SMALL)
    assert is_regressor(reg) and is_classifier(cbgpu.CatBoostClassifier())
    pipe = Pipeline([("scale", StandardScaler()), ("model", reg)]).fit(X, yr)
    pred = pipe.predict(X)
    r2 = 1 - np.sum((yr - pred) ** 2) / np.sum((yr - yr.mean()) ** 2)
    assert pipe.score(X, yr) == pytest.approx(r2) and r2 > 0.5
    clf = cbgpu.CatBoostClassifier(**SMALL).fit(X, yc)
    assert clf.score(X, yc) == pytest.approx(np.mean(clf.predict(X) == yc))
    assert clf.n_features_in_ == 5
    if hasattr(clf, "__sklearn_tags__") and sklearn.__version__ >= "1.6":
        assert clf.__sklearn_tags__().input_tags.allow_nan
    assert clf._more_tags()["allow_nan"]


def test_cross_val_score_and_grid_search_in_parallel_processes():
    X, _, y = data(400)
    scores = cross_val_score(cbgpu.CatBoostClassifier(**SMALL), X, y, cv=3)
    assert scores.shape == (3,) and scores.min() > 0.7
    grid = GridSearchCV(cbgpu.CatBoostClassifier(**SMALL), {"depth": [2, 4], "l2_leaf_reg": [1, 10]}, cv=2,
                        n_jobs=2).fit(X, y)  # joblib's worker processes: the estimators are pickled
    assert grid.best_params_["depth"] in (2, 4)
    assert grid.best_estimator_.get_params()["depth"] == grid.best_params_["depth"]
    assert grid.best_estimator_.score(X, y) > 0.7


def test_joblib_parallel_fits_equal_sequential_ones():
    joblib = pytest.importorskip("joblib")
    X, yr, _ = data()

    def fit(seed):
        return cbgpu.CatBoostRegressor(**SMALL, random_seed=seed).fit(X, yr)

    parallel = joblib.Parallel(n_jobs=2)(joblib.delayed(fit)(seed) for seed in (1, 2))
    for seed, model in zip((1, 2), parallel):
        np.testing.assert_array_equal(model.predict(X), fit(seed).predict(X))


def test_pickle_round_trip_predicts_identically_in_a_new_process(tmp_path):
    X, _, y = data()
    clf = cbgpu.CatBoostClassifier(**SMALL, random_seed=3).fit(X, np.array(["no", "yes"])[y])
    (tmp_path / "model.pkl").write_bytes(pickle.dumps(clf))
    np.save(tmp_path / "X.npy", X)
    script = ("import pickle, numpy as np; m = pickle.load(open('model.pkl', 'rb')); X = np.load('X.npy'); "
              "np.save('proba.npy', m.predict_proba(X)); np.save('labels.npy', m.predict(X).astype(str)); "
              "print(m.tree_count_, m.best_iteration_, m.get_params()['random_seed'])")
    env = dict(os.environ, PYTHONPATH=str(Path(cbgpu.__file__).resolve().parents[1]))
    done = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [str(clf.tree_count_), "None", "3"]
    np.testing.assert_array_equal(np.load(tmp_path / "proba.npy"), clf.predict_proba(X))
    np.testing.assert_array_equal(np.load(tmp_path / "labels.npy"), clf.predict(X))


def test_copies_never_share_the_model_handle():
    X, yr, _ = data()
    reg = cbgpu.CatBoostRegressor(**SMALL).fit(X, yr)
    expected = reg.predict(X)
    shallow, deep = copy.copy(reg), copy.deepcopy(reg)
    handles = {reg.model_.handle, shallow.model_.handle, deep.model_.handle}
    assert len(handles) == 3
    np.testing.assert_array_equal(shallow.predict(X), expected)
    np.testing.assert_array_equal(deep.predict(X), expected)
    shallow.model_.close()
    del shallow, deep
    gc.collect()
    np.testing.assert_array_equal(reg.predict(X), expected)  # deleting the copies left the original alone
    model_copy = copy.deepcopy(reg.model_)
    assert model_copy.handle != reg.model_.handle
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(reg.model_)).predict(X), reg.model_.predict(X))
    unfitted = copy.deepcopy(cbgpu.CatBoostRegressor(depth=2))
    assert unfitted.get_params()["depth"] == 2 and not unfitted.is_fitted()


def test_a_wrong_number_of_features_is_refused_by_name_everywhere(ctx):
    X, _, y = data()
    clf = cbgpu.CatBoostClassifier(**SMALL).fit(X, y)
    narrow = X[:, :4]
    message = "X has 4 features, but the model was trained on 5 features"
    for call in (clf.predict, clf.predict_proba, clf.calc_leaf_indexes, lambda a: next(clf.staged_predict(a)),
                 lambda a: clf.score(a, y)):
        with pytest.raises(ValueError, match=message):
            call(narrow)
    with pytest.raises(ValueError, match="X has 6 features, but the model was trained on 5 features"):
        clf.predict(np.hstack([X, X[:, :1]]))
    with pytest.raises(ValueError, match="eval_set has 4 features, but X has 5"):
        cbgpu.CatBoostClassifier(**SMALL).fit(X, y, eval_set=(narrow, y))
    model = clf.model_
    for bad in (narrow, narrow.ravel(), X.ravel()):
        with pytest.raises(ValueError, match="but the model has 5 float features"):
            model.predict(bad)
    with pytest.raises(ValueError, match="the data has 4 columns, but the model has 5 float features"):
        model.leaf_indexes(narrow)
    np.testing.assert_array_equal(model.predict(X[0]), model.predict(X[:1]))  # one row as a 1-D array


def test_a_wrong_number_of_features_on_the_gpu(to_device):
    X, _, y = data()
    clf = cbgpu.CatBoostClassifier(**SMALL).fit(X, y)
    with pytest.raises(ValueError, match="the data has 4 features, but the model has 5 features"):
        clf.model_.predict(to_device(X[:, :4]))
    with pytest.raises(ValueError, match="X has 4 features, but the model was trained on 5 features"):
        clf.predict(to_device(X[:, :4]))


def test_without_scikit_learn_the_estimators_keep_their_interface(tmp_path):
    script = """
import sys
sys.modules['sklearn'] = None  # as if not installed
import numpy as np, cbgpu, cbgpu._sklearn_base as base
assert not base.HAVE_SKLEARN
rng = np.random.default_rng(0)
X = rng.standard_normal((200, 3)).astype(np.float32); y = (X[:, 0] > 0).astype(int)
clf = cbgpu.CatBoostClassifier(iterations=5, depth=2, grow_policy='SymmetricTree')
assert clf.get_params()['grow_policy'] == 'SymmetricTree' and clf.get_params()['depth'] == 2
clf.set_params(depth=3, border_count=16)
assert clf.depth == 3 and clf.get_params()['border_count'] == 16
assert clf.fit(X, y).score(X, y) > 0.8
reg = cbgpu.CatBoostRegressor(iterations=5).fit(X, X[:, 0])
assert 0 < reg.score(X, X[:, 0]) <= 1
print('ok')
"""
    env = dict(os.environ, PYTHONPATH=str(Path(cbgpu.__file__).resolve().parents[1]))
    done = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"


def test_task_type_gpu_trains_host_data_on_a_gpu():
    X, yr, _ = data()
    cpu = cbgpu.CatBoostRegressor(**SMALL, task_type="CPU").fit(X, yr)
    assert cpu.tree_count_ == SMALL["iterations"]
    if cbgpu.device_count() == 0:
        with pytest.raises(cbgpu.CbgError):  # as CatBoost: no GPU to train on
            cbgpu.CatBoostRegressor(**SMALL, task_type="GPU").fit(X, yr)
        return
    by_task_type = cbgpu.CatBoostRegressor(**SMALL, task_type="GPU", devices="0").fit(X, yr)
    by_device = cbgpu.CatBoostRegressor(**SMALL, device=0).fit(X, yr)
    np.testing.assert_array_equal(by_task_type.predict(X), by_device.predict(X))
