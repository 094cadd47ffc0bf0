#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""PriorEstimation=BetaPrior against CatBoost's GPU trainer (the oracle; its CPU trainer refuses the option).

    CBGPU_LIBRARY=build/ci/libcbgpu.so PYTHONPATH=python python3 bench/categorical_ctr/beta_prior_oracle.py OUT.json

On generated data (2 numeric and 5 categorical features of 4 to 5000 values, Zipf-like frequencies,
category effects; has_time, so the rows keep their order in both trainers), trains with
simple_ctr Borders:PriorEstimation=BetaPrior and compares, per categorical feature:
  - the estimated prior (the model's prior_numerator / prior_denomerator of its Borders CTRs) of
    CatBoost GPU, cbgpu on the host (CPU context) and cbgpu on a GPU, and for Logloss a line-by-line
    Python transcription of CatBoost's estimator (prior_estimator.h) over the learn rows' counts;
  - the Borders tables (ctr_data) the models share: every key's class counts;
  - the borders of the CTR features the models share.
Then CatBoost GPU's answers to the refused cases (Buckets, combinations_ctr) and a MultiClass run
(three classes: CatBoost estimates nothing and keeps the description's priors).
TRAINERS (comma-separated, default "cbgpu-host,cbgpu-GPU,catboost-GPU"); "catboost-CPU" runs CatBoost's
CPU trainer instead (it refuses BetaPrior: the run then checks the script's shape and the refusal).

Found on an H200 with catboost 1.2.10 (2026-11-28): CatBoost's GPU trainer cannot train with BetaPrior at
all. Its process aborts with "catboost/cuda/ctrs/prior_estimator.cpp:57: Error: illegal point" (an
uncaught exception in a worker thread): train.cpp calls EstimatePriors (in SetDataDependentDefaultsForGpu)
before featuresManager.SetTargetBorders, so the estimator binarizes the target by no border, every row is
class 0 and the start alpha = 0 is refused. CatBoost runs here in a child process so the script goes on.
"""
from __future__ import annotations

import io
import json
import math
import os
import re
import sys
import time

import numpy as np

CARDS = [4, 30, 300, 1500, 5000]


def data(n: int, seed: int, kind: str):
    rng = np.random.RandomState(seed)
    effects = np.random.RandomState(77)
    x = [rng.normal(size=n).astype(np.float32), rng.uniform(0, 10, n).astype(np.float32)]
    signal = 0.6 * x[0] + 0.05 * (x[1] - 5)
    cats = []
    for card in CARDS:
        p = 1.0 / np.arange(1, card + 1) ** 1.05
        col = rng.choice(card, size=n, p=p / p.sum()).astype(np.int64) * 5 + 3
        signal = signal + effects.normal(0, 0.7, card)[(col - 3) // 5]
        cats.append(col)
    signal = signal + 0.7 * rng.normal(size=n)
    if kind == "binary":
        y = (signal > 0.3).astype(np.float64)
    elif kind == "multiclass":
        y = np.digitize(signal, [-0.5, 0.8]).astype(np.float64)
    else:
        y = signal.astype(np.float64)
    return x, cats, y


# ---- CatBoost's estimator, transcribed (catboost/cuda/ctrs/prior_estimator.h, gamma_function.cpp) ----
def _shifted(x):
    """The recurrence of both functions: x moved up by 1 until the asymptotic series (x >= 49) or
    the pole term (0 < x <= 1e-5) applies; returns x and the values passed on the way."""
    r = []
    while not (0.0 < x <= 1.0e-5) and not x >= 49.0:
        r.append(x)
        x = x + 1.0
    return x, r


def digamma(x):
    x, r = _shifted(x)
    if x >= 49.0:
        inv = 1.0 / (x * x)
        v = math.log(x) - 0.5 / x - inv * (0.08333333333333333 + inv * (0.008333333333333333 - inv / 252.0))
    else:
        v = -0.5772156649015329 - 1.0 / x
    for y in reversed(r):
        v = v - 1.0 / y
    return v


def trigamma(x):
    x, r = _shifted(x)
    if x >= 49.0:
        inv = 1.0 / (x * x)
        v = 1.0 / x + inv / 2.0 + inv / x * (0.16666666666666666 - inv * (0.03333333333333333 + inv / 42.0))
    else:
        v = 1.0 / (x * x)
    for y in reversed(r):
        v = v + 1.0 / (y * y)
    return v


def estimate_beta_prior(classes, bins, unique, iterations=50):
    pos = [0.0] * unique
    tot = [0.0] * unique
    s = 0.0
    for c, b in zip(classes, bins):
        pos[b] += 1.0 if c else 0.0
        tot[b] += 1
        s += 1.0 if c else 0.0
    a, b = s / len(classes), 0.0
    b = 1.0 - a
    k = unique
    for _ in range(iterations):
        dA = dB = d2A = d2B = d2AB = 0.0
        cache = {}
        for i in range(k):
            first, n = pos[i], tot[i]
            second = n - first
            key = (first, n)
            if key not in cache:
                cache[key] = (digamma(first + a), trigamma(first + a), digamma(second + b), trigamma(second + b),
                              digamma(n + a + b), trigamma(n + a + b))
            g1, t1, g2, t2, g3, t3 = cache[key]
            dA += g1
            d2A += t1
            dB += g2
            d2B += t2
            dA -= g3
            dB -= g3
            d2A -= t3
            d2B -= t3
            d2AB -= t3
        tmp = digamma(a + b)
        dA += (tmp - digamma(a)) * k
        dB += (tmp - digamma(b)) * k
        tmp = trigamma(a + b) * k
        d2AB += tmp
        d2A += tmp - trigamma(a) * k
        d2B += tmp - trigamma(b) * k
        alpha, beta, step, l2 = a, b, 1.0, 0.01
        assert alpha > 0 and beta > 0, "illegal point"
        while alpha < 1e-8 or beta < 1e-8:
            alpha *= 10
            beta *= 10
        det = (d2A - l2) * (d2B - l2) - d2AB * d2AB
        da, db = -dA, -dB
        if det > 0:
            mult = 1.0 / det
            da = mult * ((d2B - l2) * dA - d2AB * dB)
            db = mult * ((d2A - l2) * dB - d2AB * dA)
        while True:
            na, nb = alpha - step * da, beta - step * db
            step /= 2
            if not (na < 1e-9 or nb < 1e-9):
                break
        a, b = na, nb
        if math.sqrt(dA * dA + dB * dB) < 1e-9:
            break
    return a, b


def transcribed_priors(cats, y):
    """Per categorical feature: (float32 alpha, float32 alpha + beta) over the learn rows in order."""
    out = {}
    for j, col in enumerate(cats):
        ids = {}
        bins = [ids.setdefault(v, len(ids)) for v in col.tolist()]
        a, b = estimate_beta_prior((y > 0.5).tolist(), bins, len(ids))
        out[j] = (float(np.float32(a)), float(np.float32(a + b)))
    return out


# ---- the models' CTR facts, from CatBoost's JSON layout ----
def borders_priors(model_json):
    """{cat feature index (among the categorical features): sorted [(num, denom)] of its Borders CTRs}."""
    out = {}
    for f in model_json["features_info"].get("ctrs", []):
        if f["ctr_type"] != "Borders" or len(f["elements"]) != 1:
            continue
        j = f["elements"][0]["cat_feature_index"]
        out.setdefault(j, set()).add((f["prior_numerator"], f["prior_denomerator"]))
    return {j: sorted(v) for j, v in out.items()}


def ctr_borders(model_json):
    out = {}
    for f in model_json["features_info"].get("ctrs", []):
        if len(f["elements"]) != 1:
            continue
        key = (f["ctr_type"], f["elements"][0]["cat_feature_index"], f.get("target_border_idx", 0),
               f["prior_numerator"], f["prior_denomerator"])
        out[key] = f.get("borders", [])
    return out


def borders_tables(model_json):
    """{table identifier: {hash: counts}} of the single-feature Borders tables."""
    out = {}
    for ident, t in (model_json.get("ctr_data") or {}).items():
        d = json.loads(ident)
        if d.get("type") != "Borders" or len(d.get("identifier", [])) != 1:
            continue
        hm, stride = t["hash_map"], t["hash_stride"]
        out[d["identifier"][0]["cat_feature_index"]] = {
            str(hm[i]): tuple(hm[i + 1:i + stride]) for i in range(0, len(hm), stride)
            if str(hm[i]) != "18446744073709551615"}  # not the empty buckets
    return out


def params_for(loss):
    return {"iterations": 20, "depth": 4, "learning_rate": 0.1, "loss_function": loss, "has_time": True,
            "max_ctr_complexity": 1, "one_hot_max_size": 2, "boosting_type": "Plain", "bootstrap_type": "No",
            "random_strength": 0, "border_count": 64, "simple_ctr": ["Borders:PriorEstimation=BetaPrior"]}


def train_catboost(task, x, cats, y, params):
    import catboost
    cols = {f"x{i}": c for i, c in enumerate(x)}
    cols.update({f"c{j}": c for j, c in enumerate(cats)})
    try:
        import pandas as pd
        frame = pd.DataFrame(cols)
    except ImportError:
        frame = [list(r) for r in zip(*cols.values())]
    cat_idx = list(range(len(x), len(x) + len(cats)))
    log = io.StringIO()
    extra = {"task_type": task, "logging_level": "Info", "allow_writing_files": False}
    if task == "GPU":
        extra.update({"devices": "0", "gpu_ram_part": 0.5})
    m = catboost.CatBoost({**params, **extra})
    t0 = time.time()
    m.fit(catboost.Pool(frame, y, cat_features=cat_idx), log_cout=log, log_cerr=log)
    path = f"/tmp/beta_oracle_{os.getpid()}.json"
    m.save_model(path, format="json")
    with open(path) as f:
        j = json.load(f)
    os.remove(path)
    logged = {int(a): (float(b), float(c)) for a, b, c in
              re.findall(r"Estimate borders-ctr prior for feature #(\d+): ([-0-9.e+]+) / ([-0-9.e+]+)", log.getvalue())}
    return j, logged, time.time() - t0


def _catboost_child(task, x, cats, y, params):
    try:
        return "ok", train_catboost(task, x, cats, y, params)
    except Exception as e:  # noqa: BLE001 - CatBoostError does not travel back between processes
        return "error", str(e).strip().splitlines()[-1][:300]


def train_catboost_isolated(task, x, cats, y, params):
    """train_catboost in a child process: CatBoost's GPU trainer dies of an uncaught exception in a worker
    thread on BetaPrior (see the module's doc), which would end this process too."""
    import concurrent.futures
    import multiprocessing
    with concurrent.futures.ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as ex:
        try:
            status, value = ex.submit(_catboost_child, task, x, cats, y, params).result(timeout=300)
        except concurrent.futures.process.BrokenProcessPool as e:
            raise RuntimeError("CatBoost's process died (its stderr above says why)") from e
    if status != "ok":
        raise RuntimeError(value)
    return value


def train_cbgpu(device, x, cats, y, params):
    import cbgpu
    ctx = cbgpu.Context(device)
    cols = [np.ascontiguousarray(c) for c in x] + [np.ascontiguousarray(c) for c in cats]
    label = np.ascontiguousarray(y)
    if device >= 0:
        try:  # device memory: the GPU CTR path
            import cupy
            cols, label = [cupy.asarray(c) for c in cols], cupy.asarray(label)
        except ImportError:
            pass
    pool = cbgpu.Pool(ctx, columns=cols, label=label,
                      cat_features=list(range(len(x), len(x) + len(cats))))
    t0 = time.time()
    m = cbgpu.train(pool, {**params, "verbose": False})
    return json.loads(m.to_bytes("json")), time.time() - t0


def refusal(task, x, cats, y, params):
    try:
        train_catboost_isolated(task, x, cats, y, params)
        return "accepted"
    except Exception as e:  # noqa: BLE001 - CatBoost's message is the answer
        return str(e).strip().splitlines()[-1][:300]


def main():
    out_path = sys.argv[1] if len(sys.argv) > 1 else "beta_prior_oracle.json"
    trainers = os.environ.get("TRAINERS", "cbgpu-host,cbgpu-GPU,catboost-GPU").split(",")
    report = {"trainers": trainers, "runs": {}}
    for loss, kind in [("Logloss", "binary"), ("RMSE", "regression")]:
        x, cats, y = data(20000, 5, kind)
        params = params_for(loss)
        run = {"priors": {}, "seconds": {}}
        models = {}
        for t in trainers:
            try:
                if t.startswith("catboost"):
                    task = t.split("-")[1]
                    p = params if task == "GPU" else {**params, "simple_ctr": ["Borders"]}
                    j, logged, s = train_catboost_isolated(task, x, cats, y, p)
                    run["logged_" + t] = {str(k): v for k, v in logged.items()}
                else:
                    j, s = train_cbgpu(-1 if t == "cbgpu-host" else 0, x, cats, y, params)
                models[t] = j
                run["seconds"][t] = round(s, 3)
                run["priors"][t] = {str(k): v for k, v in borders_priors(j).items()}
            except Exception as e:  # noqa: BLE001 - report and go on
                run["error_" + t] = repr(e)[:400]
        if kind == "binary":
            run["priors"]["transcription"] = {str(k): [list(v)] for k, v in transcribed_priors(cats, y).items()}
        names = list(models)
        for i in range(len(names)):
            for k in range(i + 1, len(names)):
                a, b = names[i], names[k]
                ta, tb = borders_tables(models[a]), borders_tables(models[b])
                shared = sorted(set(ta) & set(tb))
                same_tables = {str(f): ta[f] == tb[f] for f in shared}
                ba, bb = ctr_borders(models[a]), ctr_borders(models[b])
                common = sorted(set(ba) & set(bb), key=str)
                run[f"{a}~{b}"] = {
                    "borders_tables_equal": same_tables,
                    "ctr_features_shared": len(common),
                    "ctr_borders_equal": sum(1 for c in common if ba[c] == bb[c]),
                    "ctr_borders_max_abs_diff": max([max([abs(p - q) for p, q in zip(ba[c], bb[c])] or [0.0])
                                                     for c in common if len(ba[c]) == len(bb[c])] or [0.0]),
                }
        pri = run["priors"]
        feats = sorted({f for v in pri.values() for f in v}, key=int)
        run["prior_agreement"] = {f: len({tuple(map(tuple, v[f])) for v in pri.values() if f in v}) == 1 for f in feats}
        report["runs"][loss] = run
        print(loss, json.dumps(run["prior_agreement"]), json.dumps(run["seconds"]), flush=True)
    cb = [t for t in trainers if t.startswith("catboost")]
    if cb:
        task = cb[0].split("-")[1]
        x, cats, y = data(3000, 6, "binary")
        base = params_for("Logloss")
        report["catboost_answers"] = {
            "simple Borders BetaPrior": refusal(task, x, cats, y, base),
            "simple Buckets BetaPrior": refusal(task, x, cats, y, {**base, "simple_ctr": ["Buckets:PriorEstimation=BetaPrior"]}),
            "combinations Borders BetaPrior": refusal(task, x, cats, y, {
                **base, "max_ctr_complexity": 2, "combinations_ctr": ["Borders:PriorEstimation=BetaPrior"]}),
        }
        xm, cm, ym = data(3000, 7, "multiclass")
        try:
            j, logged, _ = train_catboost_isolated(task, xm, cm, ym, {**params_for("MultiClass"),
                                                             "simple_ctr": ["Borders:PriorEstimation=BetaPrior:Prior=0.25/2"]})
            report["catboost_multiclass_priors"] = {str(k): v for k, v in borders_priors(j).items()}
            report["catboost_multiclass_logged"] = logged
        except Exception as e:  # noqa: BLE001
            report["catboost_multiclass_priors"] = repr(e)[:300]
    with open(out_path, "w") as f:
        json.dump(report, f, indent=1, sort_keys=True, default=str)
    print(json.dumps(report.get("catboost_answers", {}), indent=1))


if __name__ == "__main__":
    main()
