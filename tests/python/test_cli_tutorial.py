# SPDX-License-Identifier: Apache-2.0
"""CatBoost's command-line tutorial (catboost/tutorials, cmdline_tutorial/), verbatim but for the program.

Each command of the tutorial runs on the tutorial's own files (tests/data/catboost_cmdline_tutorial) with
only `catboost` replaced by `cbgpu-bench`. Every model a command writes must load in CatBoost (the oracle)
without a warning, with get_all_params() working, and CatBoost must predict what cbgpu predicts. The binary
comes from $CBGPU_BENCH.
"""
from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

catboost = pytest.importorskip("catboost")

BENCH = os.environ.get("CBGPU_BENCH")
pytestmark = pytest.mark.skipif(not BENCH, reason="CBGPU_BENCH (the cbgpu-bench binary) is not set")
DATA = Path(__file__).resolve().parents[1] / "data" / "catboost_cmdline_tutorial"

# The tutorial's commands, in its order, as it prints them.
FIT_LOGLOSS = ("catboost fit --learn-set train.tsv --test-set test.tsv --column-description train.cd  "
               "--loss-function Logloss --iterations 1000 --learning-rate 0.03")
FIT_RMSE_CSV = ("catboost fit --learn-set train.csv --test-set test.csv --column-description train.cd "
                "--loss-function RMSE --iterations 1000 --delimiter=\",\" --has-header")
FIT_VERBOSE = ("catboost fit --learn-set train.tsv --test-set test.tsv --column-description train.cd  "
               "--loss-function Logloss --iterations 1000 --custom-loss=\"AUC,Precision,Recall\" "
               "--learning-rate 0.03 --verbose 10")
FSTR = ("catboost fstr -m model.bin --input-path train.tsv --cd train.cd --fstr-type PredictionValuesChange "
        "-o feature_strength.tsv")
CALC = ("catboost calc -m model.bin --input-path test.tsv --cd train.cd -o eval.tsv -T 4 "
        "--output-columns DocId,Probability,Target,name,profession,#3")
FIT_RSM = ("catboost fit --learn-set train.tsv --test-set test.tsv --column-description train.cd  "
           "--loss-function Logloss --rsm 0.5 --iterations 1000 --learning-rate 0.03")
FIT_PARAMS_FILE = ("catboost fit --learn-set train.tsv --test-set test.tsv --column-description train.cd "
                   "--params-file params_file.txt --iterations 1000 --learning-rate 0.03")


def run(command: str, cwd: Path) -> subprocess.CompletedProcess:
    argv = shlex.split(command)
    assert argv[0] == "catboost"
    return subprocess.run([BENCH, *argv[1:]], capture_output=True, text=True, timeout=300, cwd=cwd)


def trees_kept(stdout: str) -> int:
    """The trees the model keeps: use_best_model (CatBoost's default with a test set) shrinks it to the best
    iteration, as CatBoost reports it."""
    best = int(re.search(r"^bestIteration = (\d+)$", stdout, re.M).group(1))
    assert f"Shrink model to first {best + 1} iterations." in stdout
    return best + 1


@pytest.fixture()
def work(tmp_path):
    for f in DATA.iterdir():
        shutil.copy(f, tmp_path / f.name)
    return tmp_path


def catboost_pool(work: Path, name: str, has_header=False, delimiter="\t"):
    return catboost.Pool(str(work / name), column_description=str(work / "train.cd"), has_header=has_header,
                         delimiter=delimiter)


def check_model(work: Path, pool_file: str, has_header=False, delimiter="\t"):
    """CatBoost loads model.bin and its RawFormulaVal on `pool_file` equals cbgpu-bench calc's. Returns
    CatBoost's model."""
    theirs = catboost.CatBoost()
    theirs.load_model(str(work / "model.bin"))
    expected = theirs.predict(catboost_pool(work, pool_file, has_header, delimiter), prediction_type="RawFormulaVal")
    args = ["-m", "model.bin", "--input-path", pool_file, "--cd", "train.cd", "-o", "ours.tsv",
            "--prediction-type", "RawFormulaVal", "--delimiter", delimiter] + (["--has-header"] if has_header else [])
    r = subprocess.run([BENCH, "calc", *args], capture_output=True, text=True, timeout=120, cwd=work)
    assert r.returncode == 0, r.stderr
    lines = (work / "ours.tsv").read_text().splitlines()
    assert lines[0] == "SampleId\tRawFormulaVal"
    ours = np.array([float(line.split("\t")[1]) for line in lines[1:]])
    np.testing.assert_allclose(ours, expected, rtol=1e-12, atol=1e-15)
    return theirs


def test_train_classification(work):
    r = run(FIT_LOGLOSS, work)
    assert r.returncode == 0, r.stdout + r.stderr
    theirs = check_model(work, "test.tsv")
    assert theirs.tree_count_ == trees_kept(r.stdout)
    assert list(theirs.classes_) == ["0", "1"]  # CatBoost names classes read from a file as strings
    assert (work / "catboost_info" / "learn_error.tsv").exists()
    assert (work / "catboost_info" / "test_error.tsv").exists()


def test_train_regression_on_csv_with_header(work):
    r = run(FIT_RMSE_CSV, work)
    assert r.returncode == 0, r.stdout + r.stderr
    check_model(work, "test.csv", has_header=True, delimiter=",")


def test_train_verbose_with_metrics_then_apply(work):
    r = run(FIT_VERBOSE, work)
    assert r.returncode == 0, r.stdout + r.stderr
    header = (work / "catboost_info" / "test_error.tsv").read_text().splitlines()[0].split("\t")
    assert header == ["iter", "Logloss", "AUC", "Precision", "Recall"]
    theirs = check_model(work, "test.tsv")

    r = run(CALC, work)
    assert r.returncode == 0, r.stdout + r.stderr
    lines = (work / "eval.tsv").read_text().splitlines()
    header = lines[0].split("\t")
    rows = [line.split("\t") for line in lines[1:]]
    test_rows = [line.split("\t") for line in (work / "test.tsv").read_text().splitlines()]
    assert len(rows) == len(test_rows)
    # DocId: the row number (the .cd has no SampleId column); Probability: the probability of class 1, one
    # column, as in the tutorial's example output.
    assert header == ["DocId", "Probability", "Target", "name", "profession", "#3"]
    assert [r[0] for r in rows] == [str(i) for i in range(len(rows))]
    proba = np.array([float(r[1]) for r in rows])
    expected = theirs.predict(catboost_pool(work, "test.tsv"), prediction_type="Probability")[:, 1]
    np.testing.assert_allclose(proba, expected, rtol=1e-12)
    # Target, name, profession and #3 are the test file's columns 0, 2, 1 and 3 as written.
    assert [r[2:] for r in rows] == [[t[0], t[2], t[1], t[3]] for t in test_rows]


def test_models_load_without_warning_and_get_all_params(work):
    for command in (FIT_LOGLOSS, FIT_RMSE_CSV, FIT_VERBOSE, FIT_PARAMS_FILE):
        assert run(command.replace("1000", "20"), work).returncode == 0
        load = subprocess.run([sys.executable, "-c",
                               "import catboost, sys; m = catboost.CatBoost(); m.load_model(sys.argv[1]); "
                               "print(m.get_all_params()['loss_function'])", str(work / "model.bin")],
                              capture_output=True, text=True, timeout=120)
        assert load.returncode == 0, load.stderr
        assert "warn" not in load.stderr.lower(), load.stderr


def test_feature_importance(work):
    assert run(FIT_LOGLOSS.replace("1000", "100"), work).returncode == 0
    r = run(FSTR, work)
    assert r.returncode == 0, r.stdout + r.stderr
    assert (work / "feature_strength.tsv").read_text().strip()


def test_random_subspace_method_is_refused_as_not_implemented(work):
    # The trainer has no rsm: the flag is CatBoost's, so it exits 3 (not implemented), naming it.
    r = run(FIT_RSM, work)
    assert r.returncode == 3, r.stdout + r.stderr
    assert "--rsm" in r.stderr and "not implemented" in r.stderr
    assert not (work / "model.bin").exists()


def test_params_file_with_command_line_overrides(work):
    r = run(FIT_PARAMS_FILE, work)
    assert r.returncode == 0, r.stdout + r.stderr
    theirs = check_model(work, "test.tsv")
    assert theirs.tree_count_ == trees_kept(r.stdout)
    theirs.save_model(str(work / "model.json"), format="json")
    params = json.load(open(work / "model.json"))["model_info"]["params"]
    assert params["loss_function"]["type"] == "Logloss"  # from the params file
    assert params["flat_params"]["iterations"] == 1000 and params["flat_params"]["thread_count"] == 4
