# SPDX-License-Identifier: Apache-2.0
"""cbgpu.dask over several GPU workers (scripts/device-dask.sh --ranks N, on a machine with N GPUs):
starts a scheduler and N workers (one process and one GPU each), places rank r's rows on worker r
(every rank but the last a multiple of 4096 rows) as CuPy chunks, and checks that
  1. cbgpu.dask.train gives the single-GPU model of all rows byte for byte (an eval set and early
     stopping included; categorical columns with max_ctr_complexity 1 and 4 too), and predict keeps
     the partitions;
  2. a rank that fails (a NaN label in its rows only) makes the client raise that rank's error
     while the other ranks stop (aborted, not hung) within a minute;
  3. the peak device memory of each rank's context.
Prints one line per check and OK at the end; exits non-zero on a failure."""
import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from dask_cluster import rank_peak_mb, start_cluster, stop_cluster  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--ranks", type=int, default=2)
    parser.add_argument("--block", type=int, default=4096 * 40, help="rows of every rank but the last")
    parser.add_argument("--categorical-only", action="store_true", help="only the categorical check")
    args = parser.parse_args()
    import cupy
    import dask.array as da
    import distributed

    import cbgpu
    import cbgpu.dask as cdask

    if cupy.cuda.runtime.getDeviceCount() < args.ranks:
        print(f"dask-ranks: {args.ranks} GPUs needed: skipped")
        return 77
    procs, sched_file = start_cluster(args.ranks)
    try:
        client = distributed.Client(scheduler_file=sched_file)
        client.wait_for_workers(args.ranks, timeout=120)
        workers = sorted(client.scheduler_info()["workers"],
                         key=lambda w: client.scheduler_info()["workers"][w]["name"])
        rng = np.random.default_rng(0)
        sizes = [args.block] * (args.ranks - 1) + [args.block // 2 + 1234]
        rows = sum(sizes)
        X = rng.normal(size=(rows, 12)).astype(np.float32)
        X[::13, 2] = np.nan
        y = (X[:, 0] + 0.5 * np.nan_to_num(X[:, 2]) ** 2 + rng.normal(scale=0.3, size=rows) > 0.4).astype(np.float32)
        # The eval set split like the learn set (every rank but the last a multiple of 4096 rows), so
        # that its metric sums fold in the single-GPU order too.
        esizes = [8192] * (args.ranks - 1) + [5000]
        ex = rng.normal(size=(sum(esizes), 12)).astype(np.float32)
        ey = (ex[:, 0] > 0.4).astype(np.float32)

        def placed(a: np.ndarray, sizes_: list[int]) -> da.Array:
            """`a` in blocks of sizes_, block r as a CuPy array on worker r."""
            blocks, at = [], 0
            for r, n in enumerate(sizes_):
                part = client.scatter(a[at:at + n], workers=[workers[r]])
                on_gpu = client.submit(cupy.asarray, part, workers=[workers[r]], pure=False)
                shape = (n,) + a.shape[1:]
                blocks.append(da.from_delayed(on_gpu, shape=shape, dtype=a.dtype, meta=cupy.empty((0,) * a.ndim,
                                                                                                   dtype=a.dtype)))
                at += n
            return da.concatenate(blocks, axis=0)

        same = ok_pred = failed_ok = True
        if not args.categorical_only:
            params = {"iterations": 60, "depth": 6, "loss_function": "Logloss", "learning_rate": 0.3,
                      "early_stopping_rounds": 10, "random_seed": 3, "task_type": "GPU"}
            dx, dy = placed(X, sizes), placed(y, sizes)
            dex, dey = placed(ex, esizes), placed(ey, esizes)
            t0 = time.time()
            model = cdask.train(client, params, dx, dy, eval_set=(dex, dey), nccl_timeout_ms=120000)
            took = time.time() - t0
            # The reference: one GPU, every row in rank order, the eval set likewise.
            with cbgpu.Context(0, seed=3) as ctx:
                learn = cbgpu.Pool(ctx, cupy.asarray(X), label=cupy.asarray(y))
                test = cbgpu.Pool(ctx, cupy.asarray(ex), label=cupy.asarray(ey))
                single = cbgpu.train(learn, params, eval_set=test)
            same = model.to_bytes("cbm") == single.to_bytes("cbm")
            if not same and os.environ.get("OUT"):  # both models, for a look at what differs
                for name, m in (("dask", model), ("single", single)):
                    Path(os.environ["OUT"], f"model-{name}.json").write_bytes(m.to_bytes("json"))
            print(f"dask-ranks: {args.ranks} workers, {rows} rows: {model.tree_count} trees in {took:.1f} s; "
                  f"equal to one GPU byte for byte: {same}")
            pred = cdask.predict(client, model, dx)
            ok_pred = pred.chunks == (tuple(sizes),) and np.allclose(cupy.asnumpy(pred.compute()),
                                                                     single.predict(X).reshape(-1), rtol=1e-6)
            print(f"dask-ranks: predictions partitioned like the input and equal to one GPU's: {ok_pred}")

        # Categorical columns (integer CuPy chunks: three numeric, three categorical of 3, 10 and 40
        # values), max_ctr_complexity 1 and 4, with an eval set: every rank computes the CTRs and the
        # combinations over all rows, so the model is again the single-GPU one.
        cat_ok = True
        crows = [4096 * 10] * (args.ranks - 1) + [4096 * 5 + 777]
        ci = np.concatenate([np.round(rng.normal(size=(sum(crows) + sum(esizes), 3)) * 1000),
                             rng.integers(0, [3, 10, 40], size=(sum(crows) + sum(esizes), 3))], axis=1).astype(np.int32)
        cy = ((ci[:, 0] > 200) ^ (ci[:, 4] % 3 == 0) ^ ((ci[:, 3] + ci[:, 5]) % 4 == 1)).astype(np.float32)
        cy = np.where(rng.random(len(cy)) < 0.1, 1 - cy, cy).astype(np.float32)
        cx, cex, cyl, cey = ci[:sum(crows)], ci[sum(crows):], cy[:sum(crows)], cy[sum(crows):]
        for complexity in (1, 4):
            cparams = {"iterations": 30, "depth": 5, "loss_function": "Logloss", "learning_rate": 0.3,
                       "max_ctr_complexity": complexity, "random_seed": 3, "task_type": "GPU"}
            t0 = time.time()
            cmodel = cdask.train(client, cparams, placed(cx, crows), placed(cyl, crows),
                                 eval_set=(placed(cex, esizes), placed(cey, esizes)), cat_features=[3, 4, 5],
                                 nccl_timeout_ms=120000)
            took = time.time() - t0
            with cbgpu.Context(0, seed=3) as ctx:
                learn = cbgpu.Pool(ctx, cupy.asarray(cx), label=cupy.asarray(cyl), cat_features=[3, 4, 5])
                test = cbgpu.Pool(ctx, cupy.asarray(cex), label=cupy.asarray(cey), cat_features=[3, 4, 5])
                csingle = cbgpu.train(learn, cparams, eval_set=test)
            csame = cmodel.to_bytes("cbm") == csingle.to_bytes("cbm")
            if not csame and os.environ.get("OUT"):
                for name, m in (("dask", cmodel), ("single", csingle)):
                    Path(os.environ["OUT"], f"model-cat{complexity}-{name}.json").write_bytes(m.to_bytes("json"))
            print(f"dask-ranks: categorical, max_ctr_complexity {complexity}: {args.ranks} workers, {sum(crows)} rows: "
                  f"{cmodel.tree_count} trees in {took:.1f} s; equal to one GPU byte for byte: {csame}")
            cat_ok = cat_ok and csame

        if not args.categorical_only:
            # A rank that fails: a NaN label in the last rank's rows only.
            bad = y.copy()
            bad[-5] = np.nan
            t0 = time.time()
            message = ""
            try:
                cdask.train(client, {**params, "iterations": 5}, dx, placed(bad, sizes), nccl_timeout_ms=60000)
            except Exception as e:  # noqa: BLE001 - the check reads the message
                message = f"{type(e).__name__}: {e}"
            stopped = time.time() - t0
            failed_ok = bool(message) and "PeerFailed" not in message and stopped < 90
            print(f"dask-ranks: a failing rank: raised on the client in {stopped:.1f} s: {message[:200]!r}: "
                  f"{failed_ok}")

            # Peak device memory per rank (the library's allocations on each rank's context).
            ident = client.submit(cbgpu.nccl_unique_id, workers=[workers[0]], pure=False).result()

            parts_x = dx.to_delayed().ravel().tolist()
            parts_y = dy.to_delayed().ravel().tolist()
            peak_params = {"iterations": 5, "depth": 6, "loss_function": "Logloss"}
            peaks = client.gather([client.submit(rank_peak_mb, [client.compute(parts_x[r])],
                                                 [client.compute(parts_y[r])], peak_params, r, args.ranks, ident, 3,
                                                 workers=[workers[r]], pure=False)
                                   for r in range(args.ranks)])
            print("dask-ranks: peak device memory per rank (MB): " + ", ".join(f"{p:.1f}" for p in peaks))
        client.close()
        if not (same and ok_pred and failed_ok and cat_ok):
            return 1
        print("OK")
        return 0
    finally:
        stop_cluster(procs)


if __name__ == "__main__":
    sys.exit(main())
