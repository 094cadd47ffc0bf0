# SPDX-License-Identifier: Apache-2.0
"""The permutation of the ordered CTRs against the `catboost` package's CPU trainer: has_time (the rows in the
data's order), fold_permutation_block and permutation_count (several permutations: CatBoost's GPU scheme here;
CatBoost's CPU trainer uses its permutations otherwise, so the held-out quality is compared, not the models).

With has_time both trainers visit the learn rows in the data's order, so the ordered CTR columns depend on the data
alone: our models with different seeds but no score noise and no bootstrap are the same model, while without
has_time they differ. The CTR tables hold full learn statistics and equal CatBoost's, and the held-out quality
is within 1 % of CatBoost's with has_time too.
"""
from __future__ import annotations

import json

import numpy as np
import pytest

catboost = pytest.importorskip("catboost")
pd = pytest.importorskip("pandas")
import catboost.utils  # noqa: E402

import cbgpu  # noqa: E402
from helpers import expect_error  # noqa: E402
from test_train_ctr import PARAMS, adult_like, frames, our_pool  # noqa: E402

EMPTY = str((1 << 64) - 1)


def tables(model_json: dict) -> dict:
    """Each CTR table: (features, type) -> ({key: counts}, denominator)."""
    out = {}
    for ident, t in model_json.get("ctr_data", {}).items():
        desc = json.loads(ident)
        feats = tuple(p["cat_feature_index"] for p in desc["identifier"])
        hm, s = t["hash_map"], t["hash_stride"]
        entries = {hm[i]: tuple(hm[i + 1:i + s]) for i in range(0, len(hm), s) if hm[i] != EMPTY}
        out[(feats, desc["type"])] = (entries, t.get("counter_denominator", 0))
    return out


def catboost_json(model, tmp_path, name: str) -> dict:
    path = tmp_path / name
    model.save_model(str(path), format="json")
    return json.loads(path.read_text())


def fit_pair(data_seed: int, test_seed: int):
    """Ours and CatBoost CPU's models with has_time over three seeds each, and the test set for each."""
    a, h, c, y = adult_like(5000, "binary", data_seed)
    ta, th, tc, ty = adult_like(2000, "binary", test_seed)
    params = {**PARAMS, "loss_function": "Logloss", "has_time": True}
    cat_idx = list(range(2, 2 + len(c)))
    ctx = cbgpu.Context(cbgpu.CBG_DEVICE_CPU)
    learn = our_pool(ctx, a, h, c, y)
    ours = [cbgpu.train(learn, {**params, "verbose": False, "random_seed": s}) for s in range(3)]
    theirs = [catboost.CatBoost({**params, "task_type": "CPU", "verbose": 0, "thread_count": 1,
                                 "allow_writing_files": False, "random_seed": s})
              .fit(catboost.Pool(frames(a, h, c), y, cat_features=cat_idx)) for s in range(3)]
    return ours, theirs, our_pool(ctx, ta, th, tc), catboost.Pool(frames(ta, th, tc), cat_features=cat_idx), ty


def test_has_time_tables_and_quality_follow_catboost_cpu(tmp_path):
    ours_m, theirs_m = [], []
    for k, (data_seed, test_seed) in enumerate(((11, 12), (1, 2), (21, 22))):
        ours, theirs, test, test_pool, ty = fit_pair(data_seed, test_seed)
        # The tables: equal to CatBoost's wherever both models have one.
        path = tmp_path / f"ours{k}.cbm"
        ours[0].save(str(path))
        loaded = catboost.CatBoost()
        loaded.load_model(str(path))
        mine = tables(catboost_json(loaded, tmp_path, f"ours{k}.json"))
        other = tables(catboost_json(theirs[0], tmp_path, f"theirs{k}.json"))
        common = set(mine) & set(other)
        assert len(common) >= 2, (sorted(mine), sorted(other))
        for t in common:
            assert mine[t] == other[t], t
        ours_m += [catboost.utils.eval_metric(ty, m.predict(test)[:, 0], "Logloss")[0] for m in ours]
        theirs_m += [catboost.utils.eval_metric(ty, m.predict(test_pool, prediction_type="RawFormulaVal"),
                                                "Logloss")[0] for m in theirs]
    # Held-out quality over three data sets and three seeds each: with has_time one data set is one
    # permutation for every seed (bootstrap and score noise still draw from the seed), so the data sets
    # carry the permutation's variance (about 1 % either way on one of them).
    print(f"has_time: ours {np.mean(ours_m):.5f} catboost {np.mean(theirs_m):.5f}")
    assert np.mean(ours_m) <= np.mean(theirs_m) * 1.01


def test_has_time_ctr_columns_do_not_depend_on_the_seed():
    a, h, c, y = adult_like(3000, "binary", 13)
    ctx = cbgpu.Context(cbgpu.CBG_DEVICE_CPU)
    learn = our_pool(ctx, a, h, c, y)
    # No score noise and no bootstrap: the seed reaches the model only through the permutation.
    base = {**PARAMS, "iterations": 30, "loss_function": "Logloss", "random_strength": 0, "bootstrap_type": "No",
            "verbose": False}

    def trees(extra, seed):
        """The model without its params (which record the seed)."""
        m = json.loads(cbgpu.train(learn, {**base, **extra, "random_seed": seed}).to_bytes("json"))
        m.pop("model_info", None)
        return m

    assert trees({"has_time": True}, 1) == trees({"has_time": True}, 2)
    assert trees({}, 1) != trees({}, 2)
    # Below 50 000 rows the block size is 1 (CatBoost's rule): any fold_permutation_block is the default.
    assert trees({"fold_permutation_block": 16}, 1) == trees({}, 1)


@pytest.mark.parametrize("complexity", [1, 4])
def test_several_permutations_quality_follows_catboost_cpu(complexity):
    """Simple CTRs, and CatBoost's default of both: four permutations with feature combinations of up to four."""
    ours_m, theirs_m, one_m = [], [], []
    for data_seed, test_seed in ((11, 12), (1, 2), (21, 22)):
        a, h, c, y = adult_like(5000, "binary", data_seed)
        ta, th, tc, ty = adult_like(2000, "binary", test_seed)
        cat_idx = list(range(2, 2 + len(c)))
        ctx = cbgpu.Context(cbgpu.CBG_DEVICE_CPU)
        learn, test = our_pool(ctx, a, h, c, y), our_pool(ctx, ta, th, tc)
        params = {**PARAMS, "loss_function": "Logloss", "permutation_count": 4, "max_ctr_complexity": complexity}
        for s in range(2):
            ours = cbgpu.train(learn, {**params, "verbose": False, "random_seed": s})
            one = cbgpu.train(learn, {**params, "permutation_count": 1, "verbose": False, "random_seed": s})
            theirs = catboost.CatBoost({**params, "task_type": "CPU", "verbose": 0, "thread_count": 1,
                                        "allow_writing_files": False, "random_seed": s}).fit(
                catboost.Pool(frames(a, h, c), y, cat_features=cat_idx))
            ours_m.append(catboost.utils.eval_metric(ty, ours.predict(test)[:, 0], "Logloss")[0])
            one_m.append(catboost.utils.eval_metric(ty, one.predict(test)[:, 0], "Logloss")[0])
            theirs_m.append(catboost.utils.eval_metric(
                ty, theirs.predict(catboost.Pool(frames(ta, th, tc), cat_features=cat_idx),
                                   prediction_type="RawFormulaVal"), "Logloss")[0])
    print(f"permutation_count 4, max_ctr_complexity {complexity}: ours {np.mean(ours_m):.5f} "
          f"(one permutation {np.mean(one_m):.5f}) "
          f"catboost {np.mean(theirs_m):.5f}")
    assert np.mean(ours_m) <= np.mean(theirs_m) * 1.01


def test_permutation_options_errors():
    a, h, c, y = adult_like(300, "binary", 14)
    ctx = cbgpu.Context(cbgpu.CBG_DEVICE_CPU)
    learn = our_pool(ctx, a, h, c, y)
    # Several permutations with simple CTRs, with feature combinations; with has_time CatBoost uses one.
    cbgpu.train(learn, {"iterations": 2, "verbose": False, "permutation_count": 4, "max_ctr_complexity": 2})
    cbgpu.train(learn, {"iterations": 2, "verbose": False, "permutation_count": 4, "max_ctr_complexity": 1})
    cbgpu.train(learn, {"iterations": 2, "verbose": False, "permutation_count": 4, "has_time": True})
    # Only one-hot categorical features (no CTR, so no combination either): one permutation, as in CatBoost.
    one_hot = {"iterations": 5, "verbose": False, "one_hot_max_size": 255, "random_seed": 3}
    pool = our_pool(ctx, a, h, c, y)
    np.testing.assert_array_equal(cbgpu.train(learn, {**one_hot, "permutation_count": 4}).predict(pool),
                                  cbgpu.train(learn, one_hot).predict(pool))
    with expect_error(cbgpu.CBG_ERR_INVALID_ARGUMENT, "'fold_permutation_block'"):
        cbgpu.train(learn, {"iterations": 2, "verbose": False, "fold_permutation_block": -1})
    with expect_error(cbgpu.CBG_ERR_INVALID_ARGUMENT, "'has_time'"):
        cbgpu.train(learn, {"iterations": 2, "verbose": False, "has_time": "sometimes"})
