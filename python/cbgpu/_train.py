# SPDX-License-Identifier: Apache-2.0
"""Training through cbg_train: train() over pools, and small CatBoostRegressor / CatBoostClassifier
look-alikes over arrays."""
from __future__ import annotations

import contextlib
import ctypes
import json
from typing import Any, Callable, Iterator, Mapping, Sequence

import numpy as np

from . import _output
from ._capi import (CBG_DEVICE_CPU, _check, cbg_train_callbacks_t, cbg_train_iteration_fn, lib)
from ._context import Context
from ._model import Model
from ._pool import Pool
from ._tabular import (eval_pair, feature_names, from_catboost_pool, host_table, is_dataframe,
                       resolve_cat_features)

#: Fields of the progress dict a callback receives (cbg_train_progress_t).
PROGRESS_FIELDS = ("iteration", "iterations", "metric", "learn_metric", "eval_metric", "best_eval_metric",
                   "best_iteration", "elapsed_seconds", "remaining_seconds")


def train(pool: Pool, params: Mapping[str, Any] | None = None, *, eval_set: Pool | None = None,
          callback: Callable[[dict], Any] | None = None) -> Model:
    """Trains a model with CatBoost's parameter names (cbg_train).

    params: dict of CatBoost parameters (JSON-serialisable values). eval_set: a Pool with the same
    features. callback(progress) runs after every iteration with a dict (PROGRESS_FIELDS; learn_metric
    / eval_metric are None when not computed); returning False stops training. An exception in the
    callback stops training and is raised again here.
    """
    text = json.dumps(dict(params or {})).encode("utf-8")
    callbacks = None
    errors: list[BaseException] = []
    fn = None
    if callback is not None:
        def on_iteration(_user, progress_ptr):
            p = progress_ptr.contents
            info = {
                "iteration": p.iteration,
                "iterations": p.iterations,
                "metric": p.metric.decode("utf-8") if p.metric else "",
                "learn_metric": p.learn_metric if p.has_learn_metric else None,
                "eval_metric": p.eval_metric if p.has_eval_metric else None,
                "best_eval_metric": p.best_eval_metric if p.has_eval_metric else None,
                "best_iteration": p.best_iteration,
                "elapsed_seconds": p.elapsed_seconds,
                "remaining_seconds": p.remaining_seconds,
            }
            try:
                return 1 if callback(info) is False else 0
            except BaseException as e:  # noqa: BLE001 - re-raised after cbg_train returns
                errors.append(e)
                return 1

        fn = cbg_train_iteration_fn(on_iteration)
        callbacks = cbg_train_callbacks_t()
        _check(lib.cbg_train_callbacks_init(ctypes.byref(callbacks)))
        callbacks.on_iteration = fn
    handle = ctypes.c_void_p()
    status = lib.cbg_train(pool.handle, text, eval_set.handle if eval_set is not None else None,
                           ctypes.byref(callbacks) if callbacks is not None else None, ctypes.byref(handle))
    if errors:
        if handle.value:
            Model(handle.value).close()
        raise errors[0]
    _check(status)
    del fn
    return Model(handle.value)


def _device_of(x: Any) -> int:
    """The CUDA ordinal of a device array (CuPy, PyTorch, ...), or CBG_DEVICE_CPU for host arrays."""
    if hasattr(x, "__dlpack_device__"):
        kind, ordinal = x.__dlpack_device__()
        if int(kind) in (2, 13):  # kDLCUDA, kDLCUDAManaged
            return int(ordinal)
    return CBG_DEVICE_CPU


def _to_host(x: Any) -> np.ndarray:
    """A NumPy copy of a CuPy or PyTorch array (for labels and class indexes); host arrays as they are."""
    fw = _output.framework_of(x)
    if fw == "cupy":
        x = x.get()
    elif fw == "torch":
        x = x.detach().cpu().numpy()
    return np.asarray(x)


class _Estimator:
    """Shared by the two look-alikes: parameters by CatBoost's names, fit on arrays, host predict.

    `cat_features` (constructor or fit, as in CatBoost): indices or column names of categorical
    features. Host data may be a pandas DataFrame (object, string, category or integer columns), a
    NumPy object/string array, an integer array or a nested list; categorical values are hashed as
    CatBoost hashes them (strings as they are, integers as decimal text). GPU arrays (CuPy, PyTorch)
    take integer categorical columns by index. The fitted model keeps its categorical features, so
    predict takes the same kind of input."""

    _default_loss = "RMSE"

    def __init__(self, device: int | None = None, seed: int = 0, cat_features: Sequence[Any] | None = None,
                 **params: Any):
        self._params = dict(params)
        self._device = device
        self._seed = seed
        self._cat_features = None if cat_features is None else list(cat_features)
        self.model_: Model | None = None

    def get_params(self, deep: bool = True) -> dict:  # noqa: ARG002 - scikit-learn's signature
        out = dict(self._params)
        if self._cat_features is not None:
            out["cat_features"] = list(self._cat_features)
        return out

    def set_params(self, **params: Any) -> "_Estimator":
        if "cat_features" in params:
            cats = params.pop("cat_features")
            self._cat_features = None if cats is None else list(cats)
        self._params.update(params)
        return self

    def _pool(self, ctx: Context, X: Any, y: Any, cat_features: Sequence[Any] | None, weight: Any = None,
              baseline: Any = None) -> Pool:
        if _device_of(X) != CBG_DEVICE_CPU:
            cats = resolve_cat_features(cat_features, None, None)
            return Pool(ctx, X, label=y, weight=weight, baseline=baseline, cat_features=cats or None)
        y = None if y is None else np.ascontiguousarray(np.asarray(y, dtype=np.float32))
        weight = None if weight is None else np.ascontiguousarray(np.asarray(weight, dtype=np.float32))
        baseline = None if baseline is None else np.ascontiguousarray(np.asarray(baseline, dtype=np.float64))
        table = host_table(X, cat_features)
        if table is None:
            X = np.ascontiguousarray(np.asarray(X, dtype=np.float32))
            return Pool(ctx, X, label=y, weight=weight, baseline=baseline)
        return Pool(ctx, columns=table.columns, string_columns=table.string_columns,
                    cat_features=table.cat_features or None, feature_names=table.names, label=y, weight=weight,
                    baseline=baseline)

    def _fit(self, X: Any, y: Any, eval_set: Any, sample_weight: Any, baseline: Any,
             callback: Callable[[dict], Any] | None, params: dict,
             cat_features: Sequence[Any] | None = None) -> "_Estimator":
        """Trains on (X, y); eval_set is None or an (X, y) pair (the public fits apply eval_pair)."""
        if y is None:
            raise ValueError("y: the labels are missing (pass y, or a catboost.Pool with a label)")
        cats = list(cat_features) if cat_features is not None else self._cat_features
        if cats is not None and any(isinstance(c, str) for c in cats) and is_dataframe(X):
            cats = resolve_cat_features(cats, feature_names(X), None)  # names of the learn set, for eval sets too
        device = self._device if self._device is not None else _device_of(X)
        with Context(device, seed=self._seed) as ctx:
            learn = self._pool(ctx, X, y, cats, sample_weight, baseline)
            test = None
            try:
                if eval_set is not None:
                    ex, ey = eval_set
                    test = self._pool(ctx, ex, ey, cats)
                self.model_ = train(learn, params, eval_set=test, callback=callback)
            finally:
                learn.close()
                if test is not None:
                    test.close()
        return self

    @contextlib.contextmanager
    def _input(self, X: Any) -> Iterator[Any]:
        """`X` as the model takes it: GPU arrays and pools as they are; host tables (DataFrames,
        object arrays, or any host data when the model has categorical features) as a pool on a CPU
        context, with the model's categorical features; plain numeric host matrices as they are."""
        model = self._model()
        cats = model.cat_feature_indices()
        X = from_catboost_pool(X)[0]
        if isinstance(X, Pool) or _output.is_device_array(X):
            yield X
            return
        table = host_table(X, cats)
        if table is None:
            yield X
            return
        with Context(CBG_DEVICE_CPU) as ctx:
            pool = Pool(ctx, columns=table.columns, string_columns=table.string_columns,
                        cat_features=table.cat_features or None)
            try:
                yield pool
            finally:
                pool.close()

    def _model(self) -> Model:
        if self.model_ is None:
            raise ValueError("the model is not fitted yet")
        return self.model_

    @property
    def tree_count_(self) -> int:
        return self._model().tree_count

    def predict_raw(self, X: Any, prediction_type: str, ntree_start: int = 0, ntree_end: int = 0,
                    output_type: str | None = None) -> Any:
        """model_.predict with single-column results as 1-D arrays."""
        with self._input(X) as data:
            out = self._model().predict(data, prediction_type=prediction_type, tree_begin=ntree_start,
                                        tree_end=ntree_end, output_type=output_type)
        return _output.rewrap(out, _squeeze)

    def staged_predict(self, X: Any, prediction_type: str = "RawFormulaVal", ntree_start: int = 0,
                       ntree_end: int = 0, eval_period: int = 1, output_type: str | None = None) -> Iterator[Any]:
        """Predictions after each `eval_period` trees (CatBoost's staged_predict), one output per stage;
        single-column outputs are 1-D."""
        for out in self._staged(X, prediction_type, ntree_start, ntree_end, eval_period, output_type):
            yield _output.rewrap(out, _squeeze)

    def _staged(self, X: Any, prediction_type: str, ntree_start: int, ntree_end: int, eval_period: int,
                output_type: str | None) -> Iterator[Any]:
        with self._input(X) as data:
            yield from self._model().staged_predict(data, prediction_type=prediction_type, ntree_start=ntree_start,
                                                    ntree_end=ntree_end, eval_period=eval_period,
                                                    output_type=output_type)

    def calc_leaf_indexes(self, X: Any, ntree_start: int = 0, ntree_end: int = 0,
                          output_type: str | None = None) -> Any:
        """The leaf index of every row in every tree of the range, [rows, trees] (uint32; int32 for
        PyTorch)."""
        with self._input(X) as data:
            return self._model().leaf_indexes(data, tree_begin=ntree_start, tree_end=ntree_end,
                                              output_type=output_type)

    def save_model(self, path: str, format: str = "cbm") -> None:
        self._model().save(path, format=format)

    def load_model(self, path: str, format: str = "cbm") -> "_Estimator":
        """Loads a .cbm or JSON model (CatBoost's or ours) into this estimator."""
        self.model_ = Model.load(path, format=format)
        self._loaded()
        return self

    def _loaded(self) -> None:
        pass

    def evals_result(self) -> dict:
        """The metric history stored in the model's "training" info."""
        text = self.model_.info_value("training") if self.model_ is not None else None
        return json.loads(text)["metrics"] if text else {}


class CatBoostRegressor(_Estimator):
    """A small catboost.CatBoostRegressor look-alike: fit(X, y, eval_set=(X, y), sample_weight=...),
    predict(X). X (and eval_set) may also be a numeric catboost.Pool: its features, label, weights and
    baseline are used. Host arrays train on the host reference path, CUDA arrays on their GPU (or pass
    device=)."""

    def fit(self, X: Any, y: Any = None, eval_set: Any = None, sample_weight: Any = None, baseline: Any = None,
            callback: Callable[[dict], Any] | None = None,
            cat_features: Sequence[Any] | None = None) -> "CatBoostRegressor":
        params = {"loss_function": self._default_loss, **self._params}
        X, y, sample_weight, baseline = from_catboost_pool(X, y, sample_weight, baseline)
        return self._fit(X, y, eval_pair(eval_set), sample_weight, baseline, callback, params, cat_features)

    def predict(self, X: Any, prediction_type: str = "RawFormulaVal", ntree_start: int = 0, ntree_end: int = 0,
                output_type: str | None = None) -> Any:
        """Predictions, [rows] (or [rows, dims] for multi-dimensional losses); output_type as
        Model.predict (default: the input's framework and device)."""
        return self.predict_raw(X, prediction_type, ntree_start, ntree_end, output_type)


class CatBoostClassifier(_Estimator):
    """A small catboost.CatBoostClassifier look-alike: any class labels (mapped to 0..K-1; Logloss
    for two classes, MultiClass otherwise unless loss_function says), predict, predict_proba."""

    def fit(self, X: Any, y: Any = None, eval_set: Any = None, sample_weight: Any = None, baseline: Any = None,
            callback: Callable[[dict], Any] | None = None,
            cat_features: Sequence[Any] | None = None) -> "CatBoostClassifier":
        X, y, sample_weight, baseline = from_catboost_pool(X, y, sample_weight, baseline)
        if y is None:
            raise ValueError("y: the labels are missing (pass y, or a catboost.Pool with a label)")
        labels = _to_host(y)
        self.classes_ = np.unique(labels)
        loss = self._params.get("loss_function", "Logloss" if len(self.classes_) <= 2 else "MultiClass")
        params = {**self._params, "loss_function": loss}
        index = _like(X, np.searchsorted(self.classes_, labels).astype(np.float32))
        eval_set = eval_pair(eval_set)
        if eval_set is not None:
            ex, ey = eval_set
            eval_set = (ex, _like(ex, np.searchsorted(self.classes_, _to_host(ey)).astype(np.float32)))
        return self._fit(X, index, eval_set, sample_weight, baseline, callback, params, cat_features)

    def _loaded(self) -> None:
        names = self._model().class_names()
        try:
            self.classes_ = np.array([float(n) for n in names]) if names else \
                np.arange(max(self._model().prediction_columns("Probability"), 2))
        except ValueError:
            self.classes_ = np.array(names)

    def predict_proba(self, X: Any, ntree_start: int = 0, ntree_end: int = 0, output_type: str | None = None) -> Any:
        """Class probabilities [rows, classes] (two columns for a binary model, as CatBoost)."""
        with self._input(X) as data:
            return self._model().predict(data, prediction_type="Probability", tree_begin=ntree_start,
                                         tree_end=ntree_end, output_type=output_type)

    def predict(self, X: Any, prediction_type: str = "Class", ntree_start: int = 0, ntree_end: int = 0,
                output_type: str | None = None) -> Any:
        """Class labels (classes_) for "Class", on the input's device where the labels are numbers;
        other prediction types as CatBoostRegressor.predict."""
        out = self.predict_raw(X, prediction_type, ntree_start, ntree_end, output_type)
        return out if prediction_type != "Class" else _output.rewrap(out, self._labels)

    def staged_predict(self, X: Any, prediction_type: str = "Class", ntree_start: int = 0, ntree_end: int = 0,
                       eval_period: int = 1, output_type: str | None = None) -> Iterator[Any]:
        for out in super().staged_predict(X, prediction_type, ntree_start, ntree_end, eval_period, output_type):
            yield out if prediction_type != "Class" else _output.rewrap(out, self._labels)

    def staged_predict_proba(self, X: Any, ntree_start: int = 0, ntree_end: int = 0, eval_period: int = 1,
                             output_type: str | None = None) -> Iterator[Any]:
        return self._staged(X, "Probability", ntree_start, ntree_end, eval_period, output_type)

    def _labels(self, index: Any) -> Any:
        """classes_[index] for an index array of any framework."""
        fw = _output.framework_of(index)
        if fw == "cupy" and self.classes_.dtype.kind in "iufb":
            import cupy
            return cupy.asarray(self.classes_)[index.astype(cupy.int64)]
        if fw == "torch" and self.classes_.dtype.kind in "iufb":
            import torch
            return torch.as_tensor(self.classes_, device=index.device)[index.long()]
        return self.classes_[_to_host(index).astype(np.int64)]


def _like(x: Any, values: np.ndarray) -> Any:
    """`values` (host) on the device and in the framework of `x` when `x` is a CuPy or PyTorch GPU
    array, so that a pool's columns and label live in the same memory."""
    if not _output.is_device_array(x):
        return values
    fw = _output.framework_of(x)
    if fw == "cupy":
        import cupy
        with cupy.cuda.Device(x.device.id):
            return cupy.asarray(values)
    if fw == "torch":
        import torch
        return torch.as_tensor(values, device=x.device)
    return values


def _squeeze(x: Any) -> Any:
    """[rows, 1] -> [rows] for NumPy, CuPy and PyTorch arrays alike."""
    return x.reshape(-1) if len(x.shape) == 2 and x.shape[1] == 1 else x
