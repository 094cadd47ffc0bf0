# SPDX-License-Identifier: Apache-2.0
"""`cbgpu-bench calc` against CatBoost's own predict (the oracle).

A small CatBoost model is trained on a generated TSV with a numeric and a categorical column, saved
as .cbm, and applied with `cbgpu-bench calc` to another TSV (with missing numbers and unseen
categories). RawFormulaVal must be bit-identical (the tool prints 17 significant digits), the other
prediction types within 1e-12 relative; Class must name the same class. The binary comes from
$CBGPU_BENCH (CTest sets it).
"""
from __future__ import annotations

import os
import subprocess

import numpy as np
import pytest

catboost = pytest.importorskip("catboost")
pd = pytest.importorskip("pandas")

BENCH = os.environ.get("CBGPU_BENCH")
pytestmark = pytest.mark.skipif(not BENCH, reason="CBGPU_BENCH (the cbgpu-bench binary) is not set")

REL_TOL = 1e-12
CITIES = ["Москва", "Paris", "a", "The quick brown fox jumps over the lazy dog", "x" * 40, "7"]


def make_frame(seed: int, n: int, unseen: bool = False) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    num = rng.normal(size=n).astype(np.float32)
    num[rng.random(n) < 0.1] = np.nan
    k = len(CITIES) - (0 if unseen else 2)
    city = [CITIES[i] for i in rng.integers(0, k, n)]
    return pd.DataFrame({"num": num, "city": city})


def signal(df: pd.DataFrame) -> np.ndarray:
    return np.nan_to_num(df["num"].to_numpy(np.float64)) + np.array([len(c) % 3 for c in df["city"]])


def write_tsv(path, labels, df: pd.DataFrame) -> None:
    # float32 values print as their shortest round-trip text, so the tool reads the same floats.
    with open(path, "w", encoding="utf-8") as f:
        for y, x, c in zip(labels, df["num"], df["city"]):
            f.write(f"{y}\t{'nan' if np.isnan(x) else repr(float(np.float32(x)))}\t{c}\n")


def train(tmp_path, loss: str):
    learn = make_frame(1, 300)
    s = signal(learn)
    y = (s > np.median(s)).astype(int) if loss == "Logloss" else np.digitize(s, np.quantile(s, [0.33, 0.66]))
    model = catboost.CatBoost(dict(loss_function=loss, iterations=20, depth=3, verbose=0, thread_count=2,
                                   random_seed=0, allow_writing_files=False))
    model.fit(catboost.Pool(learn, y, cat_features=["city"]))
    model_path = tmp_path / "model.cbm"
    model.save_model(str(model_path), format="cbm")
    test = make_frame(2, 200, unseen=True)
    data_path = tmp_path / "test.tsv"
    write_tsv(data_path, np.zeros(len(test), dtype=int), test)
    cd_path = tmp_path / "test.cd"
    cd_path.write_text("0\tLabel\n2\tCateg\tcity\n")
    return model, catboost.Pool(test, cat_features=["city"]), model_path, data_path, cd_path


def calc(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([BENCH, "calc", *args], capture_output=True, text=True, timeout=120)


def read_output(path):
    lines = path.read_text(encoding="utf-8").splitlines()
    header = lines[0].split("\t")
    rows = [line.split("\t") for line in lines[1:]]
    return header, rows


def column(header, rows, name, convert=float):
    j = header.index(name)
    return np.array([convert(r[j]) for r in rows])


def relative_diff(expected, got) -> float:
    expected, got = np.asarray(expected, np.float64), np.asarray(got, np.float64)
    rel = np.abs(expected - got) / np.maximum(np.abs(expected), 1e-300)
    rel[expected == got] = 0.0
    return float(rel.max())


def test_calc_binary_matches_catboost(tmp_path):
    model, pool, model_path, data_path, cd_path = train(tmp_path, "Logloss")
    out = tmp_path / "out.tsv"
    r = calc("-m", str(model_path), "--input-path", str(data_path), "--cd", str(cd_path), "-o", str(out),
             "--prediction-type", "RawFormulaVal,Probability,Class")
    assert r.returncode == 0, r.stderr
    # Text categories: the GPU evaluator (the text hashed on the device) where a GPU is visible, else the host one.
    assert "calc: GPU evaluator" in r.stdout or "calc: host evaluator" in r.stdout
    header, rows = read_output(out)
    # A binary classifier's Probability is one column, the probability of class 1, as CatBoost's calc writes it.
    assert header == ["SampleId", "RawFormulaVal", "Probability", "Class"]
    assert len(rows) == pool.num_row()
    assert column(header, rows, "SampleId", int).tolist() == list(range(pool.num_row()))
    raw = column(header, rows, "RawFormulaVal")
    assert np.array_equal(raw, model.predict(pool, prediction_type="RawFormulaVal"))
    proba = column(header, rows, "Probability")
    assert relative_diff(model.predict(pool, prediction_type="Probability")[:, 1], proba) <= REL_TOL
    expected_class = [str(v) for v in np.asarray(model.predict(pool, prediction_type="Class")).reshape(-1)]
    assert column(header, rows, "Class", str).tolist() == expected_class


def test_calc_multiclass_default_type(tmp_path):
    model, pool, model_path, data_path, cd_path = train(tmp_path, "MultiClass")
    out = tmp_path / "out.tsv"
    r = calc("--model-file", str(model_path), "--input-path", str(data_path), "--column-description",
             str(cd_path), "--output-path", str(out))
    assert r.returncode == 0, r.stderr
    header, rows = read_output(out)
    assert header == ["SampleId"] + [f"RawFormulaVal:Class={c}" for c in (0, 1, 2)]
    raw = np.stack([column(header, rows, h) for h in header[1:]], axis=1)
    assert np.array_equal(raw, model.predict(pool, prediction_type="RawFormulaVal"))


def test_calc_missing_model(tmp_path):
    data = tmp_path / "d.tsv"
    data.write_text("0\t1.5\n")
    r = calc("-m", str(tmp_path / "no_such_model.cbm"), "--input-path", str(data), "-o", str(tmp_path / "o.tsv"))
    assert r.returncode == 2, r.stderr
    assert "no_such_model.cbm" in r.stderr
    assert not (tmp_path / "o.tsv").exists()


def test_calc_too_few_features(tmp_path):
    _, _, model_path, _, _ = train(tmp_path, "Logloss")
    data = tmp_path / "short.tsv"
    data.write_text("0\t1.5\n1\t-2\n")
    r = calc("-m", str(model_path), "--input-path", str(data), "-o", str(tmp_path / "o.tsv"))
    assert r.returncode == 2, r.stderr
    assert "1 feature column, but the model needs 2" in r.stderr


def test_calc_categorical_column_not_marked(tmp_path):
    """Without a .cd every feature column is numeric: the model's categorical feature is refused."""
    _, _, model_path, _, _ = train(tmp_path, "Logloss")
    extra = tmp_path / "three.tsv"
    extra.write_text("0\t1.5\t2\t3\n")
    r = calc("-m", str(model_path), "--input-path", str(extra), "-o", str(tmp_path / "o.tsv"))
    assert r.returncode == 2, r.stderr
    assert "Categ" in r.stderr
