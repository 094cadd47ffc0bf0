# SPDX-License-Identifier: Apache-2.0
"""`cbgpu-bench fit` -> `cbgpu-bench calc` -> the Python package's predictions of the same model file.

fit runs with most of CatBoost's flags (and a --params-file, key=value overrides, both model formats
and a learning-curve HTML page, whose charts are checked here); calc applies the model (the GPU
evaluator where a GPU is visible, the host evaluator otherwise, and the host one with
--task-type CPU) and its TSV must equal cbgpu.Model.predict: RawFormulaVal bit for bit (17
significant digits), probabilities within 1e-13 relative (the GPU's exp). The binary comes from $CBGPU_BENCH.
"""
from __future__ import annotations

import json
import os
import struct
import subprocess

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


def crc32c(data: bytes) -> int:
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


def tfrecords(data: bytes) -> list[bytes]:
    """The records of a TensorBoard events file, checking both masked CRC-32Cs of each."""
    def masked(crc):
        return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF
    records, pos = [], 0
    while pos < len(data):
        header = data[pos:pos + 8]
        (n,) = struct.unpack("<Q", header)
        (length_crc,) = struct.unpack("<I", data[pos + 8:pos + 12])
        assert length_crc == masked(crc32c(header))
        body = data[pos + 12:pos + 12 + n]
        (body_crc,) = struct.unpack("<I", data[pos + 12 + n:pos + 16 + n])
        assert body_crc == masked(crc32c(body))
        records.append(body)
        pos += 16 + n
    return records


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
            "--plot-learning-curve", str(d / "curve.html"), "--logging-level", "Silent", "boost_from_average=false")
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
    # CatBoost's train dir layout: TensorBoard events of the learn and test metrics, and tmp/.
    assert (d / "info" / "tmp").is_dir()
    for part, metrics in (("learn", ("Logloss", "Accuracy")), ("test", ("Logloss", "AUC", "Accuracy"))):
        records = tfrecords((d / "info" / part / "events.out.tfevents").read_bytes())
        assert b"brain.Event:2" in records[0] and len(records) == ITERATIONS + 1
        for metric in metrics:
            assert all(metric.encode() in r for r in records[1:])
        last_logloss = struct.unpack("<f", records[-1].split(b"Logloss\x15", 1)[1][:4])[0]
        table = (d / "info" / f"{part}_error.tsv").read_text().splitlines()
        assert last_logloss == pytest.approx(float(table[-1].split("\t")[1]), rel=1e-6)
    page = (d / "curve.html").read_text()
    assert page.startswith("<!DOCTYPE html>") and "<script" not in page and "http" not in page.replace(
        "http://www.w3.org/2000/svg", "")
    # One chart per metric, each with its learn and test lines (AUC is not computed on the learn set, as in
    # CatBoost), axis labels, a legend and the best iteration.
    assert page.count("<svg") == 3
    for metric in ("Logloss", "AUC", "Accuracy"):
        assert f'aria-label="{metric}"' in page
    assert page.count("<polyline") == 5 and page.count(">iteration</text>") == 3
    assert page.count(">learn</text>") == 2 and page.count(">test</text>") == 3 and page.count(">best test ") == 3


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
    assert header == ["SampleId", "Label", "RawFormulaVal", "Probability", "Class"]
    assert np.array_equal(table[:, 0], np.arange(len(x))) and np.array_equal(table[:, 1], y)
    with cbgpu.Model.load(d / "model.bin") as model:
        assert np.array_equal(table[:, 2], model.predict(x)[:, 0])
        np.testing.assert_allclose(table[:, 3], model.predict(x, prediction_type="Probability")[:, 1], rtol=1e-13,
                                   atol=0)
        assert np.array_equal(table[:, 4], model.predict(x, prediction_type="Class")[:, 0])


def test_calc_and_fit_refuse_bad_flags(fitted, tmp_path):
    d, _, _, _ = fitted
    for args, words in (
            (["calc", "-m", str(d / "model.bin"), "--input-path", str(d / "test.tsv"), "--output-columns",
              "SampleId,Odds"], "'Odds'"),
            (["calc", "-m", str(d / "model.bin"), "--input-path", str(d / "test.tsv"), "--output-columns",
              "Label,SampleId"], "prediction type"),
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


def test_per_float_feature_quantization_flag_gives_the_requested_borders(fitted, tmp_path):
    # CatBoost's flag: one description per feature, ';'-separated; each feature's borders follow it.
    d, _, _, _ = fitted
    model_path = tmp_path / "per.cbm"
    run("fit", "-f", str(d / "learn.tsv"), "--loss-function", "Logloss", "-i", "3", "-x", "32", "--task-type",
        "CPU", "--per-float-feature-quantization", "0:border_count=3;2:border_count=5,border_type=Median",
        "-m", str(model_path))
    with cbgpu.Model.load(model_path) as model:
        per = json.loads(model.info_value("params"))["data_processing_options"]["per_float_feature_quantization"]
    assert per["0"]["border_count"] == 3 and per["2"]["border_count"] == 5 and per["2"]["border_type"] == "Median"
    assert "1" not in per and "3" not in per
