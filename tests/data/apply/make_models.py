# SPDX-License-Identifier: Apache-2.0
"""Regenerates the CatBoost-made models of tests/data/apply and CatBoost's own predictions for them.

    python3 tests/data/apply/make_models.py     (needs the catboost and pandas packages)

Each <name>.cbm comes with <name>.npz: the test rows as flat columns (`floats` float32 and `cats`
int64, both [rows, n_flat]; `cat_idx` lists the categorical columns, whose values are integers that
CatBoost hashes as decimal text) and CatBoost's predictions `expected_<Type>` (Class as class
indexes, MultiProbability as the sigmoid of RawFormulaVal). The GPU machines have no catboost: the
device tests (tests/unit/apply, tests/python/test_predict_device.py) compare against these files.
"""
from __future__ import annotations

from pathlib import Path

import catboost
import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent

# name -> (params, label kind, prediction types, float features, categorical features (cardinality))
MODELS = {
    "logloss_ctr_onehot": (dict(loss_function="Logloss", depth=6, iterations=40, one_hot_max_size=4,
                                max_ctr_complexity=2, nan_mode="Min",
                                simple_ctr=["Borders", "Buckets", "Counter", "BinarizedTargetMeanValue"],
                                combinations_ctr=["Borders", "Counter"]),
                           "bin", ["RawFormulaVal", "Probability", "LogProbability", "Class"], 4, (3, 12, 40)),
    "multiclass_ctr": (dict(loss_function="MultiClass", depth=5, iterations=30, one_hot_max_size=3,
                            simple_ctr=["Borders", "Buckets", "Counter"], max_ctr_complexity=2),
                       "multi", ["RawFormulaVal", "Probability", "LogProbability", "Class", "MultiProbability"], 4,
                       (2, 15)),
    "rmse_depth10": (dict(loss_function="RMSE", depth=10, iterations=6, nan_mode="Max", border_count=254),
                              "reg", ["RawFormulaVal"], 6, ()),
    "rmse_uncertainty": (dict(loss_function="RMSEWithUncertainty", depth=4, iterations=20), "reg",
                         ["RawFormulaVal", "RMSEWithUncertainty"], 3, (9,)),
    "multilogloss": (dict(loss_function="MultiLogloss", depth=3, iterations=15), "multilabel",
                     ["RawFormulaVal", "Probability", "Class"], 4, ()),
    "poisson": (dict(loss_function="Poisson", depth=4, iterations=20), "count", ["RawFormulaVal", "Exponent"], 4, (6,)),
}


def make_frame(rng, n, n_float, cards, unseen):
    cols, order, signal = {}, [], np.zeros(n)
    for j in range(max(n_float, len(cards))):
        if j < n_float:
            x = rng.normal(size=n).astype(np.float32)
            signal += (j + 1) * 0.3 * np.nan_to_num(x)
            x[rng.random(n) < 0.1] = np.nan
            cols[f"f{j}"] = x
            order.append(f"f{j}")
        if j < len(cards):
            v = rng.integers(0, cards[j] + (3 if unseen else 0), n).astype(np.int64) * 7 - 5
            signal += np.where(v % 3 == 0, 1.0, -0.5)
            cols[f"c{j}"] = v
            order.append(f"c{j}")
    return pd.DataFrame({c: cols[c] for c in order}), signal


def labels(kind, signal, rng):
    if kind == "reg":
        return signal + rng.normal(size=len(signal)) * 0.3
    if kind == "bin":
        return (signal > np.median(signal)).astype(int)
    if kind == "multi":
        return np.digitize(signal, np.quantile(signal, [0.33, 0.66]))
    if kind == "count":
        return rng.poisson(np.exp(np.clip(signal, -3, 2) * 0.5))
    if kind == "multilabel":
        return np.stack([(signal > 0).astype(int), (signal + rng.normal(size=len(signal)) > 0.5).astype(int)], axis=1)
    raise AssertionError(kind)


def main():
    for seed, (name, (params, kind, types, n_float, cards)) in enumerate(sorted(MODELS.items())):
        rng = np.random.default_rng(seed + 100)
        df, signal = make_frame(rng, 2000, n_float, cards, unseen=False)
        cat_names = [c for c in df.columns if c.startswith("c")]
        model = catboost.CatBoost(dict(params, verbose=0, thread_count=2, random_seed=seed, allow_writing_files=False))
        model.fit(catboost.Pool(df, labels(kind, signal, rng), cat_features=cat_names))
        model.save_model(str(HERE / f"{name}.cbm"))
        test, _ = make_frame(np.random.default_rng(seed + 200), 200, n_float, cards, unseen=True)
        pool = catboost.Pool(test, cat_features=cat_names)
        cat_idx = np.array([i for i, c in enumerate(test.columns) if c in cat_names], dtype=np.int64)
        floats = np.zeros((len(test), test.shape[1]), dtype=np.float32)
        cats = np.zeros((len(test), test.shape[1]), dtype=np.int64)
        for i, c in enumerate(test.columns):
            if c in cat_names:
                cats[:, i] = test[c].to_numpy(np.int64)
            else:
                floats[:, i] = test[c].to_numpy(np.float32)
        out = dict(floats=floats, cats=cats, cat_idx=cat_idx)
        for t in types:
            if t == "Class":
                got = np.asarray(model.predict(pool, prediction_type="Class"))
                if got.ndim == 2 and got.shape[1] > 1:  # multi-label: 0/1 per dimension
                    out["expected_Class"] = got.astype(np.float64)
                else:
                    index = {str(c): i for i, c in enumerate(model.classes_)}
                    out["expected_Class"] = np.array([index[str(v)] for v in got.reshape(-1)], dtype=np.float64)
            elif t == "MultiProbability":
                raw = np.asarray(model.predict(pool, prediction_type="RawFormulaVal"))
                out["expected_MultiProbability"] = 1.0 / (1.0 + np.exp(-raw))
            else:
                out[f"expected_{t}"] = np.asarray(model.predict(pool, prediction_type=t), dtype=np.float64)
        np.savez_compressed(HERE / f"{name}.npz", **out)
        print(name, model.tree_count_, "trees", (HERE / f"{name}.cbm").stat().st_size, "bytes")


if __name__ == "__main__":
    main()
