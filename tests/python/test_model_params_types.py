# SPDX-License-Identifier: Apache-2.0
"""Models store their parameters as CatBoost does: numbers and booleans as JSON numbers and booleans
(also when they were given as text, as command lines give them), so the catboost package loads our
.cbm and JSON files without a warning and its get_all_params() returns the values we trained with."""
from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

catboost = pytest.importorskip("catboost")

import cbgpu  # noqa: E402

GIVEN_AS_TEXT = {"loss_function": "Logloss", "iterations": "12", "depth": "5", "learning_rate": "0.25",
                 "l2_leaf_reg": "4.5", "random_strength": "0", "bootstrap_type": "Bernoulli", "subsample": "0.7",
                 "border_count": "64", "random_seed": "7", "use_best_model": "false", "boost_from_average": "true",
                 "metric_period": "3", "od_type": "Iter", "od_wait": "5", "one_hot_max_size": "3",
                 "max_ctr_complexity": "1", "allow_writing_files": "false", "verbose": "false", "thread_count": "2"}
EXPECTED = {"iterations": 12, "depth": 5, "learning_rate": 0.25, "l2_leaf_reg": 4.5, "random_strength": 0.0,
            "bootstrap_type": "Bernoulli", "subsample": 0.7, "border_count": 64, "random_seed": 7,
            "use_best_model": False, "boost_from_average": True, "metric_period": 3, "od_type": "Iter",
            "od_wait": 5, "one_hot_max_size": 3, "max_ctr_complexity": 1, "allow_writing_files": False,
            "thread_count": 2}


def train_model():
    rng = np.random.RandomState(0)
    X = rng.randn(300, 4).astype(np.float32)
    y = (X[:, 0] + 0.5 * rng.randn(300) > 0).astype(np.float64)
    with cbgpu.Context(cbgpu.CBG_DEVICE_CPU) as ctx:
        return cbgpu.train(cbgpu.Pool(ctx, X, label=y), GIVEN_AS_TEXT), X


def test_flat_params_have_catboosts_types():
    model, _ = train_model()
    flat = json.loads(model.info_value("params"))["flat_params"]
    for key, value in EXPECTED.items():
        assert flat[key] == value and type(flat[key]) is type(value), (key, flat[key])
    assert flat["verbose"] is False


@pytest.mark.parametrize("fmt", ["cbm", "json"])
def test_catboost_loads_without_warning_and_reads_the_params(fmt, tmp_path, capfd):
    model, X = train_model()
    path = tmp_path / f"model.{fmt}"
    model.save(path, format=fmt)
    capfd.readouterr()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cb = catboost.CatBoost()
        cb.load_model(str(path), format=fmt)
        params = cb.get_all_params()
        cb.get_params()
    out, err = capfd.readouterr()
    assert "warning" not in (out + err).lower(), out + err
    for key, value in EXPECTED.items():
        if key in params:
            assert params[key] == pytest.approx(value), key
    assert params["depth"] == 5 and params["iterations"] == 12 and params["learning_rate"] == pytest.approx(0.25)
    # (CatBoost's JSON reader rounds the last bit of some leaf values.)
    np.testing.assert_allclose(cb.predict(X, prediction_type="RawFormulaVal"), model.predict(X)[:, 0], rtol=1e-14)
