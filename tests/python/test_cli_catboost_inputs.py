# SPDX-License-Identifier: Apache-2.0
"""`cbgpu-bench fit`/`calc` on inputs as CatBoost's command line takes them, against CatBoost (the oracle).

Class labels read from a file (numbers 1..7, strings, --class-names), the .cd types CatBoost has
(Target, DocId, GroupId, Timestamp, Auxiliary), libsvm:// pools, `-o stdout`, calc's tree ranges
(--ntree-start/--ntree-end/--eval-period) and fit's --eval-file. The binary comes from $CBGPU_BENCH.
"""
from __future__ import annotations

import json
import os
import subprocess

import numpy as np
import pytest

catboost = pytest.importorskip("catboost")

BENCH = os.environ.get("CBGPU_BENCH")
pytestmark = pytest.mark.skipif(not BENCH, reason="CBGPU_BENCH (the cbgpu-bench binary) is not set")


def run(*args, cwd=None, expect=0) -> subprocess.CompletedProcess:
    r = subprocess.run([BENCH, *map(str, args)], capture_output=True, text=True, timeout=120, cwd=cwd)
    assert r.returncode == expect, f"{args[:1]} exited {r.returncode}:\n{r.stdout}\n{r.stderr}"
    return r


def write_rows(path, labels, x, extra=None):
    with open(path, "w") as f:
        for i, (y, row) in enumerate(zip(labels, x)):
            cells = [str(y)] + [repr(float(v)) for v in row] + ([str(c) for c in extra[i]] if extra else [])
            f.write("\t".join(cells) + "\n")


def features(seed, n=240, d=3):
    return np.random.default_rng(seed).normal(size=(n, d)).astype(np.float32)


def class_params(model_path):
    m = catboost.CatBoost()
    m.load_model(str(model_path))
    m.save_model(str(model_path) + ".cb.json", format="json")
    return json.load(open(str(model_path) + ".cb.json"))["model_info"]["class_params"], m


def read_table(path):
    lines = open(path).read().splitlines()
    return lines[0].split("\t"), [line.split("\t") for line in lines[1:]]


def catboost_classes_from_file(tmp_path, data, cd, loss, extra=()):
    """The class_params CatBoost itself writes for a model trained on `data` (read by its own loader)."""
    model = catboost.CatBoost(dict(loss_function=loss, iterations=2, verbose=0, allow_writing_files=False, **dict(extra)))
    model.fit(catboost.Pool(str(data), column_description=str(cd)))
    model.save_model(str(tmp_path / "theirs.json"), format="json")
    return json.load(open(tmp_path / "theirs.json"))["model_info"]["class_params"]


@pytest.mark.parametrize("labels,loss", [
    ([str(k) for k in range(1, 8)], "MultiClass"),          # 7 classes, not 8 with a phantom 0
    (["10", "2", "3"], "MultiClass"),                        # sorted as numbers: 2, 3, 10
    (["cat", "dog", "bird"], "MultiClass"),                  # sorted as text
    (["no", "yes"], "Logloss"),
])
def test_class_labels_as_catboost_names_them(tmp_path, labels, loss):
    x = features(1)
    rng = np.random.default_rng(2)
    y = [labels[k] for k in rng.integers(0, len(labels), len(x))]
    write_rows(tmp_path / "learn.tsv", y, x)
    (tmp_path / "learn.cd").write_text("0\tTarget\n")
    run("fit", "-f", "learn.tsv", "--cd", "learn.cd", "--loss-function", loss, "-i", "10", "-m", "model.bin",
        "--logging-level", "Silent", cwd=tmp_path)
    ours, model = class_params(tmp_path / "model.bin")
    theirs = catboost_classes_from_file(tmp_path, tmp_path / "learn.tsv", tmp_path / "learn.cd", loss)
    for key in ("class_label_type", "class_names", "class_to_label"):
        assert ours[key] == theirs[key], key
    assert json.load(open(str(tmp_path / "model.bin") + ".cb.json"))["model_info"]["params"]["flat_params"][
        "class_names"] == theirs["class_names"]
    # calc's Class column prints the labels as written, as CatBoost predicts them.
    run("calc", "-m", "model.bin", "--input-path", "learn.tsv", "--cd", "learn.cd", "-o", "out.tsv",
        "--prediction-type", "Class", cwd=tmp_path)
    header, rows = read_table(tmp_path / "out.tsv")
    expected = np.asarray(model.predict(catboost.Pool(str(tmp_path / "learn.tsv"),
                                                      column_description=str(tmp_path / "learn.cd")),
                                        prediction_type="Class")).reshape(-1)
    assert [r[1] for r in rows] == [str(v) for v in expected]


def test_class_names_flag_orders_the_classes_and_refuses_others(tmp_path):
    x = features(3)
    y = ["b" if v > 0 else "a" for v in x[:, 0]]
    write_rows(tmp_path / "learn.tsv", y, x)
    run("fit", "-f", "learn.tsv", "--loss-function", "Logloss", "--class-names", "b,a", "-i", "5", "-m", "model.bin",
        "--logging-level", "Silent", cwd=tmp_path)
    ours, _ = class_params(tmp_path / "model.bin")
    assert ours["class_names"] == ["b", "a"] and ours["class_label_type"] == "String"
    r = run("fit", "-f", "learn.tsv", "--loss-function", "Logloss", "--class-names", "a,c", "-i", "5",
            "--logging-level", "Silent", cwd=tmp_path, expect=2)
    assert "'b'" in r.stderr and "class names" in r.stderr


def test_cd_types_libsvm_and_stdout(tmp_path):
    x = features(4, n=120)
    y = (x[:, 0] + x[:, 1] > 0).astype(int)
    extra = [(f"doc{i}", i // 10, 1000 + i, f"aux{i}") for i in range(len(x))]
    write_rows(tmp_path / "learn.tsv", y, x, extra)
    (tmp_path / "learn.cd").write_text("0\tTarget\n4\tDocId\n5\tGroupId\n6\tTimestamp\n7\tAuxiliary\tnote\n")
    run("fit", "-f", "learn.tsv", "--cd", "learn.cd", "--loss-function", "Logloss", "-i", "8", "-m", "model.bin",
        "--logging-level", "Silent", cwd=tmp_path)
    r = run("calc", "-m", "model.bin", "--input-path", "learn.tsv", "--cd", "learn.cd", "-o", "stdout",
            "--output-columns", "SampleId,Probability,Label,GroupId,Timestamp,note,#7:again", cwd=tmp_path)
    header, *rows = [line.split("\t") for line in r.stdout.splitlines()]
    assert header == ["SampleId", "Probability", "Label", "GroupId", "Timestamp", "note", "again"]
    assert [row[0] for row in rows] == [e[0] for e in extra]
    assert [row[2:] for row in rows] == [[str(yi), str(e[1]), str(e[2]), e[3], e[3]] for yi, e in zip(y, extra)]
    model = catboost.CatBoost()
    model.load_model(str(tmp_path / "model.bin"))
    expected = model.predict(catboost.Pool(str(tmp_path / "learn.tsv"), column_description=str(tmp_path / "learn.cd")),
                             prediction_type="Probability")[:, 1]
    np.testing.assert_allclose([float(row[1]) for row in rows], expected, rtol=1e-12)
    assert "calc:" in r.stderr  # the tool's own lines go to stderr when the table goes to stdout

    # The same data as a libsvm pool: the same model, the same predictions in CatBoost.
    with open(tmp_path / "learn.svm", "w") as f:
        for yi, row in zip(y, x):
            f.write(f"{yi} " + " ".join(f"{j + 1}:{float(v)!r}" for j, v in enumerate(row) if v != 0) + "\n")
    run("fit", "-f", "libsvm://learn.svm", "--loss-function", "Logloss", "-i", "8", "-m", "svm.bin",
        "--logging-level", "Silent", cwd=tmp_path)
    run("calc", "-m", "svm.bin", "--input-path", "libsvm://learn.svm", "-o", "svm.tsv", "--prediction-type",
        "RawFormulaVal", cwd=tmp_path)
    _, rows = read_table(tmp_path / "svm.tsv")
    model.load_model(str(tmp_path / "svm.bin"))
    expected = model.predict(catboost.Pool("libsvm://" + str(tmp_path / "learn.svm")), prediction_type="RawFormulaVal")
    np.testing.assert_array_equal([float(row[1]) for row in rows], expected)


def test_text_column_is_not_implemented(tmp_path):
    write_rows(tmp_path / "learn.tsv", [0, 1], features(5, n=2), [("a b",), ("c d",)])
    (tmp_path / "learn.cd").write_text("0\tLabel\n4\tText\tbody\n")
    r = run("fit", "-f", "learn.tsv", "--cd", "learn.cd", cwd=tmp_path, expect=3)
    assert "text features are not implemented" in r.stderr and "body" in r.stderr


def test_tree_ranges_and_eval_file(tmp_path):
    x = features(6)
    y = x[:, 0] * 2 + x[:, 1]
    write_rows(tmp_path / "learn.tsv", [repr(float(v)) for v in y], x)
    r = run("fit", "-f", "learn.tsv", "-t", "learn.tsv", "--loss-function", "RMSE", "-i", "20", "-m", "model.bin",
            "--eval-file", "eval.tsv", "--verbose", "5", "use_best_model=false", cwd=tmp_path)
    assert "Learning rate set to" in r.stdout
    assert "0:\tlearn: " in r.stdout and "\ttest: " in r.stdout and "best: " in r.stdout and "remaining: " in r.stdout
    header, rows = read_table(tmp_path / "eval.tsv")
    assert header == ["SampleId", "RawFormulaVal", "Label"]
    model = catboost.CatBoost()
    model.load_model(str(tmp_path / "model.bin"))
    pool = catboost.Pool(str(tmp_path / "learn.tsv"))
    np.testing.assert_array_equal([float(r[1]) for r in rows], model.predict(pool))

    run("calc", "-m", "model.bin", "--input-path", "learn.tsv", "-o", "range.tsv", "--ntree-start", "3",
        "--ntree-end", "11", cwd=tmp_path)
    _, rows = read_table(tmp_path / "range.tsv")
    np.testing.assert_array_equal([float(r[1]) for r in rows], model.predict(pool, ntree_start=3, ntree_end=11))

    run("calc", "-m", "model.bin", "--input-path", "learn.tsv", "-o", "staged.tsv", "--eval-period", "8",
        cwd=tmp_path)
    header, rows = read_table(tmp_path / "staged.tsv")
    assert header == ["SampleId", "RawFormulaVal:TreesCount=[0,8)", "RawFormulaVal:TreesCount=[8,16)",
                      "RawFormulaVal:TreesCount=[16,20)"]
    for k, stop in enumerate((8, 16, 20)):
        np.testing.assert_array_equal([float(r[k + 1]) for r in rows], model.predict(pool, ntree_end=stop))


def test_key_value_overrides_take_catboost_value_types(tmp_path):
    x = features(7, n=100)
    write_rows(tmp_path / "learn.tsv", (x[:, 0] > 0).astype(int), x)
    run("fit", "-f", "learn.tsv", "--loss-function", "Logloss", "-m", "model.bin", "iterations=6", "verbose=2",
        "depth=3", "use_best_model=false", "simple_ctr=Borders,Counter", "custom_metric=AUC,Accuracy",
        cwd=tmp_path)
    model = catboost.CatBoost()
    model.load_model(str(tmp_path / "model.bin"))
    assert model.tree_count_ == 6
    model.save_model(str(tmp_path / "model.json"), format="json")
    flat = json.load(open(tmp_path / "model.json"))["model_info"]["params"]["flat_params"]
    assert flat["iterations"] == 6 and flat["verbose"] == 2 and flat["use_best_model"] is False
    assert flat["simple_ctr"] == ["Borders", "Counter"] and flat["custom_metric"] == ["AUC", "Accuracy"]
