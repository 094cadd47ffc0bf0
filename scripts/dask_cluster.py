# SPDX-License-Identifier: Apache-2.0
"""A Dask scheduler and one worker process per GPU on this machine (worker r sees only GPU r), and the
peak device memory of one rank's training, for the several-GPU checks and benchmarks
(scripts/dask-ranks-check.py, bench/dist/dask_bench.py)."""
import os
import subprocess
import sys
import time


def start_cluster(ranks: int):
    """A scheduler and `ranks` workers, worker r seeing only GPU r."""
    procs = []
    # The scheduler and the workers import this module: tasks name rank_peak_mb by its module.
    here = os.path.dirname(os.path.abspath(__file__))
    path = os.pathsep.join(p for p in (here, os.environ.get("PYTHONPATH", "")) if p)
    sched_file = f"/tmp/cbgpu-dask-scheduler-{os.getpid()}.json"
    procs.append(subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_scheduler", "--scheduler-file",
                                   sched_file, "--no-dashboard", "--port", "0"], env=dict(os.environ, PYTHONPATH=path),
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    for _ in range(200):
        if os.path.exists(sched_file):
            break
        time.sleep(0.1)
    for r in range(ranks):
        env = dict(os.environ, CUDA_VISIBLE_DEVICES=str(r), PYTHONPATH=path)
        procs.append(subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_worker", "--scheduler-file",
                                       sched_file, "--nworkers", "1", "--nthreads", "2", "--no-dashboard",
                                       "--name", f"gpu{r}"], env=env,
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    return procs, sched_file


def stop_cluster(procs) -> None:
    for p in procs:
        p.terminate()
    for p in procs:
        try:
            p.wait(timeout=20)
        except subprocess.TimeoutExpired:
            p.kill()


def rank_peak_mb(xs: list, ys: list, params: dict, rank: int, size: int, ident: bytes | None, seed: int = 0) -> float:
    """Run on a worker: rank `rank` of `size` trains on its blocks (CuPy arrays, joined) through a
    context of its own (with the NCCL unique id `ident` when size > 1); the context's peak device
    memory in MB (the library's allocations; the input arrays are not counted)."""
    import cbgpu
    import cupy

    x, y = cupy.concatenate(xs), cupy.concatenate(ys)
    comm = {} if size == 1 else {"nccl_id": ident, "nccl_id_rank": rank, "nccl_id_size": size}
    with cbgpu.Context(0, seed=seed, **comm) as ctx:
        with cbgpu.Pool(ctx, x, label=y) as pool:
            cbgpu.train(pool, params).close()
        return ctx.memory_stats()["peak_bytes"] / 1e6
