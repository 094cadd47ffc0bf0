# SPDX-License-Identifier: Apache-2.0
"""Training and prediction on a Dask cluster: cbgpu.dask.train / predict and the estimators
DaskCatBoostRegressor / DaskCatBoostClassifier.

    import cbgpu.dask
    model = cbgpu.dask.train(client, {"iterations": 200, "loss_function": "Logloss"}, X, y)
    pred = cbgpu.dask.predict(client, model, X)          # a dask collection partitioned like X

Inputs: dask.array (NumPy or CuPy chunks, chunked along rows only) and dask.dataframe (pandas or
cuDF partitions); labels, weights and baselines as dask arrays or series partitioned like the data.
The data never passes through the client: the partitions are computed where Dask puts them, and
each worker builds one pool from the partitions it holds (on its GPU, or on the host for host data
on one worker) - the pattern of xgboost.dask (`who_has` of the persisted partitions).

One worker: the ordinary single-process training there (host or GPU), the model equal byte for byte
to cbgpu.train on the concatenated rows. Several workers (one GPU each): rank r is the r-th worker
(ordered by the first partition each holds); rank 0 makes an NCCL unique id, Dask hands it to every
worker, each creates its context with the id, its rank and the size (the library makes the NCCL
communicator) and they train together; rank 0's model is returned. That model is the single-GPU
model of all rows in rank order when every rank but the last holds a multiple of 4096 rows (see
docs/dask.md), else deterministic for a given placement of the partitions. A rank that fails stops
the others (its error is raised on the client with the worker's message; the others' collectives
are aborted, or time out after `nccl_timeout_ms`).
"""
from __future__ import annotations

import threading
import uuid
from collections import defaultdict
from typing import Any, Callable, Mapping, Sequence

try:
    import dask
    import dask.array as da
    import distributed
except ImportError as e:
    raise ImportError(
        "cbgpu.dask needs dask and distributed: pip install \"dask[dataframe]\" distributed "
        f"(importing them failed: {e})") from e
try:
    import dask.dataframe as dd
except ImportError:  # dask.dataframe needs pandas and pyarrow; dask arrays work without them
    dd = None

import numpy as np

from . import _output
from ._capi import CBG_DEVICE_AUTO, CBG_DEVICE_CPU
from ._context import Context, nccl_unique_id
from ._estimators import (CatBoostClassifier, CatBoostRegressor, _device_of, _like, _squeeze, _to_host,
                          make_pool, prediction_input)
from ._model import Model
from ._tabular import eval_pair, feature_names, resolve_cat_features
from ._train import train as _train_pool

__all__ = ["train", "predict", "DaskCatBoostRegressor", "DaskCatBoostClassifier", "PeerFailed"]


class PeerFailed(RuntimeError):
    """Raised on a rank whose training was stopped because another rank failed (the client raises
    the failing rank's own error instead)."""


# ---- partitions --------------------------------------------------------------------------------------

def _is_frame(x: Any) -> bool:
    """A dask DataFrame or Series."""
    return dd is not None and isinstance(x, (dd.DataFrame, dd.Series))


def _parts(x: Any, name: str) -> list:
    """The row partitions of a dask collection as delayed objects (a 2-D array is rechunked to one
    chunk across its columns)."""
    if isinstance(x, da.Array):
        if x.ndim == 2 and len(x.chunks[1]) > 1:
            x = x.rechunk({1: -1})
        blocks = x.to_delayed()
        return list(blocks.reshape(blocks.shape[0], -1)[:, 0]) if x.ndim == 2 else list(blocks)
    if _is_frame(x):
        return list(x.to_delayed())
    raise TypeError(f"{name}: expected a dask.array or dask.dataframe collection, not {type(x).__name__}")


def _named(names: tuple, *values: Any) -> dict:
    """One partition's fields by name (the task that pairs data, label, ... partition by partition)."""
    return dict(zip(names, values))


def _zip_parts(client: distributed.Client, fields: dict[str, Any]) -> tuple[dict[str, list], list]:
    """Computes the partitions of the given collections (zipped by partition) on the cluster and
    returns {worker: [(partition index, future)]} and the futures in partition order."""
    names = [k for k, v in fields.items() if v is not None]
    split = {k: _parts(fields[k], k) for k in names}
    n = len(split[names[0]])
    for k in names[1:]:
        if len(split[k]) != n:
            raise ValueError(f"{k} has {len(split[k])} partitions, the data {n}: partition them alike")
    zipped = [dask.delayed(_named, pure=True)(tuple(names), *(split[k][i] for k in names)) for i in range(n)]
    futures = client.compute(zipped)
    distributed.wait(futures)
    for f in futures:
        if f.status == "error":
            f.result()  # raises the partition's error
    who_has = client.who_has(futures)
    by_worker: dict[str, list] = defaultdict(list)
    for i, f in enumerate(futures):
        holders = who_has.get(f.key) or ()
        if not holders:
            raise RuntimeError(f"partition {i} is on no worker after being computed")
        by_worker[sorted(holders)[0]].append((i, f))
    return dict(by_worker), futures


def _concat(values: Sequence[Any]) -> Any:
    """Partitions of one field joined in order (NumPy, CuPy, pandas or cuDF)."""
    first = values[0]
    if len(values) == 1:
        return first
    module = type(first).__module__.split(".")[0]
    if module == "cudf":
        import cudf
        return cudf.concat(list(values))
    if module == "pandas":
        import pandas as pd
        return pd.concat(list(values))
    if module == "cupy":
        import cupy
        return cupy.concatenate(list(values))
    return np.concatenate([np.asarray(v) for v in values])


def _plain(x: Any, cat_features: Sequence[Any] | None) -> Any:
    """A partition as the pools take it: a cuDF table becomes a CuPy matrix (numeric, stays on the
    GPU) or a pandas one (with categorical columns); cuDF/pandas series become arrays."""
    module = type(x).__module__.split(".")[0]
    if module == "cudf":
        if hasattr(x, "columns") and not cat_features:
            return x.to_cupy(dtype="float32")
        return x.to_pandas() if hasattr(x, "columns") else x.to_cupy()
    if module == "pandas" and not hasattr(x, "columns"):
        return x.to_numpy()
    return x


def _field(parts: list[dict], name: str, cat_features: Sequence[Any] | None = None) -> Any:
    if name not in parts[0]:
        return None
    value = _concat([p[name] for p in parts])
    if name != "data" and hasattr(value, "columns") and value.shape[1] == 1:
        value = value.iloc[:, 0]
    return _plain(value, cat_features if name == "data" else None)


# ---- the worker's side --------------------------------------------------------------------------------

def _worker_device(data: Any, device: int | None, gpu: bool) -> int:
    if device is not None:
        return device
    on = _device_of(data)
    if on != CBG_DEVICE_CPU:
        return on
    return CBG_DEVICE_AUTO if gpu else CBG_DEVICE_CPU


def _labels(y: Any, classes: np.ndarray | None, like: Any) -> Any:
    if y is None or classes is None:
        return y
    return _like(like, np.searchsorted(classes, _to_host(y)).astype(np.float32))


def _train_on_worker(learn: list, evals: list, params: dict, cat_features: Sequence[Any] | None,
                     classes: np.ndarray | None, device: int | None, gpu: bool, seed: int, rank: int, size: int,
                     nccl_id: bytes | None, timeout_ms: int, failed_event: str | None) -> bytes | None:
    """One rank: its partitions as one pool (and one eval pool), trained alone (size 1) or with the
    other ranks through the library's NCCL communicator. Returns the model's .cbm bytes on rank 0."""
    learn = [p for _, p in sorted(learn, key=lambda t: t[0])]
    evals = [p for _, p in sorted(evals, key=lambda t: t[0])]
    X = _field(learn, "data", cat_features)
    y = _labels(_field(learn, "label"), classes, X)
    weight, baseline = _field(learn, "weight"), _field(learn, "baseline")
    on = _worker_device(X, device, gpu or size > 1)
    if size > 1 and on == CBG_DEVICE_CPU:
        raise ValueError("training on several Dask workers runs on their GPUs (NCCL): give GPU data (CuPy or "
                         "cuDF partitions), task_type='GPU' or a device")
    comm = {} if size == 1 else {"nccl_id": nccl_id, "nccl_id_rank": rank, "nccl_id_size": size,
                                 "nccl_timeout_ms": timeout_ms}
    try:
        with Context(on, seed=seed, **comm) as ctx:
            pool = make_pool(ctx, X, y, cat_features, weight, baseline)
            test = None
            try:
                if evals:
                    ex = _field(evals, "data", cat_features)
                    test = make_pool(ctx, ex, _labels(_field(evals, "label"), classes, ex), cat_features)
                if size == 1:
                    model = _train_pool(pool, params, eval_set=test)
                else:
                    model = _train_watched(ctx, pool, params, test, failed_event)
            finally:
                pool.close()
                if test is not None:
                    test.close()
    except PeerFailed:
        raise
    except BaseException as e:
        if failed_event is not None:
            distributed.Event(failed_event).set()  # the other ranks abort their collectives
        if hasattr(e, "add_note"):  # Python >= 3.11: the traceback on the client names the worker
            e.add_note(f"cbgpu.dask: raised on {_worker_address()} (rank {rank} of {size})")
        raise
    with model:
        return model.to_bytes("cbm") if rank == 0 else None


def _worker_address() -> str:
    try:
        return distributed.get_worker().address
    except ValueError:  # not on a worker
        return "this process"


def _train_watched(ctx: Context, pool: Any, params: dict, test: Any, failed_event: str | None) -> Model:
    """cbgpu.train on a thread of its own while this one watches the other ranks: when one of them
    failed, this rank's communicator is aborted so that its training returns instead of waiting."""
    result: dict[str, Any] = {}

    def run() -> None:
        try:
            result["model"] = _train_pool(pool, params, eval_set=test)
        except BaseException as e:  # noqa: BLE001 - raised again on the task's thread
            result["error"] = e

    thread = threading.Thread(target=run, name="cbgpu-dask-train", daemon=True)
    thread.start()
    event = distributed.Event(failed_event) if failed_event is not None else None
    aborted = False
    while thread.is_alive():
        thread.join(0.25)
        if thread.is_alive() and event is not None and not aborted and event.is_set():
            ctx.abort()
            aborted = True
    if "error" in result:
        if aborted:
            raise PeerFailed("stopped: another rank of this training failed") from result["error"]
        raise result["error"]
    if aborted:
        result["model"].close()
        raise PeerFailed("stopped: another rank of this training failed")
    return result["model"]


def _unique_id() -> bytes:
    return nccl_unique_id()


# ---- the client's side --------------------------------------------------------------------------------

def _uses_gpu(data: Any, params: Mapping[str, Any], device: int | None) -> bool:
    meta = getattr(data, "_meta", None)
    module = type(meta).__module__.split(".")[0] if meta is not None else ""
    return module in ("cupy", "cudf") or params.get("task_type") == "GPU" or (device is not None and device >= 0)


def _rank_order(by_worker: dict[str, list]) -> list[str]:
    """Workers ordered by the first partition each holds: with partitions placed in blocks, rank
    order is row order."""
    return sorted(by_worker, key=lambda w: min(i for i, _ in by_worker[w]))


def _eval_placement(eval_by_worker: dict[str, list], workers: list[str]) -> dict[str, list]:
    """The eval partitions each rank takes: those it holds; a rank holding none takes one from the
    rank holding the most (every rank or none must have an eval set). Dask moves a taken partition
    from worker to worker."""
    placed = {w: list(eval_by_worker.get(w, [])) for w in workers}
    for w in list(eval_by_worker):
        if w not in placed:  # held by a worker without learn rows: to the rank with the fewest
            placed[min(workers, key=lambda v: len(placed[v]))].extend(eval_by_worker[w])
    for w in workers:
        if not placed[w]:
            donor = max(workers, key=lambda v: len(placed[v]))
            if len(placed[donor]) < 2:
                raise ValueError(f"the eval set has fewer partitions than there are workers ({len(workers)}): "
                                 "every rank needs one; repartition it")
            placed[w].append(placed[donor].pop())
    return placed


def train(client: distributed.Client, params: Mapping[str, Any] | None, data: Any, label: Any, *,
          weight: Any = None, baseline: Any = None, eval_set: Any = None, cat_features: Sequence[Any] | None = None,
          device: int | None = None, nccl_timeout_ms: int = 600000, classes: Any = None) -> Model:
    """Trains on a Dask cluster with CatBoost's parameter names; returns a cbgpu.Model.

    data: a dask.array [rows, features] (NumPy or CuPy chunks) or a dask.dataframe (pandas or cuDF
    partitions); label, weight, baseline: dask arrays or series partitioned like data. eval_set: an
    (X, y) pair of such collections (or a one-element list of one). cat_features: indices, or
    column names of a dataframe. device: the CUDA ordinal on every worker (None: where the
    partitions are; host data trains on the host unless params' task_type is "GPU"). Several
    workers train on their GPUs together through NCCL (nccl_timeout_ms bounds waiting for a rank).
    classes: for classification with arbitrary labels, the sorted class values (labels are mapped
    to their indexes on the workers).
    """
    params = dict(params or {})
    if data is None or label is None:
        raise ValueError("train needs data and label")
    names = feature_names(data._meta) if _is_frame(data) and hasattr(data, "columns") else None
    cats = resolve_cat_features(cat_features, names, None) if cat_features is not None and names else cat_features
    gpu = _uses_gpu(data, params, device)
    by_worker, _ = _zip_parts(client, {"data": data, "label": label, "weight": weight, "baseline": baseline})
    evals = eval_pair(eval_set)
    eval_by_worker: dict[str, list] = {}
    if evals is not None:
        eval_by_worker, _ = _zip_parts(client, {"data": evals[0], "label": evals[1]})
    workers = _rank_order(by_worker)
    size = len(workers)
    eval_parts = _eval_placement(eval_by_worker, workers) if evals is not None else {w: [] for w in workers}
    seed = int(params.get("random_seed", params.get("random_state", 0)) or 0)
    class_values = None if classes is None else np.asarray(classes)
    nccl_id = None
    failed_event = None
    if size > 1:
        # The id is made in rank 0's process, which then serves the other ranks' first connection.
        nccl_id = client.submit(_unique_id, workers=[workers[0]], allow_other_workers=False, pure=False).result()
        failed_event = f"cbgpu-dask-failed-{uuid.uuid4().hex}"
    tasks = [client.submit(_train_on_worker, by_worker[w], eval_parts[w], params, cats, class_values, device, gpu,
                           seed, rank, size, nccl_id, nccl_timeout_ms, failed_event, workers=[w],
                           allow_other_workers=False, pure=False)
             for rank, w in enumerate(workers)]
    distributed.wait(tasks)
    errors = [t.exception() for t in tasks if t.status == "error"]
    if errors:
        own = [e for e in errors if not isinstance(e, PeerFailed)]
        raise (own or errors)[0]
    return Model.from_bytes(tasks[0].result(), "cbm")


# ---- prediction -----------------------------------------------------------------------------------------

_models: dict[int, tuple[bytes, Model]] = {}
_models_lock = threading.Lock()


def _model_of(cbm: bytes) -> Model:
    """The model of these .cbm bytes, loaded once per worker process."""
    key = hash(cbm)
    with _models_lock:
        hit = _models.get(key)
        if hit is None or hit[0] != cbm:
            if len(_models) >= 8:
                _models.pop(next(iter(_models)))[1].close()
            hit = (cbm, Model.from_bytes(cbm, "cbm"))
            _models[key] = hit
        return hit[1]


def _predict_part(part: Any, cbm: bytes, prediction_type: str, ntree_start: int, ntree_end: int,
                  labels: np.ndarray | None, columns: int) -> Any:
    model = _model_of(cbm)
    index = getattr(part, "index", None)
    x = _plain(part, model.cat_feature_indices() or None)
    if len(x) == 0:
        out = np.zeros((0, columns) if columns > 1 else (0,))
    else:
        with prediction_input(model, x) as data:
            out = model.predict(data, prediction_type=prediction_type, tree_begin=ntree_start, tree_end=ntree_end)
        out = _output.rewrap(out, _squeeze)
        if labels is not None:
            out = labels[_to_host(out).astype(np.int64)]
    if index is None:
        return out
    import pandas as pd
    host = _to_host(out)
    return pd.Series(host, index=index) if host.ndim == 1 else pd.DataFrame(host, index=index)


def predict(client: distributed.Client, model: Model | Any, data: Any, *, prediction_type: str = "RawFormulaVal",
            ntree_start: int = 0, ntree_end: int = 0, labels: Any = None) -> Any:
    """Predictions of `model` (a cbgpu.Model, or a fitted cbgpu estimator) for every partition of
    `data`, on the workers: a dask.array partitioned like a dask.array input ([rows] or [rows,
    columns]; NumPy or CuPy chunks like the input's), a dask Series/DataFrame (pandas) partitioned
    like a dask.dataframe input. The model travels as .cbm bytes, once per worker. labels: values to map class
    indexes to (prediction_type "Class")."""
    model = model._model() if hasattr(model, "_model") else model
    cbm = model.to_bytes("cbm")
    columns = model.prediction_columns(prediction_type) if prediction_type != "Class" else 1
    # One task holds the bytes; every partition's task depends on it (the workers fetch it once each).
    shared = dask.delayed(cbm, pure=True)
    label_values = None if labels is None else np.asarray(labels)
    args = (shared, prediction_type, ntree_start, ntree_end, label_values, columns)
    if isinstance(data, da.Array):
        if data.ndim != 2:
            raise ValueError(f"data must be 2-D [rows, features], not {data.ndim}-D")
        x = data.rechunk({1: -1}) if len(data.chunks[1]) > 1 else data
        meta_module = type(x._meta).__module__.split(".")[0]
        dtype = label_values.dtype if label_values is not None else np.float64
        if meta_module == "cupy" and label_values is None:
            import cupy
            meta = cupy.empty((0,) if columns == 1 else (0, 0), dtype=dtype)
        else:
            meta = np.empty((0,) if columns == 1 else (0, 0), dtype=dtype)
        if columns == 1:
            return x.map_blocks(_predict_part, *args, drop_axis=1, chunks=(x.chunks[0],), meta=meta)
        return x.map_blocks(_predict_part, *args, chunks=(x.chunks[0], (columns,)), meta=meta)
    if _is_frame(data) and hasattr(data, "columns"):
        import pandas as pd
        dtype = label_values.dtype if label_values is not None else np.float64
        meta = pd.Series(np.empty(0, dtype=dtype)) if columns == 1 else \
            pd.DataFrame({j: np.empty(0, dtype=dtype) for j in range(columns)})
        return data.map_partitions(_predict_part, *args, meta=meta)
    raise TypeError(f"data: expected a dask.array or dask.dataframe collection, not {type(data).__name__}")


# ---- estimators -----------------------------------------------------------------------------------------

class _DaskMixin:
    """fit/predict of the single-machine estimators over Dask collections. The parameters,
    fitted attributes (best_iteration_, evals_result_, ...) and pickling are theirs; `client` (a
    distributed.Client, default: the current one) is an attribute, not a parameter."""

    @property
    def client(self) -> distributed.Client:
        client = getattr(self, "_client", None)
        return client if client is not None else distributed.default_client()

    @client.setter
    def client(self, value: distributed.Client | None) -> None:
        self._client = value

    def __getstate__(self) -> dict:
        state = super().__getstate__()
        state.pop("_client", None)
        return state

    def _dask_fit(self, X: Any, y: Any, eval_set: Any, sample_weight: Any, baseline: Any, params: dict,
                  cat_features: Sequence[Any] | None, classes: np.ndarray | None) -> Any:
        cats = list(cat_features) if cat_features is not None else self.cat_features
        self.model_ = train(self.client, params, X, y, weight=sample_weight, baseline=baseline,
                            eval_set=eval_set, cat_features=cats, device=self.device, classes=classes)
        self.n_features_in_ = int(self.model_.info()["n_flat_features"])
        names = list(X.columns) if _is_frame(X) and hasattr(X, "columns") else None
        if names is not None:
            self.feature_names_in_ = np.asarray(names, dtype=object)
        elif hasattr(self, "feature_names_in_"):
            del self.feature_names_in_
        return self

    def _dask_predict(self, X: Any, prediction_type: str, ntree_start: int, ntree_end: int,
                      labels: Any = None) -> Any:
        return predict(self.client, self._model(), X, prediction_type=prediction_type, ntree_start=ntree_start,
                       ntree_end=ntree_end, labels=labels)


def _fit_params(self: Any, use_best_model: Any, early_stopping_rounds: Any, metric_period: Any) -> dict:
    return self._training_params(self._fit_params(use_best_model, early_stopping_rounds, metric_period))


class DaskCatBoostRegressor(_DaskMixin, CatBoostRegressor):
    """CatBoostRegressor over Dask collections: fit trains with cbgpu.dask.train, predict returns a
    Dask collection (cbgpu.dask.predict). Parameters as CatBoostRegressor's."""

    def fit(self, X: Any, y: Any = None, cat_features: Sequence[Any] | None = None, *, sample_weight: Any = None,
            baseline: Any = None, use_best_model: bool | None = None, eval_set: Any = None, verbose: Any = None,
            metric_period: int | None = None, early_stopping_rounds: int | None = None,
            callback: Callable[[dict], Any] | None = None) -> "DaskCatBoostRegressor":
        if callback is not None:
            raise ValueError("callback is not supported on a Dask cluster (training runs on the workers)")
        params = {"loss_function": self._default_loss,
                  **_fit_params(self, use_best_model, early_stopping_rounds, metric_period)}
        return self._dask_fit(X, y, eval_set, sample_weight, baseline, params, cat_features, None)

    def predict(self, X: Any, prediction_type: str = "RawFormulaVal", ntree_start: int = 0, ntree_end: int = 0,
                output_type: str | None = None) -> Any:
        return self._dask_predict(X, prediction_type, ntree_start, ntree_end)


class DaskCatBoostClassifier(_DaskMixin, CatBoostClassifier):
    """CatBoostClassifier over Dask collections: classes_ from the labels' unique values (a small
    reduction on the cluster), fit with cbgpu.dask.train, predict / predict_proba as Dask
    collections. Parameters as CatBoostClassifier's."""

    def fit(self, X: Any, y: Any = None, cat_features: Sequence[Any] | None = None, *, sample_weight: Any = None,
            baseline: Any = None, use_best_model: bool | None = None, eval_set: Any = None, verbose: Any = None,
            metric_period: int | None = None, early_stopping_rounds: int | None = None,
            callback: Callable[[dict], Any] | None = None) -> "DaskCatBoostClassifier":
        if callback is not None:
            raise ValueError("callback is not supported on a Dask cluster (training runs on the workers)")
        if y is None:
            raise ValueError("y: the labels are missing")
        unique = y.unique() if _is_frame(y) else da.unique(y)
        self.classes_ = np.sort(_to_host(self.client.compute(unique).result()))
        params = _fit_params(self, use_best_model, early_stopping_rounds, metric_period)
        params.setdefault("loss_function", "Logloss" if len(self.classes_) <= 2 else "MultiClass")
        return self._dask_fit(X, y, eval_set, sample_weight, baseline, params, cat_features, self.classes_)

    def predict(self, X: Any, prediction_type: str = "Class", ntree_start: int = 0, ntree_end: int = 0,
                output_type: str | None = None) -> Any:
        labels = self.classes_ if prediction_type == "Class" else None
        return self._dask_predict(X, prediction_type, ntree_start, ntree_end, labels)

    def predict_proba(self, X: Any, ntree_start: int = 0, ntree_end: int = 0, output_type: str | None = None) -> Any:
        return self._dask_predict(X, "Probability", ntree_start, ntree_end)
