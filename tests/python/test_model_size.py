# SPDX-License-Identifier: Apache-2.0
"""Model size with categorical features against the `catboost` package (CPU), host path.

CatBoost keeps a model small with model_size_reg (default 0.5): the split scores of CTRs not yet in
the model are multiplied by (1 + u / u_max)^-model_size_reg. On adult-shaped generated data (eight
categorical features of 2 to 42 values, one of 300, four numeric) trained with the same parameters,
our model holds at most 1.5x CatBoost's CTR tables and bytes, CatBoost loads it and predicts what our
evaluator predicts, and model_size_reg 0 (no penalty) gives a model more than 1.5x larger.
"""
from __future__ import annotations

import json

import numpy as np
import pytest

catboost = pytest.importorskip("catboost")
pd = pytest.importorskip("pandas")

import cbgpu  # noqa: E402

CARDS = [9, 16, 7, 15, 6, 5, 2, 42, 300]
PARAMS = {"iterations": 200, "depth": 6, "learning_rate": 0.1, "loss_function": "Logloss", "boosting_type": "Plain",
          "simple_ctr": ["Borders", "Counter"], "combinations_ctr": ["Borders", "Counter"], "max_ctr_complexity": 2,
          "random_seed": 0}


def adult_like(n: int, seed: int):
    rng = np.random.RandomState(seed)
    fixed = np.random.RandomState(123)  # the same effects for every sample
    signal = np.zeros(n)
    cats = []
    for k, c in enumerate(CARDS):
        p = 1.0 / np.arange(1, c + 1) ** 1.1
        col = rng.choice(c, size=n, p=p / p.sum())
        signal += fixed.normal(0, 0.5, c)[col]
        cats.append(col)
    signal += fixed.normal(0, 0.7, (CARDS[0], CARDS[1]))[cats[0], cats[1]]  # one interaction
    nums = [rng.normal(size=n).astype(np.float32) for _ in range(4)]
    signal += 0.3 * nums[0] - 0.2 * nums[2]
    y = (signal + rng.normal(0, 1, n) > np.median(signal)).astype(np.float64)
    return nums, [(c * 7 + k).astype(np.int64) for k, c in enumerate(cats)], y


def frame(nums, cats):
    d = {f"n{j}": x for j, x in enumerate(nums)}
    d.update({f"c{k}": c for k, c in enumerate(cats)})
    return pd.DataFrame(d)


def tables(path) -> int:
    m = catboost.CatBoost()
    m.load_model(str(path))
    as_json = path.with_suffix(".json")
    m.save_model(str(as_json), format="json")
    return len(json.loads(as_json.read_text()).get("ctr_data", {}))


def ours(ctx, nums, cats, y, params):
    cols = [np.ascontiguousarray(x) for x in nums] + [np.ascontiguousarray(c) for c in cats]
    pool = cbgpu.Pool(ctx, columns=cols, label=y, cat_features=list(range(len(nums), len(nums) + len(cats))))
    return cbgpu.train(pool, {**params, "verbose": False})


def test_model_size_within_catboost_bound(tmp_path):
    nums, cats, y = adult_like(6000, 1)
    tnums, tcats, _ = adult_like(1000, 2)
    cat_idx = list(range(len(nums), len(nums) + len(cats)))
    ctx = cbgpu.Context(cbgpu.CBG_DEVICE_CPU)

    theirs = catboost.CatBoost({**PARAMS, "verbose": 0, "thread_count": 2, "allow_writing_files": False})
    theirs.fit(catboost.Pool(frame(nums, cats), y, cat_features=cat_idx))
    their_path = tmp_path / "theirs.cbm"
    theirs.save_model(str(their_path))

    our_path = tmp_path / "ours.cbm"
    model = ours(ctx, nums, cats, y, PARAMS)
    model.save(str(our_path))
    unbounded_path = tmp_path / "unbounded.cbm"
    ours(ctx, nums, cats, y, {**PARAMS, "model_size_reg": 0}).save(str(unbounded_path))

    n_theirs, n_ours, n_unbounded = tables(their_path), tables(our_path), tables(unbounded_path)
    b_theirs, b_ours, b_unbounded = (p.stat().st_size for p in (their_path, our_path, unbounded_path))
    print(f"CTR tables: catboost {n_theirs}, ours {n_ours} (model_size_reg 0: {n_unbounded}); bytes: catboost "
          f"{b_theirs}, ours {b_ours} (model_size_reg 0: {b_unbounded})")
    assert n_ours <= 1.5 * n_theirs
    assert b_ours <= 1.5 * b_theirs
    assert n_unbounded > n_ours and b_unbounded > 1.5 * b_ours  # the penalty is what bounds them

    # CatBoost loads the smaller model and predicts what our evaluator predicts.
    loaded = catboost.CatBoost()
    loaded.load_model(str(our_path))
    tcols = [np.ascontiguousarray(x) for x in tnums] + [np.ascontiguousarray(c) for c in tcats]
    test = cbgpu.Pool(ctx, columns=tcols, cat_features=cat_idx)
    again = loaded.predict(catboost.Pool(frame(tnums, tcats), cat_features=cat_idx), prediction_type="RawFormulaVal")
    np.testing.assert_allclose(again, model.predict(test)[:, 0], rtol=1e-9, atol=1e-12)
