# SPDX-License-Identifier: Apache-2.0
"""GPU training from pools in pageable host memory (NumPy): the trainer stages the label, weight,
baseline and eval columns to the device (the quantizer stages the learn features), and the model is
byte for byte the one trained from the same data in device arrays (CuPy).

Skipped where libcbgpu sees no CUDA device or neither CuPy nor a CUDA PyTorch is usable.
"""
import numpy as np
import pytest

import cbgpu


def _data(seed, rows, features=6):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(rows, features)).astype(np.float32)
    x[rng.random(size=x.shape) < 0.02] = np.nan
    y = (np.nan_to_num(x[:, 0]) - 0.5 * np.nan_to_num(x[:, 1]) + 0.3 * rng.normal(size=rows)).astype(np.float32)
    w = rng.uniform(0.5, 2.0, size=rows).astype(np.float32)
    b = (0.1 * rng.normal(size=rows)).astype(np.float32)
    return x, y, w, b


@pytest.mark.parametrize("loss", ["RMSE", "Logloss", "MultiClass"])
def test_numpy_pool_on_gpu_matches_device_arrays(to_device, loss):
    x, y, w, b = _data(7, 3000)
    xe, ye, we, _ = _data(8, 700)
    if loss == "Logloss":
        y, ye = (y > 0).astype(np.float32), (ye > 0).astype(np.float32)
    if loss == "MultiClass":
        y, ye = np.digitize(y, [-0.5, 0.5]).astype(np.float32), np.digitize(ye, [-0.5, 0.5]).astype(np.float32)
    base = {"baseline": b} if loss != "MultiClass" else {}
    params = {"loss_function": loss, "iterations": 25, "depth": 5, "verbose": False, "random_seed": 3}
    strided = np.empty(2 * len(y), np.float32)
    strided[::2] = y
    with cbgpu.Context(0) as g:
        host = cbgpu.train(cbgpu.Pool(g, x, label=strided[::2], weight=w, **base), params,
                           eval_set=cbgpu.Pool(g, xe, label=ye, weight=we))
        d = to_device
        dev_base = {k: d(v) for k, v in base.items()}
        dev = cbgpu.train(cbgpu.Pool(g, d(x), label=d(y), weight=d(w), **dev_base),
                          params, eval_set=cbgpu.Pool(g, d(xe), label=d(ye), weight=d(we)))
        assert host.to_bytes() == dev.to_bytes()


def test_numpy_categorical_pool_on_gpu_trains():
    if cbgpu.device_count() == 0:
        pytest.skip("libcbgpu sees no CUDA device")
    rng = np.random.default_rng(5)
    rows = 2000
    x = rng.normal(size=(rows, 3)).astype(np.float32)
    c = rng.integers(0, 12, size=rows).astype(np.int32)
    y = ((c % 3 == 0) ^ (x[:, 0] > 0)).astype(np.float32)
    params = {"loss_function": "Logloss", "iterations": 10, "depth": 4, "verbose": False}
    with cbgpu.Context(0) as g:
        pool = cbgpu.Pool(g, columns=[x[:, 0].copy(), x[:, 1].copy(), c, x[:, 2].copy()], label=y, cat_features=[2])
        model = cbgpu.train(pool, params)
        assert len(model.to_bytes()) > 0


def test_class_names_on_gpu_host_and_device_labels_agree(to_device):
    # 40 000 rows: device labels come back in several pieces within the strict-mode limit.
    x, y, _, _ = _data(9, 40000, features=4)
    names = np.array([3.0, 5.0, 9.0], np.float32)
    labels = names[np.digitize(y, [-0.5, 0.5])]
    params = {"loss_function": "MultiClass", "iterations": 8, "depth": 4, "verbose": False,
              "class_names": [3, 5, 9]}
    with cbgpu.Context(0) as g:
        host = cbgpu.train(cbgpu.Pool(g, x, label=labels), params)
        dev = cbgpu.train(cbgpu.Pool(g, to_device(x), label=to_device(labels)), params)
        assert host.to_bytes() == dev.to_bytes()
        assert host.info_value("class_params") == dev.info_value("class_params")
