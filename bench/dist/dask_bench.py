# SPDX-License-Identifier: Apache-2.0
"""cbgpu.dask on one and several GPU workers of this machine: training time, peak device memory per
worker and prediction time on a Higgs-shaped set (28 float features, Logloss).

    PYTHONPATH=python:<dask site> python3 bench/dist/dask_bench.py --ranks 2 --rows 10500000

Starts a scheduler and --ranks workers (one GPU each, scripts/dask_cluster.py). Every worker makes
its own rows on its GPU (block r from seed r; every block but the last a multiple of 4096 rows, so
that the several-worker model can equal the one-worker model byte for byte). Then, for one worker
(every block on worker 0) and for all workers:
  - cbgpu.dask.train wall time at two iteration counts (after a short warm-up training; --repeat
    trainings of each, the fastest kept); ms per iteration from their difference;
  - the peak device memory of each rank's context over a training of the larger count (the library's
    allocations; the data's CuPy arrays are not counted);
  - cbgpu.dask.predict over the learn rows (wall time, the result computed);
  - whether the one-worker and several-worker models are equal byte for byte.
Prints one line per measurement; --json FILE also writes them.
"""
import argparse
import json
import re
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
from dask_cluster import rank_peak_mb, start_cluster, stop_cluster  # noqa: E402

FEATURES = 28


def make_block(seed: int, rows: int):
    """A Higgs-shaped block on this worker's GPU: 28 normal features, a label from a few of them."""
    import cupy

    rng = cupy.random.default_rng(seed)
    x = rng.standard_normal((rows, FEATURES), dtype=cupy.float32)
    signal = x[:, 0] - 0.6 * x[:, 1] * x[:, 2] + 0.4 * cupy.tanh(x[:, 3]) + 0.3 * rng.standard_normal(rows)
    return x, (signal > 0).astype(cupy.float32)


def in_training_seconds(path: Path) -> dict:
    """Iteration -> seconds since the training started, from a train_dir's catboost_training.json."""
    text = path.read_text() if path.exists() else ""
    return {int(i): float(t) for i, t in re.findall(r'"iteration":(\d+),"passed_time":([0-9.eE+-]+)', text)}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--ranks", type=int, default=2)
    parser.add_argument("--rows", type=int, default=10_500_000)
    parser.add_argument("--iterations", type=int, nargs=2, default=[100, 500])
    parser.add_argument("--repeat", type=int, default=3,
                        help="trainings of each count; the fastest counts (a training's set-up varies by tenths of a "
                             "second, as much as 400 iterations' difference)")
    parser.add_argument("--json", help="also write the results here")
    args = parser.parse_args()
    import cupy
    import dask.array as da
    import distributed

    import cbgpu
    import cbgpu.dask as cdask

    if cupy.cuda.runtime.getDeviceCount() < args.ranks:
        print(f"dask-bench: {args.ranks} GPUs needed: skipped")
        return 77
    block = (args.rows // args.ranks) // 4096 * 4096
    sizes = [block] * (args.ranks - 1) + [args.rows - block * (args.ranks - 1)]
    params = {"depth": 6, "loss_function": "Logloss", "learning_rate": 0.1, "border_count": 128,
              "random_seed": 0, "task_type": "GPU", "verbose": False}
    results = {"rows": args.rows, "features": FEATURES, "ranks": args.ranks, "sizes": sizes, "runs": {}}
    procs, sched_file = start_cluster(args.ranks)
    try:
        client = distributed.Client(scheduler_file=sched_file)
        client.wait_for_workers(args.ranks, timeout=120)
        info = client.scheduler_info()["workers"]
        workers = sorted(info, key=lambda w: info[w]["name"])
        models = {}
        for used in sorted({1, args.ranks}):
            # Block r on worker r (several workers) or on worker 0 (one worker).
            placed = [client.submit(make_block, r, n, workers=[workers[r if used > 1 else 0]], pure=False)
                      for r, n in enumerate(sizes)]
            distributed.wait(placed)
            meta = cupy.empty((0,), dtype=cupy.float32)
            dx = da.concatenate([da.from_delayed(client.submit(lambda b: b[0], f, pure=False), (n, FEATURES),
                                                 cupy.float32, meta=meta.reshape(0, 0)) for f, n in zip(placed, sizes)])
            dy = da.concatenate([da.from_delayed(client.submit(lambda b: b[1], f, pure=False), (n,), cupy.float32,
                                                 meta=meta) for f, n in zip(placed, sizes)])
            dx, dy = dx.persist(), dy.persist()
            distributed.wait([dx, dy])
            run = {}
            seconds = []
            # A first short training warms each worker (CUDA context, NCCL communicator, kernels).
            cdask.train(client, {**params, "iterations": 5}, dx, dy).close()
            for iterations in args.iterations:
                tries = []
                for _ in range(max(1, args.repeat)):
                    t0 = time.perf_counter()
                    model = cdask.train(client, {**params, "iterations": iterations}, dx, dy)
                    tries.append(time.perf_counter() - t0)
                seconds.append(min(tries))
                run[f"train_s_{iterations}"] = [round(t, 3) for t in tries]
            extra = args.iterations[1] - args.iterations[0]
            run["ms_per_iteration"] = round(1000 * (seconds[1] - seconds[0]) / extra, 3)
            # Inside one training: the wall time the loop logs per iteration (train_dir's
            # catboost_training.json, written by the ranks on this host), free of the set-up's spread.
            with tempfile.TemporaryDirectory() as train_dir:
                cdask.train(client, {**params, "iterations": args.iterations[1], "train_dir": train_dir}, dx, dy).close()
                passed = in_training_seconds(Path(train_dir) / "catboost_training.json")
            lo, hi = args.iterations[0] - 1, args.iterations[1] - 1
            if lo in passed and hi in passed:
                run["ms_per_iteration_in_training"] = round(1000 * (passed[hi] - passed[lo]) / extra, 3)
            models[used] = model.to_bytes("cbm")
            t0 = time.perf_counter()
            pred = cdask.predict(client, model, dx).persist()
            distributed.wait(pred)
            run["predict_s"] = round(time.perf_counter() - t0, 3)
            run["predict_chunks_like_input"] = pred.chunks[0] == dx.chunks[0]
            ident = client.submit(cbgpu.nccl_unique_id, workers=[workers[0]], pure=False).result() if used > 1 else None
            px, py = dx.to_delayed().ravel().tolist(), dy.to_delayed().ravel().tolist()
            owned = [[r] for r in range(used)] if used > 1 else [list(range(len(sizes)))]
            peaks = client.gather([client.submit(rank_peak_mb, [client.compute(px[b]) for b in blocks],
                                                 [client.compute(py[b]) for b in blocks],
                                                 {**params, "iterations": args.iterations[1]}, r, used, ident,
                                                 workers=[workers[r]], pure=False)
                                   for r, blocks in enumerate(owned)])
            run["peak_mb_per_worker"] = [round(p, 1) for p in peaks]
            results["runs"][str(used)] = run
            print(f"dask-bench: {args.rows} x {FEATURES}, {used} worker(s): {json.dumps(run)}", flush=True)
            del dx, dy, pred, placed
        if args.ranks > 1:
            results["several_equal_one_byte_for_byte"] = models[1] == models[args.ranks]
            inside = [results["runs"][k].get("ms_per_iteration_in_training") for k in ("1", str(args.ranks))]
            if all(inside):
                print(f"dask-bench: {args.ranks} workers against one inside the training: "
                      f"{round(inside[0] / inside[1], 3)}x per iteration", flush=True)
            one, many = results["runs"]["1"]["ms_per_iteration"], results["runs"][str(args.ranks)]["ms_per_iteration"]
            results["speedup"] = round(one / many, 3) if many > 0 else None
            print(f"dask-bench: {args.ranks} workers against one: {results['speedup']}x per iteration; model equal "
                  f"byte for byte: {results['several_equal_one_byte_for_byte']}", flush=True)
        client.close()
    finally:
        stop_cluster(procs)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
