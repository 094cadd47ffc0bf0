# SPDX-License-Identifier: Apache-2.0
"""CatBoostRegressor / CatBoostClassifier: scikit-learn estimators with CatBoost's parameter names,
fit/predict over NumPy, pandas, CuPy and PyTorch data, and CatBoost's fitted attributes
(best_iteration_, best_score_, evals_result_, tree_count_, feature_names_, classes_, ...).

Parameters: CatBoost's common ones are named constructor arguments (None: the library's default,
which is CatBoost's GPU default); any other CatBoost parameter goes through **kwargs, which
get_params/set_params/sklearn.base.clone keep like the named ones. Copies (pickle, copy.copy,
copy.deepcopy, joblib) carry the fitted model as .cbm bytes: a copy never shares the library handle.
"""
from __future__ import annotations

import contextlib
import json
import sys
from typing import Any, Callable, Iterator, Sequence

import numpy as np

from . import _output
from ._capi import CBG_DEVICE_CPU
from ._context import Context
from ._fitted import (best_iteration, best_score, evals_result, format_duration, plain_params,
                      progress_line)
from ._model import Model
from ._pool import Pool
from ._sklearn_base import BaseEstimator, ClassifierMixin, RegressorMixin
from ._tabular import (eval_pair, feature_names, from_catboost_pool, host_table, is_catboost_pool,
                       is_dataframe, resolve_cat_features)
from ._train import train

#: Constructor arguments the Python side uses itself instead of handing them to the trainer.
_PYTHON_SIDE = ("cat_features", "device", "verbose")
#: CatBoost's importance types the library computes; "FeatureImportance" is CatBoost's default name,
#: which for these losses means PredictionValuesChange.
_IMPORTANCE_ALIASES = {"FeatureImportance": "PredictionValuesChange"}


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


def _training_device(X: Any, params: dict) -> int:
    """Where fit trains without an explicit `device`: on the GPU holding X; for host data, on the
    first of `devices` (else GPU 0) when task_type is "GPU", as CatBoost; else on the host."""
    on = _device_of(X)
    if on != CBG_DEVICE_CPU or params.get("task_type") != "GPU":
        return on
    first = str(params.get("devices") or "0").split(":")[0].split("-")[0]
    return int(first) if first.isdigit() else 0


def _n_columns(x: Any) -> int | None:
    """Number of feature columns of a 2-D table (None where it cannot be told without converting)."""
    if isinstance(x, Pool):
        return int(x.info()["n_features"])
    if is_dataframe(x):
        return len(x.columns)
    shape = getattr(x, "shape", None)
    if shape is not None:
        return int(shape[1]) if len(shape) == 2 else None
    try:
        return len(x[0])
    except (TypeError, IndexError, KeyError):
        return None


def make_pool(ctx: Context, X: Any, y: Any, cat_features: Sequence[Any] | None, weight: Any = None,
              baseline: Any = None) -> Pool:
    """A learn or eval pool of (X, y, weight, baseline) on `ctx`: GPU arrays as they are, host tables
    (DataFrames, object arrays) column by column with their categorical features, numeric host
    matrices as one float32 matrix (the estimators' and cbgpu.dask's workers' pools)."""
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


def _check_n_features(model: Model, X: Any) -> None:
    expected = int(model.info()["n_flat_features"])
    n = _n_columns(X)
    if n is not None and n != expected:
        raise ValueError(f"X has {n} features, but the model was trained on {expected} features")


@contextlib.contextmanager
def prediction_input(model: Model, X: Any) -> Iterator[Any]:
    """`X` as `model` takes it: GPU arrays and pools as they are; host tables (DataFrames, object
    arrays, or any host data when the model has categorical features) as a pool on a CPU context,
    with the model's categorical features; plain numeric host matrices as they are."""
    cats = model.cat_feature_indices()
    X = from_catboost_pool(X)[0]
    _check_n_features(model, X)
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


class _CatBoostEstimator(BaseEstimator):
    """What the two estimators share, their constructor included: CatBoost's common parameters by
    name (scikit-learn reads them from this signature), any other CatBoost parameter in **kwargs."""

    _default_loss = "RMSE"

    def __init__(self, iterations=None, learning_rate=None, depth=None, l2_leaf_reg=None, model_size_reg=None,
                 loss_function=None, border_count=None, feature_border_type=None, nan_mode=None,
                 random_seed=None, random_strength=None, bootstrap_type=None, bagging_temperature=None,
                 subsample=None, score_function=None, leaf_estimation_method=None,
                 leaf_estimation_iterations=None, leaf_estimation_backtracking=None, boost_from_average=None,
                 eval_metric=None, custom_metric=None, od_type=None, od_wait=None, od_pval=None,
                 early_stopping_rounds=None, use_best_model=None, metric_period=None, verbose=None,
                 train_dir=None, allow_writing_files=None, thread_count=None, task_type=None, devices=None,
                 one_hot_max_size=None, max_ctr_complexity=None, simple_ctr=None, combinations_ctr=None,
                 per_feature_ctr=None, counter_calc_method=None, cat_features=None, device=None, **kwargs):
        values = dict(locals())
        kwargs = values.pop("kwargs")
        del values["self"]
        for name, value in values.items():
            setattr(self, name, value)  # as given: clone checks that get_params returns the same objects
        self._kwargs = kwargs

    # ---- parameters ------------------------------------------------------------------------------------

    def get_params(self, deep: bool = True) -> dict:
        """Every parameter: the named constructor arguments and the **kwargs ones."""
        params = super().get_params(deep=deep)
        params.update(self._kwargs)
        return params

    def set_params(self, **params: Any) -> "_CatBoostEstimator":
        named = set(self._get_param_names())
        for key, value in params.items():
            if key in named:
                setattr(self, key, value)
            else:
                self._kwargs[key] = value
        return self

    def _training_params(self, overrides: dict) -> dict:
        """The trainer's parameters: every set (not None) parameter but the Python-side ones, the
        **kwargs ones and fit()'s overrides."""
        params = {name: getattr(self, name) for name in self._get_param_names()
                  if name not in _PYTHON_SIDE and getattr(self, name) is not None}
        params.update(self._kwargs)
        params.update({k: v for k, v in overrides.items() if v is not None})
        return params

    def _seed(self) -> int:
        """The context's seed (the border subset draw): random_seed, as CatBoost uses one seed for all."""
        seed = getattr(self, "random_seed", None)
        if seed is None:
            seed = self._kwargs.get("random_state", 0)
        return int(seed or 0)

    def _log_period(self, verbose: Any, params: dict) -> int:
        """Every how many iterations fit prints a progress line (0: never). verbose: True (every
        metric_period iterations), False, or N; None: the constructor's, else logging_level/silent."""
        if verbose is None:
            verbose = self.verbose
        if verbose is None:
            level = params.get("logging_level")
            silent = params.get("silent")
            verbose = (level in ("Verbose", "Info", "Debug")) or silent is False
        if isinstance(verbose, (bool, np.bool_)):
            return int(params.get("metric_period") or 1) if verbose else 0
        return max(int(verbose), 0)

    # ---- pickling: the model travels as .cbm bytes ------------------------------------------------------

    def __getstate__(self) -> dict:
        state = self.__dict__.copy()
        model = state.pop("model_", None)
        if model is not None:
            state["_model_cbm"] = model.to_bytes("cbm")
        return state

    def __setstate__(self, state: dict) -> None:
        state = dict(state)
        cbm = state.pop("_model_cbm", None)
        self.__dict__.update(state)
        if cbm is not None:
            self.model_ = Model.from_bytes(cbm, "cbm")

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True  # NaN is a value (nan_mode Min/Max), as in CatBoost
        return tags

    def _more_tags(self) -> dict:  # scikit-learn < 1.6
        return {"allow_nan": True}

    # ---- fitting ------------------------------------------------------------------------------------

    def _pool(self, ctx: Context, X: Any, y: Any, cat_features: Sequence[Any] | None, weight: Any = None,
              baseline: Any = None) -> Pool:
        return make_pool(ctx, X, y, cat_features, weight, baseline)

    def _fit(self, X: Any, y: Any, eval_set: Any, sample_weight: Any, baseline: Any,
             callback: Callable[[dict], Any] | None, params: dict, cat_features: Sequence[Any] | None,
             verbose: Any) -> "_CatBoostEstimator":
        """Trains on (X, y); eval_set is None or an (X, y) pair (the public fits apply eval_pair)."""
        if y is None:
            raise ValueError("y: the labels are missing (pass y, or a catboost.Pool with a label)")
        n_features = _n_columns(X)
        if eval_set is not None:
            n_eval = _n_columns(eval_set[0])
            if n_features is not None and n_eval is not None and n_eval != n_features:
                raise ValueError(f"eval_set has {n_eval} features, but X has {n_features}")
        cats = list(cat_features) if cat_features is not None else self.cat_features
        if cats is not None and any(isinstance(c, str) for c in cats) and is_dataframe(X):
            cats = resolve_cat_features(cats, feature_names(X), None)  # names of the learn set, for eval sets too
        device = self.device if self.device is not None else _training_device(X, params)
        period = self._log_period(verbose, params)
        printer = _ProgressPrinter(period, has_eval=eval_set is not None) if period else None
        on_iteration = _chain(printer, callback)
        with Context(device, seed=self._seed()) as ctx:
            learn = self._pool(ctx, X, y, cats, sample_weight, baseline)
            test = None
            try:
                if eval_set is not None:
                    ex, ey = eval_set
                    test = self._pool(ctx, ex, ey, cats)
                model = train(learn, params, eval_set=test, callback=on_iteration)
            finally:
                learn.close()
                if test is not None:
                    test.close()
        self.model_ = model
        self.n_features_in_ = n_features if n_features is not None else model.info()["n_flat_features"]
        names = feature_names(X)
        if names is not None:
            self.feature_names_in_ = np.asarray(names, dtype=object)
        elif hasattr(self, "feature_names_in_"):
            del self.feature_names_in_
        if printer is not None:
            printer.finish(self)
        return self

    def _fit_params(self, use_best_model: Any, early_stopping_rounds: Any, metric_period: Any) -> dict:
        return {"use_best_model": use_best_model, "early_stopping_rounds": early_stopping_rounds,
                "metric_period": metric_period}

    # ---- prediction inputs ----------------------------------------------------------------------------

    def _check_n_features(self, X: Any) -> None:
        _check_n_features(self._model(), X)

    def _input(self, X: Any) -> contextlib.AbstractContextManager:
        return prediction_input(self._model(), X)

    def _model(self) -> Model:
        model = getattr(self, "model_", None)
        if model is None:
            raise ValueError(f"this {type(self).__name__} is not fitted yet: call fit() or load_model() first")
        return model

    def is_fitted(self) -> bool:
        return getattr(self, "model_", None) is not None

    # ---- CatBoost's fitted attributes -----------------------------------------------------------------

    @property
    def tree_count_(self) -> int:
        return self._model().tree_count

    @property
    def feature_names_(self) -> list[str]:
        """The model's feature names; unnamed features are named by their index, as in CatBoost."""
        return [name or str(j) for j, name in enumerate(self._model().feature_names())]

    def _training_info(self) -> dict:
        """The model's metric history (its "training" info), {} where it has none."""
        text = self._model().info_value("training")
        return json.loads(text).get("metrics", {}) if text else {}

    @property
    def best_iteration_(self) -> int | None:
        """The iteration with the best eval metric (None without an eval set)."""
        return best_iteration(self._training_info())

    def get_best_iteration(self) -> int | None:
        return self.best_iteration_

    @property
    def best_score_(self) -> dict:
        """{'learn': {metric: best}, 'validation': {metric: value at best_iteration_}}, as CatBoost."""
        return best_score(self._training_info())

    def get_best_score(self) -> dict:
        return self.best_score_

    @property
    def evals_result_(self) -> dict:
        """{'learn': {metric: [per iteration]}, 'validation': {metric: [...]}}: CatBoost's layout, over
        every iteration run (also those use_best_model cut off)."""
        return evals_result(self._training_info())

    def get_evals_result(self) -> dict:
        return self.evals_result_

    evals_result = get_evals_result

    def get_all_params(self) -> dict:
        """Every training parameter of the fitted model, defaults included, by CatBoost's plain names
        (as catboost's get_all_params)."""
        text = self._model().info_value("params")
        return plain_params(json.loads(text) if text else {})

    # ---- feature importances --------------------------------------------------------------------------

    def get_feature_importance(self, data: Any = None, type: str = "FeatureImportance",  # noqa: A002
                               prettified: bool = False) -> Any:
        """CatBoost's feature importances of the fitted model: type PredictionValuesChange (the
        default, "FeatureImportance"), LossFunctionChange (needs `data` with labels), ShapValues or
        Interaction; `data` a cbgpu.Pool, a catboost.Pool or an (X, y) pair. Shapes as CatBoost's;
        prettified=True gives a pandas DataFrame of (feature name, importance) for 1-D results."""
        model = self._model()
        compute = getattr(model, "get_feature_importance", None)
        if compute is None:
            raise NotImplementedError("feature importances need a libcbgpu with the feature importance entry "
                                      "point and its Model.get_feature_importance; this build has neither")
        kind = _IMPORTANCE_ALIASES.get(type, type)
        with self._importance_data(data) as pool:
            values = compute(type=kind, data=pool)
        if prettified and np.ndim(values) == 1:
            import pandas as pd
            frame = pd.DataFrame({"Feature Id": self.feature_names_, "Importances": values})
            return frame.sort_values("Importances", ascending=False, kind="stable").reset_index(drop=True)
        return values

    @property
    def feature_importances_(self) -> np.ndarray:
        """PredictionValuesChange of every feature (sums to 100), as CatBoost's feature_importances_."""
        return np.asarray(self.get_feature_importance(type="PredictionValuesChange"))

    @contextlib.contextmanager
    def _importance_data(self, data: Any) -> Iterator[Any]:
        """`data` as a cbgpu.Pool (with its label) on a CPU context, or None/a cbgpu.Pool as given."""
        if data is None or isinstance(data, Pool):
            yield data
            return
        if is_catboost_pool(data):
            X, y, weight, baseline = from_catboost_pool(data)
        else:
            X, y = data
            weight = baseline = None
        if getattr(self, "classes_", None) is not None and y is not None:
            y = np.searchsorted(self.classes_, _to_host(y)).astype(np.float32)
        self._check_n_features(X)
        with Context(CBG_DEVICE_CPU) as ctx:
            pool = self._pool(ctx, X, y, self._model().cat_feature_indices() or None, weight, baseline)
            try:
                yield pool
            finally:
                pool.close()

    # ---- prediction -------------------------------------------------------------------------------------

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

    def save_model(self, path: str, format: str = "cbm") -> None:  # noqa: A002 - CatBoost's name
        self._model().save(path, format=format)

    def load_model(self, path: str, format: str = "cbm") -> "_CatBoostEstimator":  # noqa: A002
        """Loads a .cbm or JSON model (CatBoost's or ours) into this estimator."""
        self.model_ = Model.load(path, format=format)
        self.n_features_in_ = int(self.model_.info()["n_flat_features"])
        self._loaded()
        return self

    def _loaded(self) -> None:
        pass


class CatBoostRegressor(RegressorMixin, _CatBoostEstimator):
    """catboost.CatBoostRegressor's interface over libcbgpu: fit(X, y, eval_set=..., sample_weight=...),
    predict(X), score(X, y) (R^2). Host data (NumPy, pandas, lists, numeric catboost.Pool) trains on
    the host path; CUDA arrays (CuPy, PyTorch) on their GPU, or on `device` when given.

    `device`: the CUDA ordinal to train on (None: where the data is; cbgpu.CBG_DEVICE_CPU: the host).
    `verbose`: True (a progress line every metric_period iterations), N (every N), False/None (quiet).
    Every other argument is CatBoost's parameter of that name (None: CatBoost's GPU default)."""

    _default_loss = "RMSE"

    def fit(self, X: Any, y: Any = None, cat_features: Sequence[Any] | None = None, *, sample_weight: Any = None,
            baseline: Any = None, use_best_model: bool | None = None, eval_set: Any = None, verbose: Any = None,
            metric_period: int | None = None, early_stopping_rounds: int | None = None,
            callback: Callable[[dict], Any] | None = None) -> "CatBoostRegressor":
        """Trains. X may also be a numeric catboost.Pool (its label, weights and baseline are used);
        eval_set: an (X, y) pair, a one-element list of one, or a catboost.Pool. `callback(progress)`
        runs after every iteration (see cbgpu.train); returning False stops training."""
        params = {"loss_function": self._default_loss,
                  **self._training_params(self._fit_params(use_best_model, early_stopping_rounds, metric_period))}
        X, y, sample_weight, baseline = from_catboost_pool(X, y, sample_weight, baseline)
        return self._fit(X, y, eval_pair(eval_set), sample_weight, baseline, callback, params, cat_features,
                         verbose)

    def predict(self, X: Any, prediction_type: str = "RawFormulaVal", ntree_start: int = 0, ntree_end: int = 0,
                output_type: str | None = None) -> Any:
        """Predictions, [rows] (or [rows, dims] for multi-dimensional losses); output_type as
        Model.predict (default: the input's framework and device)."""
        return self.predict_raw(X, prediction_type, ntree_start, ntree_end, output_type)


class CatBoostClassifier(ClassifierMixin, _CatBoostEstimator):
    """catboost.CatBoostClassifier's interface over libcbgpu: any class labels (classes_; Logloss for
    two classes, MultiClass otherwise unless loss_function says), predict, predict_proba, score
    (accuracy). Arguments as CatBoostRegressor's; CatBoost's class_names, classes_count and
    target_border go through **kwargs like any other parameter."""

    def fit(self, X: Any, y: Any = None, cat_features: Sequence[Any] | None = None, *, sample_weight: Any = None,
            baseline: Any = None, use_best_model: bool | None = None, eval_set: Any = None, verbose: Any = None,
            metric_period: int | None = None, early_stopping_rounds: int | None = None,
            callback: Callable[[dict], Any] | None = None) -> "CatBoostClassifier":
        """Trains on any class labels (mapped to 0..K-1 in sorted order; classes_ holds them). Other
        arguments as CatBoostRegressor.fit."""
        X, y, sample_weight, baseline = from_catboost_pool(X, y, sample_weight, baseline)
        if y is None:
            raise ValueError("y: the labels are missing (pass y, or a catboost.Pool with a label)")
        labels = _to_host(y)
        self.classes_ = np.unique(labels)
        params = self._training_params(self._fit_params(use_best_model, early_stopping_rounds, metric_period))
        params.setdefault("loss_function", "Logloss" if len(self.classes_) <= 2 else "MultiClass")
        index = _like(X, np.searchsorted(self.classes_, labels).astype(np.float32))
        eval_set = eval_pair(eval_set)
        if eval_set is not None:
            ex, ey = eval_set
            eval_set = (ex, _like(ex, np.searchsorted(self.classes_, _to_host(ey)).astype(np.float32)))
        return self._fit(X, index, eval_set, sample_weight, baseline, callback, params, cat_features, verbose)

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


class _ProgressPrinter:
    """CatBoost's progress lines on stdout, every `period` iterations and at the last one:
    `12:\tlearn: 0.5123456\ttest: 0.5234567\tbest: 0.5200000 (10)\ttotal: 1.2s\tremaining: 3.4s`."""

    def __init__(self, period: int, has_eval: bool):
        self.period = period
        self.has_eval = has_eval
        self.last: dict | None = None
        self.printed = -1

    def __call__(self, p: dict) -> None:
        self.last = p
        if p["iteration"] % self.period == 0 or p["iteration"] + 1 == p["iterations"]:
            self._print(p)

    def _print(self, p: dict) -> None:
        print(progress_line(p), file=sys.stdout, flush=True)
        self.printed = p["iteration"]

    def finish(self, estimator: _CatBoostEstimator) -> None:
        """The line of the iteration training stopped at, then CatBoost's closing lines."""
        if self.last is not None and self.printed != self.last["iteration"]:
            self._print(self.last)
        if self.has_eval and self.last is not None and self.last["best_iteration"] >= 0:
            print(f"\nbestTest = {self.last['best_eval_metric']:.10g}\nbestIteration = {self.last['best_iteration']}"
                  "\n", file=sys.stdout)
            trees = estimator.tree_count_
            if trees < self.last["iteration"] + 1:
                print(f"Shrink model to first {trees} iterations.", file=sys.stdout, flush=True)
        elif self.last is not None:
            print(f"total time {format_duration(self.last['elapsed_seconds'])}", file=sys.stdout, flush=True)


def _chain(*callbacks: Callable[[dict], Any] | None) -> Callable[[dict], Any] | None:
    """One callback calling each given one; training stops when any returns False."""
    active = [c for c in callbacks if c is not None]
    if not active:
        return None
    if len(active) == 1:
        return active[0]

    def call(progress: dict) -> Any:
        results = [c(progress) for c in active]
        return False if any(r is False for r in results) else None

    return call


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
