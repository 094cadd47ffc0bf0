# SPDX-License-Identifier: Apache-2.0
"""cbgpu on a Dask cluster: train on a dask array and a dask dataframe, predict partition by
partition, and use the estimator. Runs on a LocalCluster here; point `Client` at your cluster (with
GPUs: one worker per GPU, e.g. dask-cuda's LocalCUDACluster, and CuPy/cuDF partitions or
task_type="GPU"). Prints OK at the end; exits 77 without dask/distributed."""
import sys

try:
    import dask.array as da
    import dask.dataframe as dd
    from distributed import Client, LocalCluster
except ImportError as e:
    print(f"dask and distributed are not installed ({e}): pip install \"dask[dataframe]\" distributed")
    sys.exit(77)

import numpy as np
import pandas as pd

import cbgpu
import cbgpu.dask


def main() -> None:
    with LocalCluster(n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        rng = np.random.default_rng(0)
        X = da.from_array(rng.standard_normal((20_000, 8)).astype(np.float32), chunks=(5_000, 8))
        y = (X[:, 0] + X[:, 1] > 0).astype(np.float32)

        # The functional API: a Model back, predictions as a dask array partitioned like X.
        model = cbgpu.dask.train(client, {"iterations": 100, "loss_function": "Logloss"}, X, y)
        proba = cbgpu.dask.predict(client, model, X, prediction_type="Probability")
        accuracy = float(((proba[:, 1] > 0.5) == (y > 0)).mean().compute())
        print(f"functional API: {model.tree_count} trees, accuracy {accuracy:.3f}, chunks {proba.chunks[0]}")

        # A dataframe with a categorical column, through the estimator.
        n = 12_000
        frame = pd.DataFrame({"x": rng.standard_normal(n).astype(np.float32),
                              "city": rng.choice(["Paris", "Rome", "Oslo"], size=n)})
        target = pd.Series((frame["x"] + (frame["city"] == "Rome") * 1.5).astype(np.float32))
        ddf, dy = dd.from_pandas(frame, npartitions=4), dd.from_pandas(target, npartitions=4)
        reg = cbgpu.dask.DaskCatBoostRegressor(iterations=100).fit(ddf, dy, cat_features=["city"])
        pred = reg.predict(ddf)  # a dask Series, one partition per input partition
        rmse = float(np.sqrt(((pred - dy) ** 2).mean().compute()))
        print(f"estimator: {pred.npartitions} partitions, RMSE {rmse:.3f}")
        assert accuracy > 0.9 and rmse < 0.5
    print("OK")


if __name__ == "__main__":
    main()
