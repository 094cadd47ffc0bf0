# SPDX-License-Identifier: Apache-2.0
"""`cbgpu-bench fit` -> `cbgpu-bench calc` -> the Python package's predictions of the same model file.

fit runs with most of CatBoost's flags (and a --params-file, key=value overrides, both model formats
and a learning-curve PNG, which is decoded and checked here); calc applies the model (the GPU
evaluator where a GPU is visible, the host evaluator otherwise, and the host one with
--task-type CPU) and its TSV must equal cbgpu.Model.predict: RawFormulaVal bit for bit (17
significant digits), probabilities within 1e-13 relative (the GPU's exp). The binary comes from $CBGPU_BENCH.
"""
from __future__ import annotations

import json
import os
import struct
import subprocess
import zlib

import numpy as np
import pytest

import cbgpu

BENCH = os.environ.get("CBGPU_BENCH")
pytestmark = pytest.mark.skipif(not BENCH, reason="CBGPU_BENCH (the cbgpu-bench binary) is not set")
ITERATIONS = 25


def run(*args: str, cwd=None) -> subprocess.CompletedProcess:
    r = subprocess.run([BENCH, *args], capture_output=True, text=True, timeout=120, cwd=cwd)
    assert r.returncode == 0, f"{args[0]} failed ({r.returncode}):\n{r.stdout}\n{r.stderr}"
    return r


def write_tsv(path, x, y):
    with open(path, "w") as f:
        for yi, row in zip(y, x):
            f.write("\t".join([str(int(yi))] + [repr(float(v)) for v in row]) + "\n")


def read_tsv(path):
    lines = path.read_text().splitlines()
    header = lines[0].split("\t")
    return header, np.array([[float(v) for v in line.split("\t")] for line in lines[1:]])


def decode_png(data: bytes):
    """(width, height, palette, pixels[h][w]) of an 8-bit palette PNG, checking every CRC."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, chunks = 8, {}
    while pos < len(data):
        (n,) = struct.unpack(">I", data[pos:pos + 4])
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + n]
        (crc,) = struct.unpack(">I", data[pos + 8 + n:pos + 12 + n])
        assert crc == zlib.crc32(kind + body), f"bad CRC in {kind}"
        chunks[kind] = chunks.get(kind, b"") + body
        pos += 12 + n
    width, height, depth, color = struct.unpack(">IIBB", chunks[b"IHDR"][:10])
    assert (depth, color) == (8, 3)
    raw = zlib.decompress(chunks[b"IDAT"])
    assert len(raw) == height * (width + 1)
    rows = [raw[r * (width + 1) + 1:(r + 1) * (width + 1)] for r in range(height)]
    assert all(raw[r * (width + 1)] == 0 for r in range(height))
    return width, height, chunks[b"PLTE"], np.frombuffer(b"".join(rows), np.uint8).reshape(height, width)


@pytest.fixture(scope="module")
def fitted(tmp_path_factory):
    d = tmp_path_factory.mktemp("roundtrip")
    rng = np.random.default_rng(11)
    x = rng.normal(size=(500, 4)).astype(np.float32)
    x[rng.random(x.shape) < 0.05] = np.nan
    y = (np.nan_to_num(x[:, 0]) + 0.5 * np.nan_to_num(x[:, 1]) + 0.3 * rng.normal(size=500) > 0).astype(int)
    write_tsv(d / "learn.tsv", x[:350], y[:350])
    write_tsv(d / "test.tsv", x[350:], y[350:])
    (d / "params.json").write_text(json.dumps({"metric_period": 1, "depth": 3}))
    r = run("fit", "-f", str(d / "learn.tsv"), "-t", str(d / "test.tsv"), "--loss-function", "Logloss",
            "-i", str(ITERATIONS), "-n", "4", "-w", "0.2", "-x", "32", "--feature-border-type", "GreedyLogSum",
            "--l2-leaf-reg", "2", "--random-strength", "1", "--bootstrap-type", "Bernoulli", "--subsample", "0.8",
            "--od-type", "Iter", "--od-wait", "100", "--eval-metric", "Logloss", "--custom-metric", "AUC,Accuracy",
            "--use-best-model", "false", "-r", "5", "-T", "2", "--params-file", str(d / "params.json"),
            "--model-format", "CatboostBinary,Json", "-m", str(d / "model.bin"), "--train-dir", str(d / "info"),
            "--plot-learning-curve", str(d / "curve.png"), "--logging-level", "Silent", "boost_from_average=false")
    return d, x[350:], y[350:], r


def test_fit_writes_both_formats_logs_and_curve(fitted):
    d, x, _, r = fitted
    assert "wrote learning curve" in r.stdout
    with cbgpu.Model.load(d / "model.bin") as binary, cbgpu.Model.load(d / "model.bin.json", format="json") as js:
        assert binary.tree_count == ITERATIONS
        assert np.array_equal(binary.predict(x), js.predict(x))
        params = json.loads(binary.info_value("params"))
        text = json.dumps(params)
        assert '"depth": 4' in text, "flags override the params file"
        for metric in ("AUC", "Accuracy"):
            assert metric in text
    learn_lines = (d / "info" / "learn_error.tsv").read_text().splitlines()
    assert len(learn_lines) == ITERATIONS + 1
    width, height, palette, pixels = decode_png((d / "curve.png").read_bytes())
    assert (width, height) == (640, 400) and len(palette) % 3 == 0
    assert {2, 3} <= set(np.unique(pixels).tolist()), "both the learn and the eval curve are drawn"


@pytest.mark.parametrize("task", [None, "CPU"])
def test_calc_equals_the_python_package(fitted, task):
    d, x, y, _ = fitted
    out = d / f"calc_{task}.tsv"
    args = ["calc", "-m", str(d / "model.bin"), "--input-path", str(d / "test.tsv"), "-o", str(out),
            "--output-columns", "SampleId,Label,RawFormulaVal,Probability,Class", "-T", "2"]
    if task:
        args += ["--task-type", task]
    r = run(*args)
    on_gpu = "GPU evaluator" in r.stdout
    assert on_gpu == (task is None and cbgpu.device_count() > 0), r.stdout
    header, table = read_tsv(out)
    assert header == ["SampleId", "Label", "RawFormulaVal", "Probability:Class=0", "Probability:Class=1", "Class"]
    assert np.array_equal(table[:, 0], np.arange(len(x))) and np.array_equal(table[:, 1], y)
    with cbgpu.Model.load(d / "model.bin") as model:
        assert np.array_equal(table[:, 2], model.predict(x)[:, 0])
        np.testing.assert_allclose(table[:, 3:5], model.predict(x, prediction_type="Probability"), rtol=1e-13,
                                   atol=0)
        assert np.array_equal(table[:, 5], model.predict(x, prediction_type="Class")[:, 0])


def test_calc_and_fit_refuse_bad_flags(fitted, tmp_path):
    d, _, _, _ = fitted
    for args, words in (
            (["calc", "--input-path", str(d / "test.tsv"), "--output-columns", "SampleId,Odds"], "output columns"),
            (["calc", "--input-path", str(d / "test.tsv"), "--output-columns", "Label,SampleId"], "SampleId"),
            (["calc", "--input-path", str(d / "test.tsv"), "--task-type", "TPU"], "CPU, GPU"),
            (["fit", "-f", str(d / "learn.tsv"), "--bootstrap-type", "Sometimes"], "Bayesian"),
            (["fit", "-f", str(d / "learn.tsv"), "--subsample", "1.5"], "subsample"),
            (["fit", "-f", str(d / "learn.tsv"), "--params-file", str(tmp_path / "none.json")], "cannot open")):
        r = subprocess.run([BENCH, *args], capture_output=True, text=True, timeout=60, cwd=tmp_path)
        assert r.returncode == 2, (args, r.stdout, r.stderr)
        assert words in r.stderr, (args, r.stderr)
    (tmp_path / "list.json").write_text("[1, 2]")
    r = subprocess.run([BENCH, "fit", "-f", str(d / "learn.tsv"), "--params-file", str(tmp_path / "list.json"),
                        "-i", "2", "--train-dir", str(tmp_path / "info")], capture_output=True, text=True,
                       timeout=60, cwd=tmp_path)
    assert r.returncode == 2 and "JSON object" in r.stderr, r.stderr


@pytest.mark.parametrize("name", ["logloss_ctr_onehot", "multiclass_ctr"])
def test_calc_integer_categories_equal_catboost(name, tmp_path):
    """CatBoost-made models with one-hot and CTR features over integer categories (tests/data/apply,
    with CatBoost's own predictions): calc hashes the integers on the GPU where one is visible, their
    text on the host otherwise; RawFormulaVal must equal CatBoost's bit for bit."""
    data_dir = __import__("pathlib").Path(__file__).resolve().parents[1] / "data" / "apply"
    case = np.load(data_dir / f"{name}.npz")
    floats, cats, cat_idx = case["floats"], case["cats"], set(case["cat_idx"].tolist())
    with open(tmp_path / "data.tsv", "w") as f:
        for r in range(len(floats)):
            f.write("\t".join(str(int(cats[r, j])) if j in cat_idx else repr(float(floats[r, j]))
                              for j in range(floats.shape[1])) + "\n")
    (tmp_path / "data.cd").write_text("".join(f"{j}\tCateg\n" for j in sorted(cat_idx)))
    r = run("calc", "-m", str(data_dir / f"{name}.cbm"), "--input-path", str(tmp_path / "data.tsv"), "--cd",
            str(tmp_path / "data.cd"), "-o", str(tmp_path / "out.tsv"), "--prediction-type", "RawFormulaVal")
    assert ("GPU evaluator" in r.stdout) == (cbgpu.device_count() > 0), r.stdout
    _, table = read_tsv(tmp_path / "out.tsv")
    want = case["expected_RawFormulaVal"].reshape(len(floats), -1)
    assert np.array_equal(table[:, 1:], want)
