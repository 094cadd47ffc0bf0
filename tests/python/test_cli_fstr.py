# SPDX-License-Identifier: Apache-2.0
"""`cbgpu-bench fstr` against the catboost package's get_feature_importance: CatBoost's flags
(-m, --input-path, --cd, -o, --fstr-type) and output formats ("<importance>\\t<feature>" lines by
descending importance; "<score>\\t<feature>\\t<feature>" for Interaction; one tab-separated row per
object for ShapValues), values within 1e-9. The binary comes from $CBGPU_BENCH (CTest sets it)."""
from __future__ import annotations

import os
import subprocess

import numpy as np
import pytest

catboost = pytest.importorskip("catboost")
pd = pytest.importorskip("pandas")

BENCH = os.environ.get("CBGPU_BENCH")
pytestmark = pytest.mark.skipif(not BENCH, reason="CBGPU_BENCH (the cbgpu-bench binary) is not set")

NAMES = ["num0", "city", "num1", "color"]


def make_frame(seed: int, n: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"num0": rng.normal(size=n).astype(np.float32),
                         "city": [f"c{i}" for i in rng.integers(0, 9, n)],
                         "num1": rng.normal(size=n).astype(np.float32),
                         "color": [("red", "blue")[i] for i in rng.integers(0, 2, n)]})


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("fstr")
    df = make_frame(1, 400)
    s = df["num0"].to_numpy() + (df["city"].str[1:].astype(int) % 3) + 0.5 * (df["color"] == "red") * df["num1"]
    y = (s > np.median(s)).astype(int)
    model = catboost.CatBoost(dict(loss_function="Logloss", iterations=20, depth=4, verbose=0, thread_count=1,
                                   random_seed=0, allow_writing_files=False, max_ctr_complexity=2))
    model.fit(catboost.Pool(df, y, cat_features=["city", "color"]))
    model.save_model(str(tmp / "model.cbm"))
    with open(tmp / "data.tsv", "w", encoding="utf-8") as f:
        for label, row in zip(y, df.itertuples(index=False)):
            f.write(f"{label}\t{repr(float(np.float32(row.num0)))}\t{row.city}\t{repr(float(np.float32(row.num1)))}"
                    f"\t{row.color}\n")
    (tmp / "data.cd").write_text("0\tLabel\n1\tNum\tnum0\n2\tCateg\tcity\n3\tNum\tnum1\n4\tCateg\tcolor\n")
    return tmp, model, catboost.Pool(df, y, cat_features=["city", "color"])


def fstr(tmp, kind, *extra):
    out = tmp / f"{kind}.tsv"
    r = subprocess.run([BENCH, "fstr", "-m", str(tmp / "model.cbm"), "--input-path", str(tmp / "data.tsv"),
                        "--cd", str(tmp / "data.cd"), "-o", str(out), "--fstr-type", kind, *extra],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    return [line.split("\t") for line in out.read_text().splitlines()]


@pytest.mark.parametrize("kind", ["PredictionValuesChange", "LossFunctionChange", "FeatureImportance"])
def test_regular_importances(files, kind):
    tmp, model, pool = files
    rows = fstr(tmp, kind)
    if kind == "LossFunctionChange":
        expected = model.get_feature_importance(pool, type=kind)
    else:  # the model's leaf weights, as CatBoost's CLI uses them when the model has them
        expected = model.get_feature_importance(type="PredictionValuesChange")
    assert sorted(name for _, name in rows) == sorted(NAMES)
    scores = [float(s) for s, _ in rows]
    assert scores == sorted(scores, reverse=True)
    for score, name in rows:
        assert float(score) == pytest.approx(expected[NAMES.index(name)], rel=1e-9, abs=1e-9), name


def test_interaction(files):
    tmp, model, _ = files
    rows = fstr(tmp, "Interaction")
    expected = {(NAMES[int(a)], NAMES[int(b)]): s for a, b, s in model.get_feature_importance(type="Interaction")}
    got = {(a, b): float(s) for s, a, b in rows}
    assert got.keys() == expected.keys()
    for pair, score in expected.items():
        assert got[pair] == pytest.approx(score, rel=1e-9, abs=1e-9)


def test_shap_values(files):
    tmp, model, pool = files
    got = np.array(fstr(tmp, "ShapValues"), dtype=np.float64)
    np.testing.assert_allclose(got, model.get_feature_importance(pool, type="ShapValues"), rtol=1e-9, atol=1e-9)


def test_bad_requests_exit_with_catboosts_codes(files):
    tmp, _, _ = files
    r = subprocess.run([BENCH, "fstr", "-m", str(tmp / "model.cbm"), "--fstr-type", "ShapValues"],
                       capture_output=True, text=True)
    assert r.returncode == 2 and "--input-path" in r.stderr
    r = subprocess.run([BENCH, "fstr", "-m", str(tmp / "model.cbm"), "--fstr-type", "InternalInteraction"],
                       capture_output=True, text=True)
    assert r.returncode == 3 and "not implemented" in r.stderr
    r = subprocess.run([BENCH, "fstr", "-m", str(tmp / "model.cbm"), "--fstr-type", "Nonsense"],
                       capture_output=True, text=True)
    assert r.returncode == 2
