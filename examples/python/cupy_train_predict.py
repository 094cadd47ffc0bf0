# SPDX-License-Identifier: Apache-2.0
"""Train and predict on the GPU from CuPy arrays with the cbgpu Python package.

Nothing goes through host memory on the way: the features and labels are CuPy arrays, training
reads them where they are (DLPack, on cbgpu's stream), predictions come back as CuPy arrays on the
same device (CuPy in -> CuPy out). A host copy happens only where asked for (output_type="numpy",
into pinned memory). Run with the library on the path:

    CBGPU_LIBRARY=build/release/libcbgpu.so PYTHONPATH=python python3 examples/python/cupy_train_predict.py

Exit codes: 0 done, 1 failed, 77 no usable GPU or no CuPy (nothing to show).
"""
import sys

try:
    import cupy as cp
    cp.cuda.runtime.getDeviceCount()
except Exception as e:  # noqa: BLE001 - ImportError, or CuPy without a usable CUDA
    print(f"skipped: CuPy is not usable here ({e})")
    sys.exit(77)

import numpy as np

import cbgpu

if cbgpu.device_count() == 0:
    print("skipped: libcbgpu sees no CUDA device")
    sys.exit(77)

# A synthetic binary task, generated on the GPU.
rng = cp.random.default_rng(0)
x = rng.standard_normal((100_000, 8), dtype=cp.float32)
y = (x[:, 0] + 0.5 * x[:, 1] * x[:, 2] > 0).astype(cp.float32)
x_train, y_train, x_test, y_test = x[:80_000], y[:80_000], x[80_000:], y[80_000:]

clf = cbgpu.CatBoostClassifier(iterations=200, depth=6, learning_rate=0.2, eval_metric="AUC")
clf.fit(x_train, y_train, eval_set=(x_test, y_test))
proba = clf.predict_proba(x_test)          # CuPy [rows, 2], on the device
labels = clf.predict(x_test)               # CuPy [rows]: the classes
assert isinstance(proba, cp.ndarray) and isinstance(labels, cp.ndarray)
accuracy = float((labels == y_test).mean())
print(f"trained {clf.tree_count_} trees; test accuracy {accuracy:.4f}; "
      f"first probabilities {cp.asnumpy(proba[:3, 1]).round(4).tolist()}")

# Learning curve by stages (each stage evaluated on the GPU), and leaf indexes.
for stage, p in enumerate(clf.staged_predict_proba(x_test, eval_period=50)):
    print(f"  after {min((stage + 1) * 50, clf.tree_count_):3d} trees: accuracy "
          f"{float(((p[:, 1] > 0.5) == (y_test > 0.5)).mean()):.4f}")
leaves = clf.calc_leaf_indexes(x_test, ntree_end=3)
print(f"leaf indexes of the first 3 trees: {leaves.shape} {leaves.dtype}, row 0: {cp.asnumpy(leaves[0]).tolist()}")

# The same model from its file, with a host copy asked for explicitly (pinned memory).
clf.save_model("cupy_example.cbm")
model = cbgpu.Model.load("cupy_example.cbm")
host = model.predict(x_test, prediction_type="Probability", output_type="numpy")
assert isinstance(host, np.ndarray)
assert np.array_equal(host, cp.asnumpy(proba)), "the GPU and the reloaded model agree"
print("OK")
