# SPDX-License-Identifier: Apache-2.0
"""`cbgpu-bench fit` and `calc` on a TSV with text categories.

The CLI hands categorical columns to the library as text (dictionary string columns), so the model's
one-hot values and CTR tables hold CatBoost's hashes of the file's text (checked against
cbgpu.cat_hash), the GPU evaluator (text hashed on the device) writes exactly what the host one
writes, and CatBoost loads the model and predicts, on `catboost.Pool(<the same TSV>,
column_description=<the .cd>)` (the reader of CatBoost's own `calc`), exactly what `cbgpu-bench
calc` writes, with held-out quality near CatBoost's own fit on the file. Integer-looking values
("7", "007", "-3", "+3", "3.0") are distinct categories hashed from their text, as CatBoost's file
reader does. The binary comes from $CBGPU_BENCH (CTest sets it).
"""
from __future__ import annotations

import json
import os
import subprocess

import numpy as np
import pytest

import cbgpu

BENCH = os.environ.get("CBGPU_BENCH")
pytestmark = pytest.mark.skipif(not BENCH, reason="CBGPU_BENCH (the cbgpu-bench binary) is not set")

# A one-hot feature (3 values), and a CTR feature with text, non-ASCII and integer-looking values.
COLORS = ["red", "green", "blue"]
CITIES = ["Москва", "Paris", "東京", "7", "007", "-3", "+3", "3.0", "x" * 40, "a b"]
CD = "0\tLabel\n2\tCateg\tcolor\n3\tCateg\tcity\n"


def write_tsv(path, seed: int, n: int) -> None:
    rng = np.random.default_rng(seed)
    effect = np.random.default_rng(99).normal(0, 1.0, len(CITIES))
    num = rng.normal(size=n).astype(np.float32)
    color = rng.integers(0, len(COLORS), n)
    city = rng.integers(0, len(CITIES), n)
    y = (num + effect[city] + 0.7 * (color == 1) + 0.3 * rng.normal(size=n) > 0.4).astype(int)
    with open(path, "w", encoding="utf-8") as f:
        for i in range(n):
            f.write(f"{y[i]}\t{repr(float(num[i]))}\t{COLORS[color[i]]}\t{CITIES[city[i]]}\n")


def run(*args: str) -> subprocess.CompletedProcess:
    r = subprocess.run([BENCH, *args], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    return r


def calc_raw(tmp_path, model, data, cd, task_type: str) -> np.ndarray:
    out = tmp_path / f"out_{task_type}.tsv"
    args = ["calc", "-m", str(model), "--input-path", str(data), "--cd", str(cd), "-o", str(out),
            "--prediction-type", "RawFormulaVal"]
    if task_type == "CPU":
        args += ["--task-type", "CPU"]
    r = run(*args)
    lines = out.read_text(encoding="utf-8").splitlines()
    assert lines[0].split("\t") == ["SampleId", "RawFormulaVal"]
    return np.array([float(line.split("\t")[1]) for line in lines[1:]]), r.stdout


def fit(tmp_path, fit_on: str):
    """Writes learn/test TSVs and the .cd, fits with the CLI (on the host, or the GPU); returns the paths."""
    learn, test, cd = tmp_path / "learn.tsv", tmp_path / "test.tsv", tmp_path / "pool.cd"
    write_tsv(learn, 1, 600)
    write_tsv(test, 2, 300)
    cd.write_text(CD, encoding="utf-8")
    model = tmp_path / "model.cbm"
    run("fit", "-f", str(learn), "-t", str(test), "--cd", str(cd), "--loss-function", "Logloss", "-i", "40",
        "--depth", "4", "--task-type", fit_on, "-m", str(model), "--train-dir", str(tmp_path / "info"),
        "one_hot_max_size=4", "max_ctr_complexity=1")
    return model, test, cd


@pytest.mark.parametrize("fit_on", ["CPU", "GPU"])
def test_text_categories_hashed_from_text_and_gpu_calc_equals_host(tmp_path, fit_on):
    if fit_on == "GPU" and cbgpu.device_count() == 0:
        pytest.skip("libcbgpu sees no CUDA device")
    model, test, cd = fit(tmp_path, fit_on)
    # The model's one-hot values are CatBoost's hashes of the file's text, not of codes 0, 1, ...
    info = json.loads(cbgpu.Model.load(model).to_bytes("json"))
    one_hot = [f for f in info["features_info"]["categorical_features"] if f.get("values")]
    assert one_hot and {v & 0xFFFFFFFF for v in one_hot[0]["values"]} == {cbgpu.cat_hash(c) for c in COLORS}
    assert info["features_info"].get("ctrs"), "the city feature gets CTRs"
    # Integer-looking values are categories of their own: "7" and "007" differ, as in CatBoost.
    assert len({cbgpu.cat_hash(c) for c in CITIES}) == len(CITIES)
    assert cbgpu.cat_hash("7") == cbgpu.cat_hash(7)
    # The default evaluator (the GPU one where a GPU is visible, the text hashed on the device) writes
    # exactly what the host evaluator writes.
    host, stdout = calc_raw(tmp_path, model, test, cd, "CPU")
    assert "host evaluator" in stdout
    default, stdout = calc_raw(tmp_path, model, test, cd, "default")
    assert ("GPU evaluator" in stdout) == (cbgpu.device_count() > 0)
    np.testing.assert_array_equal(default, host)


def test_catboost_predicts_on_the_same_file_what_calc_writes(tmp_path):
    """CatBoost loads the model fitted by our CLI and predicts, on the same TSV read by its own
    reader (what `catboost calc` reads), exactly what `cbgpu-bench calc` writes."""
    catboost = pytest.importorskip("catboost")
    import catboost.utils
    model, test, cd = fit(tmp_path, "CPU")
    loaded = catboost.CatBoost()
    loaded.load_model(str(model))
    expected = loaded.predict(catboost.Pool(str(test), column_description=str(cd)), prediction_type="RawFormulaVal")
    host, _ = calc_raw(tmp_path, model, test, cd, "CPU")
    np.testing.assert_array_equal(host, expected)
    # And the categories carry their signal (hashes of codes would miss every lookup in CatBoost and
    # in our calc alike, giving equal but useless predictions): held-out Logloss near CatBoost's own
    # model fitted on the same file with the same parameters (0.21 against 0.24; 0.60 with codes).
    theirs = catboost.CatBoost({"loss_function": "Logloss", "iterations": 40, "depth": 4, "one_hot_max_size": 4,
                                "max_ctr_complexity": 1, "verbose": 0, "thread_count": 1,
                                "allow_writing_files": False})
    theirs.fit(catboost.Pool(str(tmp_path / "learn.tsv"), column_description=str(cd)))
    test_pool = catboost.Pool(str(test), column_description=str(cd))
    y = np.asarray(test_pool.get_label(), dtype=np.float64)
    ours_m = catboost.utils.eval_metric(y, host, "Logloss")[0]
    theirs_m = catboost.utils.eval_metric(y, theirs.predict(test_pool, prediction_type="RawFormulaVal"), "Logloss")[0]
    assert ours_m <= 1.1 * theirs_m, (ours_m, theirs_m)


def test_ctr_leaf_count_limit_on_the_host(tmp_path):
    """`--ctr-leaf-count-limit` (CatBoost's CPU-only option) with `--task-type CPU`: the city's tables
    keep its 4 most frequent values, and CatBoost predicts the model as `calc` does."""
    learn, test, cd = tmp_path / "learn.tsv", tmp_path / "test.tsv", tmp_path / "pool.cd"
    write_tsv(learn, 1, 600)
    write_tsv(test, 2, 300)
    cd.write_text(CD, encoding="utf-8")
    model = tmp_path / "limited.cbm"
    run("fit", "-f", str(learn), "--cd", str(cd), "--loss-function", "Logloss", "-i", "20", "--depth", "4",
        "--task-type", "CPU", "-m", str(model), "--train-dir", str(tmp_path / "info"), "--one-hot-max-size", "4",
        "--max-ctr-complexity", "1", "--ctr-leaf-count-limit", "4", "--store-all-simple-ctr", "false")
    m = json.loads(cbgpu.Model.load(model).to_bytes("json"))
    sizes = {len([h for h in t["hash_map"][::t["hash_stride"]] if int(h) != 2**64 - 1])
             for t in m["ctr_data"].values()}
    assert sizes == {4}
    catboost = pytest.importorskip("catboost")
    loaded = catboost.CatBoost()
    loaded.load_model(str(model))
    expected = loaded.predict(catboost.Pool(str(test), column_description=str(cd)), prediction_type="RawFormulaVal")
    host, _ = calc_raw(tmp_path, model, test, cd, "CPU")
    np.testing.assert_array_equal(host, expected)


def test_has_time_and_fold_permutation_block(tmp_path):
    """`--has-time` (a flag, as in CatBoost's CLI) and `--fold-permutation-block` reach the trainer: the model
    records them, and with has_time two seeds give the same trees (no score noise, no bootstrap)."""
    learn, cd = tmp_path / "learn.tsv", tmp_path / "pool.cd"
    write_tsv(learn, 3, 600)
    cd.write_text(CD, encoding="utf-8")
    trees = []
    for seed in ("1", "2"):
        model = tmp_path / f"t{seed}.cbm"
        run("fit", "-f", str(learn), "--cd", str(cd), "--loss-function", "Logloss", "-i", "10", "--depth", "4",
            "--task-type", "CPU", "-m", str(model), "--train-dir", str(tmp_path / "info"), "--has-time",
            "--fold-permutation-block", "16", "--random-strength", "0", "--bootstrap-type", "No", "-r", seed)
        with cbgpu.Model.load(model) as m:
            flat = json.loads(m.info_value("params"))["flat_params"]
            assert flat["has_time"] is True and flat["fold_permutation_block"] == 16
            trees.append(json.loads(m.to_bytes("json"))["oblivious_trees"])
    assert trees[0] == trees[1]
