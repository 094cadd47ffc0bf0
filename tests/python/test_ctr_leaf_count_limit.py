# SPDX-License-Identifier: Apache-2.0
"""ctr_leaf_count_limit and store_all_simple_ctr (CatBoost's CPU-only bounds on the CTR tables) on a CPU
context, against the `catboost` package's CPU trainer.

Both trainers get the same data and parameters. The CTR tables hold full learn statistics, so a table that
both models keep does not depend on the (different) permutations, except through CatBoost's choice at ties
and of the kept value the others' rows join: that follows its hash table's order and its nth_element (the
least frequent kept value with up to 7 values, not always beyond). Ours is a fixed rule (at equal counts the
value seen first is kept; the others join the least frequent kept value). Each model's tables are checked
against the rule computed here (the `limit` most frequent values keep their entries, the others' rows count
in one kept value), and the tables are equal to CatBoost's (reading the rows in order, has_time, and with its
permutation) wherever neither a tie nor its choice of that value decides. CatBoost loads our models and
predicts what we predict (a dropped value is an unseen one), and the held-out quality stays within 1 % of
CatBoost's.
"""
from __future__ import annotations

import json

import numpy as np
import pytest

catboost = pytest.importorskip("catboost")
pd = pytest.importorskip("pandas")
import catboost.utils  # noqa: E402

import cbgpu  # noqa: E402

MAGIC = 0x4906BA494954CB65
MASK = (1 << 64) - 1
EMPTY = str(MASK)
# Each categorical column's value frequencies over the N learn rows: distinct counts, so that the values a
# single feature's table keeps are CatBoost's unambiguously.
N = 1000
COUNTS = [np.array([300, 240, 180, 140, 90, 50]),  # 6 values: CatBoost's outcome is fully determined
          np.concatenate([[220], np.arange(39, 0, -1)]),  # 40 values
          np.array([500, 300, 200])]


def data(seed: int, rows: int = N):
    """Learn data with the frequencies above (rows == N), or data drawn in their proportions."""
    rng = np.random.RandomState(seed)
    effects = np.random.RandomState(77)
    cats = []
    for counts in COUNTS:
        col = (np.repeat(np.arange(len(counts)), counts) if rows == N
               else rng.choice(len(counts), size=rows, p=counts / counts.sum()))
        cats.append(rng.permutation(col).astype(np.int64) * 5 + 11)
    x = rng.normal(size=rows).astype(np.float32)
    signal = 0.7 * x
    for c, counts in zip(cats, COUNTS):
        signal = signal + effects.normal(0, 1.0, len(counts) * 5 + 11)[c]
    y = (signal + 0.5 * rng.normal(size=rows) > 0.3).astype(np.float64)
    return x, cats, y


def our_pool(ctx, x, cats, y=None):
    cols = [np.ascontiguousarray(x)] + [np.ascontiguousarray(c) for c in cats]
    return cbgpu.Pool(ctx, columns=cols, label=None if y is None else y, cat_features=[1, 2, 3])


def frame(x, cats):
    df = pd.DataFrame({"x": x})
    for k, c in enumerate(cats):
        df[f"c{k}"] = c
    return df


def tables(model_json: dict) -> dict:
    """Each CTR table of categorical features alone: (features, type) -> ({key: counts}, denominator)."""
    out = {}
    for ident, t in model_json.get("ctr_data", {}).items():
        desc = json.loads(ident)
        parts = desc["identifier"]
        if any(p["combination_element"] != "cat_feature_value" for p in parts):
            continue
        feats = tuple(p["cat_feature_index"] for p in parts)
        hm, s = t["hash_map"], t["hash_stride"]
        entries = {hm[i]: tuple(hm[i + 1:i + s]) for i in range(0, len(hm), s) if hm[i] != EMPTY}
        out[(feats, desc["type"])] = (entries, t.get("counter_denominator", 0))
    return out


def row_keys(cats, feats):
    """Every learn row's projection key (CatBoost's CalcHash over the categorical hashes)."""
    hashes = []
    for f in feats:
        h = {v: cbgpu.cat_hash(int(v)) for v in np.unique(cats[f])}
        hashes.append([h[v] for v in cats[f]])
    keys = []
    for r in range(len(cats[0])):
        k = 0
        for hs in hashes:
            w = hs[r] - (1 << 32) if hs[r] >= 1 << 31 else hs[r]
            k = (MAGIC * (k + MAGIC * (w & MASK))) & MASK
        keys.append(str(k))
    return keys


def check_rule(entries: dict, keys, y, typ: str, limit, ours: bool = False):
    """The table follows CatBoost's rule: the `limit` most frequent keys (all when None or no more), their
    rows' counts, the others' rows in one kept entry (ours: the least frequent kept one). Returns (the key
    the others joined or None, whether ties make CatBoost's choice of the kept keys or of that key depend on
    its hash-table order)."""
    per = {}
    for k, t in zip(keys, y):
        per.setdefault(k, [0, 0])[int(t)] += 1
    expected = {k: (sum(c),) if typ == "Counter" else tuple(c) for k, c in per.items()}
    if limit is None or len(per) <= limit:
        assert entries == expected
        return None, False
    total = {k: sum(c) for k, c in per.items()}
    ranked = sorted(total.values(), reverse=True)
    boundary = ranked[limit - 1]
    assert len(entries) == limit
    assert {k for k in per if total[k] > boundary} <= set(entries) <= {k for k in per if total[k] >= boundary}
    differ = [k for k in entries if entries[k] != expected[k]]
    assert len(differ) == 1, differ
    joined = differ[0]
    rest = np.sum([per[k] for k in per if k not in entries], axis=0)
    want = (total[joined] + int(rest.sum()),) if typ == "Counter" else tuple(int(v) for v in np.add(per[joined], rest))
    assert entries[joined] == want
    if ours:
        assert total[joined] == min(total[k] for k in entries)
    return joined, boundary in (ranked[limit - 2], ranked[limit])


def fit_both(params, x, cats, y, tmp_path):
    ctx = cbgpu.Context(cbgpu.CBG_DEVICE_CPU)
    ours = cbgpu.train(our_pool(ctx, x, cats, y), {**params, "verbose": False})
    path = tmp_path / "ours.cbm"
    ours.save(str(path))
    loaded = catboost.CatBoost()
    loaded.load_model(str(path))
    loaded.save_model(str(tmp_path / "ours.json"), format="json")
    theirs = catboost.CatBoost({**params, "verbose": 0, "thread_count": 1, "allow_writing_files": False})
    theirs.fit(catboost.Pool(frame(x, cats), y, cat_features=[1, 2, 3]))
    theirs.save_model(str(tmp_path / "theirs.json"), format="json")
    in_order = catboost.CatBoost({**params, "verbose": 0, "thread_count": 1, "allow_writing_files": False,
                                  "has_time": True})
    in_order.fit(catboost.Pool(frame(x, cats), y, cat_features=[1, 2, 3]))
    in_order.save_model(str(tmp_path / "in_order.json"), format="json")
    return (ctx, ours, loaded, theirs, *(json.loads((tmp_path / f"{name}.json").read_text())
                                         for name in ("ours", "theirs", "in_order")))


@pytest.mark.parametrize("store_all,complexity,limit", [(False, 1, 4), (False, 1, 12), (True, 2, 4), (False, 2, 12)])
def test_tables_follow_catboost_cpu(tmp_path, store_all, complexity, limit):
    x, cats, y = data(1)
    params = {"iterations": 40, "depth": 4, "learning_rate": 0.15, "loss_function": "Logloss",
              "boosting_type": "Plain", "one_hot_max_size": 1, "simple_ctr": ["Borders", "Counter"],
              "combinations_ctr": ["Borders", "Counter"], "max_ctr_complexity": complexity,
              "ctr_leaf_count_limit": limit, "store_all_simple_ctr": store_all}
    ctx, ours, loaded, theirs, ours_json, theirs_json, in_order_json = fit_both(params, x, cats, y, tmp_path)
    mine, other, ordered = tables(ours_json), tables(theirs_json), tables(in_order_json)
    assert mine and other and ordered
    joins = {}
    for name, model_tables in (("ours", mine), ("catboost", other), ("catboost has_time", ordered)):
        for (feats, typ), (entries, _) in model_tables.items():
            single = len(feats) == 1
            lim = None if single and store_all else limit
            joins.setdefault((feats, typ), {})[name] = check_rule(entries, row_keys(cats, feats), y, typ, lim,
                                                                  ours=name == "ours")
            if single and store_all:
                assert len(entries) == len(np.unique(cats[feats[0]]))
            else:
                assert len(entries) <= limit
    compared = 0
    for name, theirs_tables in (("catboost", other), ("catboost has_time", ordered)):
        common = set(mine) & set(theirs_tables)
        assert common, f"no table in both models ({name})"
        for t in common:
            (ours_joined, tied), (their_joined, _) = joins[t]["ours"], joins[t][name]
            if tied:
                continue  # CatBoost's hash-table order decides
            if ours_joined != their_joined:
                # CatBoost's nth_element leaves the least frequent kept value last only up to 7 values.
                assert len(set(row_keys(cats, t[0]))) > 7, (name, t)
                continue
            assert mine[t] == theirs_tables[t], (name, t)
            compared += 1
    assert compared > 0
    # CatBoost predicts our model as we do (values dropped from a table are unseen ones).
    tx, tcats, ty = data(2, 2000)
    our_raw = ours.predict(our_pool(ctx, tx, tcats))[:, 0]
    their_pool = catboost.Pool(frame(tx, tcats), cat_features=[1, 2, 3])
    np.testing.assert_allclose(loaded.predict(their_pool, prediction_type="RawFormulaVal"), our_raw,
                               rtol=1e-12, atol=1e-12)
    # Quality over three seeds each (the ordered CTRs depend on the permutation, ours is not CatBoost's).
    ours_m = np.mean([catboost.utils.eval_metric(ty, m.predict(our_pool(ctx, tx, tcats))[:, 0], "Logloss")[0]
                      for m in [ours] + [cbgpu.train(our_pool(ctx, x, cats, y),
                                                     {**params, "verbose": False, "random_seed": s})
                                         for s in (1, 2)]])
    theirs_m = np.mean([catboost.utils.eval_metric(ty, m.predict(their_pool, prediction_type="RawFormulaVal"),
                                                   "Logloss")[0]
                        for m in [theirs] + [catboost.CatBoost({**params, "verbose": 0, "thread_count": 1,
                                                                "allow_writing_files": False, "random_seed": s})
                                             .fit(catboost.Pool(frame(x, cats), y, cat_features=[1, 2, 3]))
                                             for s in (1, 2)]])
    print(f"store_all={store_all} complexity={complexity} limit={limit}: ours {ours_m:.5f} catboost {theirs_m:.5f}")
    assert ours_m <= theirs_m * 1.01


def test_six_values_equal_catboost_exactly(tmp_path):
    """Under 8 distinct values with distinct counts CatBoost's choice does not depend on its row order: the
    tables are equal to the permuting trainer's too."""
    x, cats, y = data(3)
    params = {"iterations": 20, "depth": 3, "loss_function": "Logloss", "one_hot_max_size": 1,
              "simple_ctr": ["Borders", "Counter"], "max_ctr_complexity": 1, "ctr_leaf_count_limit": 3}
    _, _, _, _, ours_json, theirs_json, _ = fit_both(params, x, [cats[0], cats[0] * 3 + 1, cats[2]], y, tmp_path)
    mine, other = tables(ours_json), tables(theirs_json)
    common = set(mine) & set(other)
    assert any(len(mine[t][0]) == 3 for t in common)
    for t in common:
        assert mine[t] == other[t], t


def test_default_limit_is_unbounded_and_gpu_refusal_named():
    x, cats, y = data(4)
    ctx = cbgpu.Context(cbgpu.CBG_DEVICE_CPU)
    base = {"iterations": 5, "loss_function": "Logloss", "max_ctr_complexity": 1, "verbose": False,
            "random_seed": 3}
    a = cbgpu.train(our_pool(ctx, x, cats, y), base)
    b = cbgpu.train(our_pool(ctx, x, cats, y), {**base, "ctr_leaf_count_limit": 18446744073709551615,
                                                 "store_all_simple_ctr": False})
    strip = lambda m: {k: v for k, v in json.loads(m.to_bytes("json")).items() if k != "model_info"}
    assert strip(a) == strip(b)
    with pytest.raises(cbgpu.CbgError) as e:
        cbgpu.train(our_pool(ctx, x, cats, y), {**base, "ctr_leaf_count_limit": 0})
    assert "ctr_leaf_count_limit" in str(e.value)
