# SPDX-License-Identifier: Apache-2.0
"""Out of device memory, survived (issue #10): a context's memory budget and forced allocation
failures at every allocation site of training and prediction. Each failure must be
CBG_ERR_OUT_OF_MEMORY naming the requested bytes; afterwards the same context trains and predicts the
same results, and its device memory in use is back where it was (nothing leaked). Needs a GPU and
CuPy (skipped otherwise); the CPU part checks the API's answers on a CPU context.
"""
from __future__ import annotations

import numpy as np
import pytest

import cbgpu
from cbgpu import CBG_ERR_OUT_OF_MEMORY, CBG_ERR_UNSUPPORTED, CbgError, Context, Pool
from helpers import expect_error

PARAMS = {"iterations": 4, "depth": 4, "loss_function": "Logloss", "random_seed": 5}
ROWS, FEATURES = 4096, 6


def test_cpu_context_reports_zeros_and_refuses_injection(ctx):
    stats = ctx.memory_stats()
    assert stats == {"in_use_bytes": 0, "peak_bytes": 0, "limit_bytes": 0, "allocations": 0,
                     "failed_allocations": 0}
    with expect_error(CBG_ERR_UNSUPPORTED, "CPU context"):
        ctx.fail_allocation(1)
    ctx.reset_memory_peak()


def _data(cp):
    rng = cp.random.RandomState(3)
    X = rng.standard_normal((ROWS, FEATURES), dtype=cp.float32)
    y = (X[:, 0] + 0.5 * X[:, 1] > 0).astype(cp.float64)
    return X, y


def _train_and_predict(ctx: Context, cp, X, y):
    """One full round on `ctx`: pool, training, prediction into a CuPy array; all freed after."""
    with Pool(ctx, X, label=y) as pool:
        model = cbgpu.train(pool, PARAMS)
        try:
            out = cp.empty(model.output_shape(ROWS), dtype=cp.float64)
            model.predict(pool, out=out)
            ctx.sync()
            return model.to_bytes(), cp.asnumpy(out)
        finally:
            model.close()


def test_every_allocation_site_fails_cleanly(cp):
    X, y = _data(cp)
    with Context(0) as ctx:
        base_bytes, base_pred = _train_and_predict(ctx, cp, X, y)
        start = ctx.memory_stats()
        _train_and_predict(ctx, cp, X, y)
        sites = ctx.memory_stats()["allocations"] - start["allocations"]
        assert sites > 0
        for n in range(1, sites + 1):
            ctx.fail_allocation(n)
            with pytest.raises(CbgError) as info:
                _train_and_predict(ctx, cp, X, y)
            err = info.value
            assert err.code == CBG_ERR_OUT_OF_MEMORY, f"allocation {n}/{sites}: {err}"
            assert "injected allocation failure" in err.message and "bytes asked for" in err.message
            assert ctx.memory_stats()["in_use_bytes"] == start["in_use_bytes"], f"leak after failing allocation {n}"
            model_bytes, pred = _train_and_predict(ctx, cp, X, y)  # the same context still works
            assert model_bytes == base_bytes, f"model changed after failing allocation {n}"
            np.testing.assert_array_equal(pred, base_pred)
        ctx.fail_allocation(sites + 1)  # beyond the last site: nothing fails
        assert _train_and_predict(ctx, cp, X, y)[0] == base_bytes
        ctx.fail_allocation(0)
        assert ctx.memory_stats()["failed_allocations"] == sites


def test_budget_is_exact(cp):
    X, y = _data(cp)
    with Context(0) as probe:
        probe.reset_memory_peak()
        base_bytes, _ = _train_and_predict(probe, cp, X, y)
        peak = probe.memory_stats()["peak_bytes"]
        assert probe.memory_stats()["in_use_bytes"] == 0
    with Context(0, device_memory_limit=peak) as enough:
        assert _train_and_predict(enough, cp, X, y)[0] == base_bytes
        assert enough.memory_stats()["limit_bytes"] == peak
    with Context(0, device_memory_limit=peak - 1) as tight:
        with expect_error(CBG_ERR_OUT_OF_MEMORY, "budget", "bytes asked for"):
            _train_and_predict(tight, cp, X, y)
        assert tight.memory_stats()["in_use_bytes"] == 0
        assert tight.memory_stats()["failed_allocations"] >= 1
