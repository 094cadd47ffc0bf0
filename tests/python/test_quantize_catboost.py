# SPDX-License-Identifier: Apache-2.0
"""Quantizer parity with CatBoost itself: borders bit for bit (catboost.Pool.quantize, then
save_quantization_borders), and bins by CatBoost's rule (borders strictly below the value; NaN to
bin 0 or, with Max, the last bin), on a corpus of generated features.

The host reference runs here (CPU context); the GPU equals it bit for bit (tests/unit, [gpu]) and
test_gpu_quantize_equals_host below checks the same through the C ABI when a GPU is visible.
"""
import ctypes
import os
import tempfile

import numpy as np
import pytest

import cbgpu
from cbgpu import CBG_DEVICE_CPU, CBG_ERR_BAD_DATA, Context, Pool, Quantized
from helpers import expect_error

try:
    import catboost
except ImportError:  # the GPU machines have no catboost: only the GPU == host test runs there
    catboost = None


def catboost_borders(x, **kw):
    """{feature: (float32 borders, nan_mode text or None)} from CatBoost's own quantization."""
    if catboost is None:
        pytest.skip("the catboost package is not installed")
    pool = catboost.Pool(x)
    pool.quantize(**kw)
    fd, path = tempfile.mkstemp(suffix=".tsv")
    os.close(fd)
    try:
        pool.save_quantization_borders(path)
        out = {}
        with open(path) as f:
            for line in f:
                parts = line.rstrip("\n").split("\t")
                out.setdefault(int(parts[0]), []).append(
                    (np.float32(float(parts[1])), parts[2] if len(parts) > 2 else None))
    finally:
        os.unlink(path)
    return {k: (np.array([b for b, _ in v], dtype=np.float32), v[0][1]) for k, v in out.items()}


def corpus(n, seed):
    """Columns of varied shapes: ties, long runs, constants, two-valued, heavy tails, integers as
    floats, +-0.0, NaNs, tiny value counts."""
    rng = np.random.default_rng(seed)
    nan = np.float32("nan")
    cols = [
        rng.normal(size=n),                                   # continuous
        rng.integers(0, 5, size=n),                           # few integers
        rng.integers(0, 1000, size=n),                        # many integers as floats
        np.round(rng.normal(size=n), 1),                      # long runs of ties
        np.exp(rng.normal(size=n) * 4),                       # heavy tail
        -np.exp(rng.normal(size=n) * 6) * 1e-30,              # tiny negatives
        np.full(n, 3.25),                                     # constant
        np.where(rng.random(n) < 0.01, 1.0, 0.0),             # two-valued, rare ones
        np.where(rng.random(n) < 0.5, -0.0, 0.0) + (rng.random(n) < 0.3),  # +-0.0 and 1
        np.where(rng.random(n) < 0.2, nan, rng.normal(size=n)),  # NaNs
        np.where(rng.random(n) < 0.9, 0.0, rng.standard_cauchy(size=n)),  # mostly zero, Cauchy
        rng.standard_t(1.5, size=n) * 1e6,                    # heavy tails both sides
        (np.arange(n) % 7).astype(float),                     # periodic ties, equal-size bins
        np.arange(n, dtype=float),                            # all distinct, equal-size bins
    ]
    return np.stack(cols, axis=1).astype(np.float32)


def ours(x, seed=0, **kw):
    with Context(CBG_DEVICE_CPU, seed=seed) as ctx, Pool(ctx, np.asfortranarray(x)) as pool:
        with Quantized(pool, **kw) as q:
            return ({f: (np.array(q.borders(f), dtype=np.float32), q.nan_mode(f))
                     for f in range(x.shape[1])},
                    {f: np.frombuffer(q.bins(f), dtype=np.uint8) for f in range(x.shape[1])})


def expected_bins(values, borders, mode):
    bins = np.searchsorted(borders, values, side="left").astype(np.int64)
    bins[np.isnan(values)] = len(borders) if mode == "Max" else 0
    return bins


def compare(x, kw, seed=0, catboost_x=None, catboost_kw=None):
    """Our borders for x (options kw) equal CatBoost's for catboost_x (default x), bit for bit,
    and our bins follow CatBoost's rule with them."""
    cb_kw = {k: v for k, v in kw.items() if k not in ("subset_rule", "max_subset_size")}
    cb_kw.update(catboost_kw or {})
    if "per_feature" in cb_kw:
        per = cb_kw.pop("per_feature")
        cb_kw["per_float_feature_quantization"] = [
            f"{f}:" + ",".join(f"{k}={v}" for k, v in o.items()) for f, o in per.items()]
    theirs = catboost_borders(x if catboost_x is None else catboost_x, random_seed=seed, **cb_kw)
    mine, bins = ours(x, seed=seed, **kw)
    for f in range(x.shape[1]):
        expect, _ = theirs.get(f, (np.zeros(0, np.float32), None))
        got, mode = mine[f]
        assert got.view(np.uint32).tolist() == expect.view(np.uint32).tolist() or (
            got.tolist() == expect.tolist() and len(got) == len(expect)), (
            f"feature {f} {kw}: {len(got)} borders vs CatBoost's {len(expect)}; first difference "
            f"{next((i, a, b) for i, (a, b) in enumerate(zip(got, expect)) if a != b) if len(got) == len(expect) else ''}")
        np.testing.assert_array_equal(bins[f], expected_bins(x[:, f], got, mode))


@pytest.mark.parametrize("n", [2, 3, 7, 64, 1000, 4097])  # n = 1: CatBoost refuses all-constant data
@pytest.mark.parametrize("border_count", [1, 2, 15, 128, 254, 255])
def test_borders_match_catboost_small(n, border_count):
    x = corpus(n, seed=n * 31 + border_count)
    compare(x, dict(border_count=border_count))


@pytest.mark.parametrize("nan_mode", ["Min", "Max"])
@pytest.mark.parametrize("border_count", [1, 5, 128])
def test_nan_modes_match_catboost(nan_mode, border_count):
    x = corpus(3000, seed=border_count)
    compare(x, dict(border_count=border_count, nan_mode=nan_mode))


def test_all_nan_and_single_value_features():
    x = np.stack([np.full(50, np.nan), np.r_[np.full(49, np.nan), 1.0], np.r_[np.full(49, 2.0), np.nan]],
                 axis=1).astype(np.float32)
    for mode in ("Min", "Max"):
        compare(x, dict(border_count=16, nan_mode=mode))


def test_forbidden_without_nans_matches_and_with_nans_fails():
    x = corpus(500, seed=3)
    compare(np.delete(x, 9, axis=1), dict(border_count=64, nan_mode="Forbidden"))
    with pytest.raises(Exception):
        catboost_borders(x, border_count=64, nan_mode="Forbidden")
    with Context(CBG_DEVICE_CPU) as ctx, Pool(ctx, np.asfortranarray(x)) as pool:
        with expect_error(CBG_ERR_BAD_DATA, "feature 9", "Forbidden"):
            Quantized(pool, border_count=64, nan_mode="Forbidden")


def test_per_feature_overrides_match_catboost():
    x = corpus(2000, seed=8)
    per = {0: {"border_count": 7}, 9: {"nan_mode": "Max"}, 13: {"border_count": 255}}
    compare(x, dict(border_count=32, per_feature=per))


@pytest.mark.parametrize("n,seed", [(230000, 0), (300000, 7)])
def test_sampled_subset_matches_catboost(n, seed):
    """More than 200 000 rows: CatBoost builds borders from a seeded subset of 200 000 rows."""
    rng = np.random.default_rng(n)
    x = np.stack([rng.normal(size=n), rng.integers(0, 20000, size=n),
                  np.where(rng.random(n) < 0.1, np.nan, rng.exponential(size=n))],
                 axis=1).astype(np.float32)
    compare(x, dict(border_count=128), seed=seed)
    compare(x, dict(border_count=254, nan_mode="Max"), seed=seed)


def test_sampled_subset_set_branch_matches_catboost():
    """n > k * log2(k) (about 3.52M): the subset is drawn by rejection into a set."""
    n = 3_600_000
    rng = np.random.default_rng(1)
    x = rng.normal(size=(n, 1)).astype(np.float32)
    compare(x, dict(border_count=128))


OTHER_TYPES = ["GreedyMinEntropy", "Median", "Uniform", "UniformAndQuantiles", "MinEntropy", "MaxLogSum"]


@pytest.mark.parametrize("border_type", OTHER_TYPES)
@pytest.mark.parametrize("n,border_count", [(2, 255), (3, 1), (7, 15), (64, 2), (1000, 128),
                                            (4097, 255), (4097, 1)])
def test_other_border_types_match_catboost(border_type, n, border_count):
    """Every border type on the corpus: ties, runs, constants, +-0.0, NaNs, heavy tails, tiny n."""
    x = corpus(n, seed=n * 7 + border_count)
    compare(x, dict(border_count=border_count, feature_border_type=border_type))


@pytest.mark.parametrize("border_type", OTHER_TYPES)
def test_other_border_types_nan_max_match_catboost(border_type):
    x = corpus(2000, seed=17)
    compare(x, dict(border_count=32, nan_mode="Max", feature_border_type=border_type))


def test_per_feature_border_types_match_catboost():
    x = corpus(3000, seed=23)
    per = {f: {"border_type": t} for f, t in zip((0, 3, 4, 9, 11, 13), OTHER_TYPES)}
    per[4]["border_count"] = 9
    per[9]["nan_mode"] = "Max"
    compare(x, dict(border_count=64, per_feature=per))


@pytest.mark.parametrize("border_type", ["GreedyMinEntropy", "Median", "UniformAndQuantiles", "MaxLogSum"])
def test_other_border_types_sampled_subset_match_catboost(border_type):
    """More than 200 000 rows: the same seeded subset feeds every border type."""
    n = 230000
    rng = np.random.default_rng(3)
    x = np.stack([rng.normal(size=n), rng.integers(0, 20000, size=n),
                  np.where(rng.random(n) < 0.1, np.nan, rng.exponential(size=n))],
                 axis=1).astype(np.float32)
    compare(x, dict(border_count=32, feature_border_type=border_type), seed=5)


@pytest.mark.parametrize("border_type", ["GreedyLogSum", "Median", "MinEntropy"])
def test_first_rows_subset_rule(border_type):
    """subset_rule="first_rows": the borders are CatBoost's borders of the first max_subset_size
    rows (what CatBoost builds them from after it shuffled the learn set); every row is binned."""
    x = corpus(3000, seed=29)
    compare(x, dict(border_count=64, feature_border_type=border_type, max_subset_size=1000,
                    subset_rule="first_rows"), catboost_x=x[:1000])
    # The default rule draws another subset (CatBoost's seeded draw): other borders.
    drawn, _ = ours(x, border_count=64, feature_border_type=border_type, max_subset_size=1000)
    first, _ = ours(x, border_count=64, feature_border_type=border_type, max_subset_size=1000,
                    subset_rule="first_rows")
    assert any(drawn[f][0].tolist() != first[f][0].tolist() for f in range(x.shape[1]))


def test_bad_border_type_and_subset_rule():
    x = corpus(100, seed=1)
    capi = cbgpu._capi
    with Context(CBG_DEVICE_CPU) as ctx, Pool(ctx, np.asfortranarray(x)) as pool:
        desc = capi.cbg_quantize_desc_t()
        capi._check(capi.lib.cbg_quantize_desc_init(ctypes.byref(desc)))
        assert desc.subset_rule == capi.CBG_SUBSET_SAMPLED and not desc.override_border_types
        handle = ctypes.c_void_p()
        for field, value in (("border_type", 7), ("border_type", -1), ("subset_rule", 2)):
            bad = capi.cbg_quantize_desc_t.from_buffer_copy(desc)
            setattr(bad, field, value)
            status = capi.lib.cbg_quantize_pool(pool.handle, ctypes.byref(bad), ctypes.byref(handle))
            assert status == cbgpu.CBG_ERR_INVALID_ARGUMENT, (field, value)
            assert field in cbgpu.last_error()
        over = capi.cbg_quantize_desc_t.from_buffer_copy(desc)
        feats = (ctypes.c_int64 * 1)(2)
        counts = (ctypes.c_int32 * 1)(0)
        modes = (ctypes.c_int32 * 1)(-1)
        types = (ctypes.c_int32 * 1)(9)
        over.n_overrides = 1
        over.override_features = feats
        over.override_border_counts = counts
        over.override_nan_modes = modes
        over.override_border_types = types
        status = capi.lib.cbg_quantize_pool(pool.handle, ctypes.byref(over), ctypes.byref(handle))
        assert status == cbgpu.CBG_ERR_INVALID_ARGUMENT
        assert "feature 2" in cbgpu.last_error() and "border type" in cbgpu.last_error()


def test_gpu_host_input_equals_host():
    """Pageable numpy input on a GPU context: staged through pinned memory chunk by chunk; the
    result equals the host reference (skips without GPU)."""
    if cbgpu.device_count() == 0:
        pytest.skip("libcbgpu sees no CUDA device")
    x = corpus(250000, seed=6)
    for layout in (np.asfortranarray, np.ascontiguousarray):
        for kw in (dict(border_count=200), dict(border_count=32, feature_border_type="Median")):
            with Context(CBG_DEVICE_CPU) as hctx, Pool(hctx, layout(x)) as hp, Quantized(hp, **kw) as hq:
                with Context(0) as gctx, Pool(gctx, layout(x)) as gp, Quantized(gp, **kw) as gq:
                    for f in range(x.shape[1]):
                        assert np.array(gq.borders(f), np.float32).tobytes() == \
                            np.array(hq.borders(f), np.float32).tobytes()
                        assert gq.nan_mode(f) == hq.nan_mode(f)
                        assert gq.bins(f) == hq.bins(f)


def test_gpu_quantize_equals_host(cp):
    """Through the C ABI: CuPy input on the GPU against the host reference (skips without GPU or CuPy)."""
    x = corpus(250000, seed=5)
    with Context(CBG_DEVICE_CPU) as hctx, Pool(hctx, np.asfortranarray(x)) as hp, \
            Quantized(hp, border_count=200) as hq:
        with Context(0) as gctx, Pool(gctx, cp.asarray(x)) as gp, Quantized(gp, border_count=200) as gq:
            for f in range(x.shape[1]):
                assert np.array(gq.borders(f), np.float32).tobytes() == \
                    np.array(hq.borders(f), np.float32).tobytes()
                assert gq.nan_mode(f) == hq.nan_mode(f)
                assert gq.bins(f) == hq.bins(f)
