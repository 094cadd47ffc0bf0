# SPDX-License-Identifier: Apache-2.0
"""Concurrency soak and rerun determinism on a GPU (issue #10); skipped without a GPU and CuPy.

Soak: THREADS host threads, each with STREAMS CuPy streams, predict with one model from one pool for
CBGPU_SOAK_SECONDS (3 s in the suite; scripts run it longer) while another thread trains a second
model again and again on its own context. Every prediction must equal the single-threaded one, every
retrained model must be byte-identical to the first, no call may fail, and the device memory the
contexts hold must be back where it started (flat). The host's resident set is sampled through the
run: from a quarter of the time (threads, streams and caches set up by then) to the end it may grow
by at most RSS_SLACK_MIB when the soak lasts a minute or more (a shorter run only reports it).
Determinism: CBGPU_DETERMINISM_RUNS (10) trainings of the same data and seed give byte-identical
model files.
"""
from __future__ import annotations

import os
import threading
import time

import numpy as np

import cbgpu
from cbgpu import Context, Pool

SECONDS = float(os.environ.get("CBGPU_SOAK_SECONDS", "3"))
THREADS = int(os.environ.get("CBGPU_SOAK_THREADS", "16"))
STREAMS = 4
RUNS = int(os.environ.get("CBGPU_DETERMINISM_RUNS", "10"))
RSS_SLACK_MIB = 16
PARAMS = {"iterations": 40, "depth": 6, "loss_function": "Logloss", "random_seed": 11}


def _rss_bytes() -> int:
    """The process's resident set (Linux), 0 where /proc is missing."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:
        return 0


def _data(cp, rows, features, seed):
    rng = cp.random.RandomState(seed)
    X = rng.standard_normal((rows, features), dtype=cp.float32)
    y = (X[:, 0] - 0.5 * X[:, 1] * X[:, 2] > 0).astype(cp.float64)
    return X, y


def test_concurrent_prediction_while_training(cp):
    X, y = _data(cp, 50_000, 16, seed=1)
    X2, y2 = _data(cp, 100_000, 24, seed=2)
    with Context(0) as ctx, Context(0) as train_ctx:
        pool = Pool(ctx, X, label=y)
        model = cbgpu.train(pool, PARAMS)
        reference = cp.empty(model.output_shape(len(y)), dtype=cp.float64)
        model.predict(pool, out=reference)
        # CuPy compiles its kernels on first use: do that before the clock starts.
        warm = cp.full_like(reference, np.nan)
        warm.fill(0.0)
        bool(cp.array_equal(warm, reference))
        before = ctx.memory_stats()["in_use_bytes"], train_ctx.memory_stats()["in_use_bytes"]
        rss_before = _rss_bytes()
        deadline = time.monotonic() + SECONDS
        errors: list[BaseException] = []
        mismatches: list[str] = []
        predictions = [0] * THREADS
        trained: list[bytes] = []

        def predictor(t: int) -> None:
            try:
                with cp.cuda.Device(0):
                    streams = [cp.cuda.Stream(non_blocking=True) for _ in range(STREAMS)]
                    outs = [cp.full_like(reference, np.nan) for _ in range(STREAMS)]
                    while time.monotonic() < deadline:
                        for s, out in zip(streams, outs):
                            with s:
                                out.fill(np.nan)
                            model.predict(pool, out=out, stream=s.ptr)
                        for s, out in zip(streams, outs):
                            s.synchronize()
                            if not bool(cp.array_equal(out, reference)):
                                mismatches.append(f"thread {t}")
                        predictions[t] += STREAMS
            except BaseException as e:  # noqa: BLE001 - reported below
                errors.append(e)

        def trainer() -> None:
            try:
                with Pool(train_ctx, X2, label=y2) as p2:
                    while time.monotonic() < deadline or not trained:
                        m = cbgpu.train(p2, PARAMS)
                        trained.append(m.to_bytes())
                        m.close()
            except BaseException as e:  # noqa: BLE001
                errors.append(e)

        start = time.monotonic()
        rss_samples: list[tuple[float, int]] = []  # (seconds since the start, bytes)

        def sampler() -> None:
            while time.monotonic() < deadline:
                rss_samples.append((time.monotonic() - start, _rss_bytes()))
                time.sleep(min(1.0, SECONDS / 20))

        threads = [threading.Thread(target=predictor, args=(t,)) for t in range(THREADS)]
        threads.append(threading.Thread(target=trainer))
        threads.append(threading.Thread(target=sampler))
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors, errors[:3]
        assert not mismatches, f"{len(mismatches)} predictions differed from the single-threaded one"
        assert all(n > 0 for n in predictions)
        assert len(set(trained)) == 1, "a model trained during the soak differed"
        model.close()
        pool.close()
        ctx.sync()
        after = ctx.memory_stats()["in_use_bytes"], train_ctx.memory_stats()["in_use_bytes"]
        assert after[0] <= before[0] and after[1] == before[1], f"device memory not flat: {before} -> {after}"
        rss_end = _rss_bytes()
        settled = next((r for t, r in rss_samples if t >= SECONDS / 4), rss_end)
        growth = rss_end - settled
        print(f"soak: {sum(predictions)} predictions by {THREADS}x{STREAMS} streams and {len(trained)} "
              f"trainings in {SECONDS:.0f} s; device bytes in use {before} -> {after}; host RSS "
              f"{rss_before / 2**20:.0f} MiB at the start, {settled / 2**20:.0f} at {SECONDS / 4:.0f} s, "
              f"{rss_end / 2**20:.0f} at the end ({growth / 2**20:+.1f} MiB over the last three quarters, "
              f"{growth / max(1, sum(predictions)):+.0f} bytes per prediction)")
        if SECONDS >= 60 and settled > 0:
            assert growth <= RSS_SLACK_MIB * 2**20, (
                f"host memory grew by {growth / 2**20:.1f} MiB after the first quarter of the soak")


def test_reruns_are_byte_identical(cp):
    X, y = _data(cp, 200_000, 20, seed=4)
    with Context(0) as ctx, Pool(ctx, X, label=y) as pool:
        files = []
        for _ in range(RUNS):
            m = cbgpu.train(pool, dict(PARAMS, bootstrap_type="Bayesian", random_strength=1))
            files.append(m.to_bytes())
            m.close()
    assert len(files) == RUNS and len(set(files)) == 1
