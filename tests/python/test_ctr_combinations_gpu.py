# SPDX-License-Identifier: Apache-2.0
"""Feature combinations on a GPU from pageable host memory: NumPy columns through a Pool and a pandas
DataFrame through the estimator are staged to the device (as the quantizer stages floats) and the
combinations run there; the model is the host context's byte for byte, and the estimator's predictions
are the host estimator's.

Skipped where libcbgpu sees no CUDA device or pandas is missing.
"""
import numpy as np
import pytest

pd = pytest.importorskip("pandas")

import cbgpu  # noqa: E402

PARAMS = {"iterations": 40, "learning_rate": 0.1, "depth": 4, "loss_function": "Logloss", "one_hot_max_size": 2,
          "max_ctr_complexity": 2, "random_seed": 3, "verbose": False}


def _joint(n, seed):
    """A label from two categorical features jointly (no main effects), plus a numeric effect."""
    rng = np.random.RandomState(seed)
    table = np.random.RandomState(7).normal(0, 1.2, (10, 10))
    table -= table.mean(axis=0, keepdims=True)
    table -= table.mean(axis=1, keepdims=True)
    x = rng.normal(size=n).astype(np.float32)
    a, b, c = rng.randint(0, 10, n), rng.randint(0, 10, n), rng.randint(0, 30, n)
    y = (table[a, b] + 0.3 * x + 0.6 * rng.normal(size=n) > 0).astype(np.float64)
    return x, [a * 5 + 1, b * 3 - 4, c], y


def _pool(ctx, x, cats, y):
    cols = [np.ascontiguousarray(x)] + [np.ascontiguousarray(col.astype(np.int64)) for col in cats]
    return cbgpu.Pool(ctx, columns=cols, label=np.ascontiguousarray(y), cat_features=[1, 2, 3])


def test_gpu_combinations_from_host_memory_equal_the_host_model():
    if cbgpu.device_count() == 0:
        pytest.skip("libcbgpu sees no CUDA device")
    x, cats, y = _joint(3000, 11)
    with cbgpu.Context(cbgpu.CBG_DEVICE_CPU) as cpu:
        host = cbgpu.train(_pool(cpu, x, cats, y), PARAMS)
        simple = cbgpu.train(_pool(cpu, x, cats, y), {**PARAMS, "max_ctr_complexity": 1})
    assert simple.to_bytes() != host.to_bytes()  # the combinations are in the model
    with cbgpu.Context(0) as gpu:
        from_numpy = cbgpu.train(_pool(gpu, x, cats, y), PARAMS)
    assert from_numpy.to_bytes() == host.to_bytes()

    df = pd.DataFrame({"x": x, "a": cats[0], "b": cats[1], "c": cats[2]})
    on_gpu = cbgpu.CatBoostClassifier(**PARAMS, task_type="GPU", devices="0").fit(df, y, cat_features=[1, 2, 3])
    on_host = cbgpu.CatBoostClassifier(**PARAMS).fit(df, y, cat_features=[1, 2, 3])
    raw = {"prediction_type": "RawFormulaVal"}
    assert np.array_equal(on_gpu.predict(df, **raw), on_host.predict(df, **raw))
