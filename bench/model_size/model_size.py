#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Model size with categorical features: cbgpu (host path) against CatBoost (CPU) on generated data.

    CBGPU_LIBRARY=build/ci/libcbgpu.so PYTHONPATH=python python3 bench/model_size/model_size.py adult 500 \
        '{"model_size_reg": 0.5}'

Data: "adult" (32561 rows, 6 numeric and 8 categorical features of 2 to 42 values, Zipf-like
frequencies, one interaction) or "amazon" (32769 rows, 9 categorical features of 67 to 7518 values).
Both trainers get the same parameters (depth 6, Logloss, CatBoost's defaults otherwise, plus the JSON
given); prints per model the CTR tables (CatBoost's JSON export of the .cbm), CTR features, table
keys, file size, and the held-out Logloss (10000 rows). SKIP_CB=1 trains cbgpu only.
TRAINERS picks the trainers (comma-separated, default "catboost-CPU,cbgpu-host"): catboost-CPU,
catboost-GPU, cbgpu-host, cbgpu-GPU (the GPU ones need a GPU and, for CatBoost, its CUDA build).
"""
from __future__ import annotations

import json
import os
import sys
import tempfile
import time

import catboost
import catboost.utils
import numpy as np
import pandas as pd

import cbgpu

CARDS = {"adult": ([9, 16, 7, 15, 6, 5, 2, 42], 6, 32561),
         "amazon": ([7518, 4243, 128, 177, 449, 343, 2358, 67, 343], 0, 32769)}


def make(kind: str, n: int, seed: int):
    cards, nnum, _ = CARDS[kind]
    rng, fixed = np.random.RandomState(seed), np.random.RandomState(123)
    cats, signal = [], np.zeros(n)
    for k, c in enumerate(cards):
        p = 1.0 / np.arange(1, c + 1) ** 1.1
        col = rng.choice(c, size=n, p=p / p.sum())
        signal += fixed.normal(0, 0.5, c)[col]
        cats.append(col.astype(np.int64) * 7 + k)
    signal += fixed.normal(0, 0.7, (cards[0], cards[1]))[(cats[0] // 7) % cards[0], ((cats[1] - 1) // 7) % cards[1]]
    nums = [rng.normal(size=n).astype(np.float32) for _ in range(nnum)]
    for j, x in enumerate(nums):
        signal += 0.3 * x * (j % 2 == 0)
    y = (signal + rng.normal(0, 1, n) > np.median(signal)).astype(np.float64)
    return nums, cats, y


def frame(nums, cats):
    d = {f"n{j}": x for j, x in enumerate(nums)}
    d.update({f"c{k}": c for k, c in enumerate(cats)})
    return pd.DataFrame(d)


def describe(path: str):
    m = catboost.CatBoost()
    m.load_model(path)
    with tempfile.NamedTemporaryFile(suffix=".json") as f:
        m.save_model(f.name, format="json")
        j = json.load(open(f.name))
    keys = [len(t["hash_map"]) // t.get("hash_stride", 1) for t in j.get("ctr_data", {}).values()]
    return len(keys), len(j["features_info"].get("ctrs", [])), sum(keys)


def main() -> None:
    kind = sys.argv[1] if len(sys.argv) > 1 else "adult"
    iterations = int(sys.argv[2]) if len(sys.argv) > 2 else 500
    extra = json.loads(sys.argv[3]) if len(sys.argv) > 3 else {}
    nums, cats, y = make(kind, CARDS[kind][2], 1)
    tnums, tcats, ty = make(kind, 10000, 2)
    cat_idx = list(range(len(nums), len(nums) + len(cats)))
    params = {"iterations": iterations, "depth": 6, "loss_function": "Logloss", "random_seed": 0, **extra}
    out = tempfile.mkdtemp()
    results = []
    trainers = os.environ.get("TRAINERS", "cbgpu-host" if os.environ.get("SKIP_CB") else "catboost-CPU,cbgpu-host")
    for trainer in trainers.split(","):
        t = time.time()
        path = os.path.join(out, trainer + ".cbm")
        if trainer.startswith("catboost-"):
            task = trainer.split("-")[1]
            cb = catboost.CatBoost({**params, "verbose": 0, "allow_writing_files": False, "task_type": task})
            cb.fit(catboost.Pool(frame(nums, cats), y, cat_features=cat_idx))
            cb.save_model(path)
            raw = cb.predict(catboost.Pool(frame(tnums, tcats), cat_features=cat_idx), prediction_type="RawFormulaVal")
        else:
            ctx = cbgpu.Context(cbgpu.CBG_DEVICE_CPU if trainer == "cbgpu-host" else 0)
            pool = cbgpu.Pool(ctx, columns=[np.ascontiguousarray(c) for c in nums + cats], label=y,
                              cat_features=cat_idx)
            model = cbgpu.train(pool, {**params, "verbose": False})
            model.save(path)
            host = cbgpu.Context(cbgpu.CBG_DEVICE_CPU)
            test = cbgpu.Pool(host, columns=[np.ascontiguousarray(c) for c in tnums + tcats], cat_features=cat_idx)
            raw = model.predict(test)[:, 0]
        results.append((trainer, path, raw, time.time() - t))
    for name, path, raw, seconds in results:
        tables, features, keys = describe(path)
        loss = catboost.utils.eval_metric(ty, raw, "Logloss")[0]
        print(f"{kind} {iterations} trees {extra} {name}: {tables} CTR tables, {features} CTR features, {keys} keys, "
              f"{os.path.getsize(path) / 1e6:.3f} MB, held-out Logloss {loss:.5f}, {seconds:.0f} s")


if __name__ == "__main__":
    main()
