# SPDX-License-Identifier: Apache-2.0
"""Training through cbg_train: train() over pools (the estimators over arrays are in _estimators.py)."""
from __future__ import annotations

import ctypes
import json
from typing import Any, Callable, Mapping

from ._capi import _check, cbg_train_callbacks_t, cbg_train_iteration_fn, lib
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
