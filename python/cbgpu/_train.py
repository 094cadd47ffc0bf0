# SPDX-License-Identifier: Apache-2.0
"""Training through cbg_train: train() over pools, and small CatBoostRegressor / CatBoostClassifier
look-alikes over arrays."""
from __future__ import annotations

import ctypes
import json
from typing import Any, Callable, Mapping

import numpy as np

from ._capi import (CBG_DEVICE_CPU, _check, cbg_train_callbacks_t, cbg_train_iteration_fn, lib)
from ._context import Context
from ._model import Model
from ._pool import Pool

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


def _host_floats(x: Any) -> np.ndarray:
    if hasattr(x, "get"):  # CuPy
        x = x.get()
    elif hasattr(x, "cpu") and hasattr(x, "numpy"):  # PyTorch
        x = x.cpu().numpy()
    return np.ascontiguousarray(np.asarray(x, dtype=np.float32))


class _Estimator:
    """Shared by the two look-alikes: parameters by CatBoost's names, fit on arrays, host predict."""

    _default_loss = "RMSE"

    def __init__(self, device: int | None = None, seed: int = 0, **params: Any):
        self._params = dict(params)
        self._device = device
        self._seed = seed
        self.model_: Model | None = None

    def get_params(self, deep: bool = True) -> dict:  # noqa: ARG002 - scikit-learn's signature
        return dict(self._params)

    def set_params(self, **params: Any) -> "_Estimator":
        self._params.update(params)
        return self

    def _pool(self, ctx: Context, X: Any, y: Any, weight: Any = None, baseline: Any = None) -> Pool:
        if _device_of(X) == CBG_DEVICE_CPU:
            X = np.ascontiguousarray(np.asarray(X, dtype=np.float32))
            y = None if y is None else np.ascontiguousarray(np.asarray(y, dtype=np.float32))
            weight = None if weight is None else np.ascontiguousarray(np.asarray(weight, dtype=np.float32))
            baseline = None if baseline is None else np.ascontiguousarray(np.asarray(baseline, dtype=np.float64))
        return Pool(ctx, X, label=y, weight=weight, baseline=baseline)

    def _fit(self, X: Any, y: Any, eval_set: Any, sample_weight: Any, baseline: Any,
             callback: Callable[[dict], Any] | None, params: dict) -> "_Estimator":
        device = self._device if self._device is not None else _device_of(X)
        with Context(device, seed=self._seed) as ctx:
            learn = self._pool(ctx, X, y, sample_weight, baseline)
            test = None
            if eval_set is not None:
                ex, ey = eval_set
                test = self._pool(ctx, ex, ey)
            try:
                self.model_ = train(learn, params, eval_set=test, callback=callback)
            finally:
                learn.close()
                if test is not None:
                    test.close()
        return self

    def _raw(self, X: Any, prediction_type: str) -> np.ndarray:
        if self.model_ is None:
            raise ValueError("the model is not fitted yet")
        return self.model_.predict(_host_floats(X), prediction_type=prediction_type)

    def save_model(self, path: str, format: str = "cbm") -> None:
        if self.model_ is None:
            raise ValueError("the model is not fitted yet")
        self.model_.save(path, format=format)

    def evals_result(self) -> dict:
        """The metric history stored in the model's "training" info."""
        text = self.model_.info_value("training") if self.model_ is not None else None
        return json.loads(text)["metrics"] if text else {}


class CatBoostRegressor(_Estimator):
    """A small catboost.CatBoostRegressor look-alike: fit(X, y, eval_set=(X, y), sample_weight=...),
    predict(X). Host arrays train on the host reference path, CUDA arrays on their GPU (or pass
    device=)."""

    def fit(self, X: Any, y: Any, eval_set: Any = None, sample_weight: Any = None, baseline: Any = None,
            callback: Callable[[dict], Any] | None = None) -> "CatBoostRegressor":
        params = {"loss_function": self._default_loss, **self._params}
        return self._fit(X, y, eval_set, sample_weight, baseline, callback, params)

    def predict(self, X: Any, prediction_type: str = "RawFormulaVal") -> np.ndarray:
        out = self._raw(X, prediction_type)
        return out[:, 0] if out.shape[1] == 1 else out


class CatBoostClassifier(_Estimator):
    """A small catboost.CatBoostClassifier look-alike: any class labels (mapped to 0..K-1; Logloss
    for two classes, MultiClass otherwise unless loss_function says), predict, predict_proba."""

    def fit(self, X: Any, y: Any, eval_set: Any = None, sample_weight: Any = None, baseline: Any = None,
            callback: Callable[[dict], Any] | None = None) -> "CatBoostClassifier":
        labels = np.asarray(_host_floats(y) if _device_of(y) != CBG_DEVICE_CPU else y)
        self.classes_ = np.unique(labels)
        loss = self._params.get("loss_function", "Logloss" if len(self.classes_) <= 2 else "MultiClass")
        params = {**self._params, "loss_function": loss}
        index = np.searchsorted(self.classes_, labels).astype(np.float32)
        if eval_set is not None:
            ex, ey = eval_set
            eval_set = (ex, np.searchsorted(self.classes_, np.asarray(ey)).astype(np.float32))
        return self._fit(X, index, eval_set, sample_weight, baseline, callback, params)

    def predict_proba(self, X: Any) -> np.ndarray:
        return self._raw(X, "Probability")

    def predict(self, X: Any, prediction_type: str = "Class") -> np.ndarray:
        if prediction_type != "Class":
            return self._raw(X, prediction_type)
        proba = self.predict_proba(X)
        return self.classes_[np.argmax(proba, axis=1)]
