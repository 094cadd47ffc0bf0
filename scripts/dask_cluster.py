# SPDX-License-Identifier: Apache-2.0
"""A Dask scheduler and one worker process per GPU on this machine (worker r sees only GPU r), for
the several-GPU checks and benchmarks (scripts/dask-ranks-check.py, bench/dist/dask_bench.py)."""
import os
import subprocess
import sys
import time


def start_cluster(ranks: int):
    """A scheduler and `ranks` workers, worker r seeing only GPU r."""
    procs = []
    sched_file = f"/tmp/cbgpu-dask-scheduler-{os.getpid()}.json"
    procs.append(subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_scheduler", "--scheduler-file",
                                   sched_file, "--no-dashboard", "--port", "0"],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    for _ in range(200):
        if os.path.exists(sched_file):
            break
        time.sleep(0.1)
    for r in range(ranks):
        env = dict(os.environ, CUDA_VISIBLE_DEVICES=str(r))
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
