# SPDX-License-Identifier: Apache-2.0
"""Model: CatBoost .cbm / JSON models through the C ABI (load, save, info, prediction on the host
from arrays, and from pools or GPU arrays with the GPU evaluator)."""
from __future__ import annotations

import contextlib
import ctypes
import os
from typing import Any, Iterator

import numpy as np

from . import _capi, _output
from ._capi import _check, cbg_predict_desc_t, lib
from ._context import Context
from ._dlpack import export
from ._handle import Handle
from ._pool import Pool

FORMATS = {"cbm": _capi.CBG_MODEL_FORMAT_CBM, "json": _capi.CBG_MODEL_FORMAT_JSON}
PREDICTION_TYPES = {
    "RawFormulaVal": _capi.CBG_PREDICTION_RAW_FORMULA_VAL,
    "Probability": _capi.CBG_PREDICTION_PROBABILITY,
    "LogProbability": _capi.CBG_PREDICTION_LOG_PROBABILITY,
    "Class": _capi.CBG_PREDICTION_CLASS,
    "Exponent": _capi.CBG_PREDICTION_EXPONENT,
    "RMSEWithUncertainty": _capi.CBG_PREDICTION_RMSE_WITH_UNCERTAINTY,
    "MultiProbability": _capi.CBG_PREDICTION_MULTI_PROBABILITY,
}


FSTR_TYPES = {
    "PredictionValuesChange": _capi.CBG_FSTR_PREDICTION_VALUES_CHANGE,
    "FeatureImportance": _capi.CBG_FSTR_PREDICTION_VALUES_CHANGE,  # CatBoost's choice for non-ranking losses
    "LossFunctionChange": _capi.CBG_FSTR_LOSS_FUNCTION_CHANGE,
    "ShapValues": _capi.CBG_FSTR_SHAP_VALUES,
    "Interaction": _capi.CBG_FSTR_INTERACTION,
}


def cat_hash(value) -> int:
    """CatBoost's hash of a categorical value: str/bytes as UTF-8 bytes, ints as decimal text."""
    out = ctypes.c_uint32()
    if isinstance(value, (bool, int, np.integer)):
        _check(lib.cbg_cat_hash_int64(int(value), ctypes.byref(out)))
    else:
        data = value if isinstance(value, bytes) else str(value).encode("utf-8")
        _check(lib.cbg_cat_hash_string(data, len(data), ctypes.byref(out)))
    return out.value


def _format(fmt: str) -> int:
    try:
        return FORMATS[fmt]
    except KeyError:
        raise ValueError(f"format must be one of {sorted(FORMATS)}, not {fmt!r}") from None


class Model(Handle):
    """A CatBoost oblivious-tree model (cbg_model_t)."""

    _kind = "model"
    _free = lib.cbg_model_free

    def __init__(self, handle: int):
        super().__init__()
        self._handle = handle

    # Copies and pickles carry the model as .cbm bytes: never two owners of one handle.
    def __reduce__(self):
        return (Model.from_bytes, (self.to_bytes("cbm"), "cbm"))

    def __copy__(self) -> "Model":
        return Model.from_bytes(self.to_bytes("cbm"))

    def __deepcopy__(self, memo: dict) -> "Model":
        return self.__copy__()

    @classmethod
    def load(cls, path: str | os.PathLike, format: str = "cbm") -> "Model":
        h = ctypes.c_void_p()
        _check(lib.cbg_model_load_file(os.fsencode(path), _format(format), ctypes.byref(h)))
        return cls(h.value)

    @classmethod
    def from_bytes(cls, data: bytes, format: str = "cbm") -> "Model":
        h = ctypes.c_void_p()
        _check(lib.cbg_model_load_buffer(data, len(data), _format(format), ctypes.byref(h)))
        return cls(h.value)

    def save(self, path: str | os.PathLike, format: str = "cbm") -> None:
        _check(lib.cbg_model_save_file(self.handle, os.fsencode(path), _format(format)))

    def to_bytes(self, format: str = "cbm") -> bytes:
        data = ctypes.c_void_p()
        size = ctypes.c_size_t()
        _check(lib.cbg_model_save_buffer(self.handle, _format(format), ctypes.byref(data), ctypes.byref(size)))
        return ctypes.string_at(data.value, size.value) if size.value else b""

    def info(self) -> dict:
        i = _capi.cbg_model_info_t(struct_size=ctypes.sizeof(_capi.cbg_model_info_t))
        _check(lib.cbg_model_info(self.handle, ctypes.byref(i)))
        return {name: getattr(i, name) for name, _ in i._fields_ if name not in ("struct_size", "reserved")}

    def feature_names(self) -> list[str]:
        out = []
        for j in range(self.info()["n_flat_features"]):
            name = ctypes.c_char_p()
            _check(lib.cbg_model_feature_name(self.handle, j, ctypes.byref(name)))
            out.append(name.value.decode("utf-8", "replace"))
        return out

    def cat_feature_indices(self) -> list[int]:
        out = []
        for j in range(self.info()["n_cat_features"]):
            v = ctypes.c_int64()
            _check(lib.cbg_model_cat_feature_index(self.handle, j, ctypes.byref(v)))
            out.append(v.value)
        return out

    def float_feature_indices(self) -> list[int]:
        out = []
        for j in range(self.info()["n_float_features"]):
            v = ctypes.c_int64()
            _check(lib.cbg_model_float_feature_index(self.handle, j, ctypes.byref(v)))
            out.append(v.value)
        return out

    def class_names(self) -> list[str]:
        out = []
        for j in range(self.info()["n_class_names"]):
            name = ctypes.c_char_p()
            _check(lib.cbg_model_class_name(self.handle, j, ctypes.byref(name)))
            out.append(name.value.decode("utf-8", "replace"))
        return out

    def info_value(self, key: str) -> str | None:
        v = ctypes.c_char_p()
        _check(lib.cbg_model_info_value(self.handle, key.encode("utf-8"), ctypes.byref(v)))
        return None if v.value is None else v.value.decode("utf-8", "replace")

    def prediction_columns(self, prediction_type: str = "RawFormulaVal") -> int:
        v = ctypes.c_int64()
        _check(lib.cbg_model_prediction_columns(self.handle, PREDICTION_TYPES[prediction_type], ctypes.byref(v)))
        return v.value

    def _desc(self, floats, cats, tree_begin, tree_end, prediction_type):
        info = self.info()
        floats = _rows(floats, np.float32, info["n_float_features"], "float features") \
            if info["n_float_features"] else None
        cats = _rows(cats, np.uint32, info["n_cat_features"], "categorical features (hashes)") \
            if info["n_cat_features"] else None
        rows = floats.shape[0] if floats is not None else (cats.shape[0] if cats is not None else 0)
        d = _capi.cbg_model_predict_host_desc_t()
        _check(lib.cbg_model_predict_host_desc_init(ctypes.byref(d)))
        d.n_rows = rows
        if floats is not None:
            d.float_features = floats.ctypes.data_as(ctypes.POINTER(ctypes.c_float))
            d.float_row_stride = floats.shape[1]
        if cats is not None:
            d.cat_hashes = cats.ctypes.data_as(ctypes.POINTER(ctypes.c_uint32))
            d.cat_row_stride = cats.shape[1]
        d.prediction_type = PREDICTION_TYPES[prediction_type]
        d.tree_begin = tree_begin
        d.tree_end = tree_end
        return d, rows, (floats, cats)

    def get_feature_importance(self, type: str = "PredictionValuesChange", data: Any = None, *, label: Any = None,
                               weight: Any = None, baseline: Any = None, ctx: Context | None = None) -> np.ndarray:
        """CatBoost's feature importances (cbg_model_feature_importance), as NumPy arrays in the shapes
        of catboost's get_feature_importance: "PredictionValuesChange" (or "FeatureImportance") and
        "LossFunctionChange" [features]; "ShapValues" [rows, features + 1], or [rows, classes,
        features + 1] for multiclass (the last column is the expected value); "Interaction" [pairs, 3]
        rows of (first feature, second feature, score).

        `data`: a cbgpu.Pool, a catboost.Pool (numeric features), or host rows (NumPy, DataFrame,
        lists; categorical columns as the model's categorical features) with `label`, `weight` and
        `baseline` as needed; host rows become a pool on a CPU context (or on `ctx`).
        LossFunctionChange and ShapValues need data; PredictionValuesChange counts its leaf weights
        on it when given."""
        try:
            code = FSTR_TYPES[type]
        except KeyError:
            raise ValueError(f"type must be one of {sorted(FSTR_TYPES)}, not {type!r}") from None
        if data is None or isinstance(data, Pool):
            return self._feature_importance(code, data)
        from ._tabular import from_catboost_pool, host_table  # noqa: PLC0415 - the tabular helpers load pandas lazily
        X, label, weight, baseline = from_catboost_pool(data, label, weight, baseline)
        own_ctx = ctx is None
        if own_ctx:
            ctx = Context(_capi.CBG_DEVICE_CPU)
        try:
            table = host_table(X, self.cat_feature_indices() or None)
            if table is None:
                pool = Pool(ctx, np.ascontiguousarray(np.asarray(X), dtype=np.float32), label=_array(label),
                            weight=_array(weight, np.float32), baseline=_array(baseline))
            else:
                pool = Pool(ctx, columns=table.columns, string_columns=table.string_columns,
                            cat_features=table.cat_features, label=_array(label), weight=_array(weight, np.float32),
                            baseline=_array(baseline))
            try:
                return self._feature_importance(code, pool)
            finally:
                pool.close()
        finally:
            if own_ctx:
                ctx.close()

    def _feature_importance(self, code: int, pool: Pool | None) -> np.ndarray:
        pool_handle = pool.handle if pool is not None else None
        shape = (ctypes.c_int64 * 3)()
        ndim = ctypes.c_int32()
        _check(lib.cbg_model_feature_importance(self.handle, code, pool_handle, None, 0, shape, ctypes.byref(ndim)))
        result = np.empty(tuple(int(shape[i]) for i in range(ndim.value)), dtype=np.float64)
        _check(lib.cbg_model_feature_importance(self.handle, code, pool_handle,
                                                result.ctypes.data_as(ctypes.POINTER(ctypes.c_double)), result.size,
                                                shape, ctypes.byref(ndim)))
        return result

    @property
    def tree_count(self) -> int:
        """Number of trees."""
        return int(self.info()["n_trees"])

    def predict(self, floats, cats=None, prediction_type: str = "RawFormulaVal", tree_begin: int = 0,
                tree_end: int = 0, *, output_type: str | None = None, out=None, dtype=np.float64,
                stream: int | None = None, ctx: Context | None = None):
        """Predictions [rows, columns] of the trees [tree_begin, tree_end) (0: to the end; the bias
        is added only when tree_begin is 0, as CatBoost does).

        - `floats` a cbgpu.Pool, or an array in GPU memory (CuPy, PyTorch, JAX, ... through DLPack;
          [rows, n_flat_features], categorical columns as integers): the GPU evaluator
          (cbg_predict_to_device) for a pool on a GPU context, the host evaluator for a CPU pool.
          A GPU array becomes a pool on `ctx` (default: a new context on the array's device).
        - otherwise the host evaluator on host arrays (NumPy, or anything np.asarray takes):
          `floats` [rows, n_float_features] float32, `cats` [rows, n_cat_features] as CatBoost
          hashes (cat_hash).

        `output_type`: "cupy", "torch", "dlpack" (an object with __dlpack__/__dlpack_device__) or
        "numpy"; by default the framework and device of the input (torch in: torch out, CuPy in:
        CuPy out, NumPy in: NumPy out; a GPU pool: CuPy, else PyTorch). Results computed on a GPU
        come to the host only for "numpy", in one copy into pinned memory. Or pass `out`, any
        writable DLPack array of the right shape (output_shape) and dtype, written in place and
        returned. `dtype`: float64 or float32 for new outputs. Without `stream` the call waits for
        its results; with one it only enqueues on it. Errors raise CbgError with the library's
        message.
        """
        if _on_device_path(floats):
            with self._as_pool(floats, ctx) as pool:
                return self._predict_pool(pool, floats, _capi.CBG_PREDICT_VALUES, prediction_type, tree_begin,
                                          tree_end, output_type, out, dtype, stream)
        if out is not None:
            raise ValueError("out= needs a cbgpu.Pool or a GPU array as input")
        kind = _output.resolve(output_type, floats, on_gpu=False)
        return _output.finish(_output.from_host(self._predict_host(floats, cats, prediction_type, tree_begin,
                                                                   tree_end, dtype), kind), kind)

    def leaf_indexes(self, floats, cats=None, tree_begin: int = 0, tree_end: int = 0, *,
                     output_type: str | None = None, out=None, stream: int | None = None,
                     ctx: Context | None = None):
        """Leaf index of every row in every tree of the range, [rows, trees] (uint32; int32 for
        PyTorch outputs). Accepts what predict() accepts."""
        if _on_device_path(floats):
            with self._as_pool(floats, ctx) as pool:
                kind = _output.resolve(output_type, floats, pool.info()["device"] >= 0) if out is None else None
                dtype = np.int32 if kind == "torch" else np.uint32
                return self._predict_pool(pool, floats, _capi.CBG_PREDICT_LEAF_INDEXES, "RawFormulaVal",
                                          tree_begin, tree_end, output_type, out, dtype, stream)
        if out is not None:
            raise ValueError("out= needs a cbgpu.Pool or a GPU array as input")
        kind = _output.resolve(output_type, floats, on_gpu=False)
        d, rows, keep = self._desc(_host_array(floats), _host_array(cats), tree_begin, tree_end, "RawFormulaVal")
        n_trees = (tree_end or self.tree_count) - tree_begin
        result = np.empty((rows, max(n_trees, 0)), dtype=np.uint32)
        _check(lib.cbg_model_leaf_indexes_host(self.handle, ctypes.byref(d),
                                               result.ctypes.data_as(ctypes.POINTER(ctypes.c_uint32)), result.size))
        del keep
        return _output.finish(_output.from_host(result, kind), kind)

    calc_leaf_indexes = leaf_indexes

    def staged_predict(self, floats, cats=None, prediction_type: str = "RawFormulaVal", ntree_start: int = 0,
                       ntree_end: int = 0, eval_period: int = 1, *, output_type: str | None = None,
                       dtype=np.float64, ctx: Context | None = None) -> Iterator[Any]:
        """Yields the predictions of the trees [ntree_start, e) for e = ntree_start + eval_period,
        ntree_start + 2 * eval_period, ..., ntree_end (0: all trees), as CatBoost's staged_predict.
        Inputs and outputs as predict(); a GPU array becomes one pool for all the stages."""
        end = ntree_end or self.tree_count
        if eval_period <= 0:
            raise ValueError(f"eval_period must be positive, not {eval_period}")
        if not 0 <= ntree_start < end <= self.tree_count:
            raise ValueError(f"tree range [{ntree_start}, {end}) is not within the model's {self.tree_count} trees")
        stops = [min(i + eval_period, end) for i in range(ntree_start, end, eval_period)]
        if _on_device_path(floats):
            with self._as_pool(floats, ctx) as pool:
                for stop in stops:
                    yield self._predict_pool(pool, floats, _capi.CBG_PREDICT_VALUES, prediction_type, ntree_start,
                                             stop, output_type, None, dtype, None)
            return
        kind = _output.resolve(output_type, floats, on_gpu=False)
        for stop in stops:
            yield _output.finish(_output.from_host(
                self._predict_host(floats, cats, prediction_type, ntree_start, stop, dtype), kind), kind)

    def _predict_host(self, floats, cats, prediction_type, tree_begin, tree_end, dtype) -> np.ndarray:
        d, rows, keep = self._desc(_host_array(floats), _host_array(cats), tree_begin, tree_end, prediction_type)
        result = np.empty((rows, self.prediction_columns(prediction_type)), dtype=np.float64)
        _check(lib.cbg_model_predict_host(self.handle, ctypes.byref(d),
                                          result.ctypes.data_as(ctypes.POINTER(ctypes.c_double)), result.size))
        del keep
        return result if np.dtype(dtype) == np.float64 else result.astype(dtype)

    # ---- pools and GPU arrays: cbg_predict_* ----------------------------------------------------------

    def _predict_desc(self, output: int, prediction_type: str, tree_begin: int, tree_end: int):
        d = cbg_predict_desc_t()
        _check(lib.cbg_predict_desc_init(ctypes.byref(d)))
        d.prediction_type = PREDICTION_TYPES[prediction_type]
        d.output = output
        d.tree_begin = tree_begin
        d.tree_end = tree_end
        return d

    def output_shape(self, n_rows: int, prediction_type: str = "RawFormulaVal", tree_begin: int = 0,
                     tree_end: int = 0, leaf_indexes: bool = False) -> tuple[int, int]:
        """Shape of the output of predict() (or leaf_indexes()) over n_rows rows."""
        output = _capi.CBG_PREDICT_LEAF_INDEXES if leaf_indexes else _capi.CBG_PREDICT_VALUES
        d = self._predict_desc(output, prediction_type, tree_begin, tree_end)
        shape = (ctypes.c_int64 * 2)()
        _check(lib.cbg_predict_output_shape(self.handle, ctypes.byref(d), n_rows, shape))
        return int(shape[0]), int(shape[1])

    def _predict_pool(self, pool: Pool, data, output, prediction_type, tree_begin, tree_end, output_type, out,
                      dtype, stream):
        """cbg_predict_to_device into a device array, or cbg_predict_to_host into a host one."""
        info = pool.info()
        on_gpu = info["device"] >= 0
        d = self._predict_desc(output, prediction_type, tree_begin, tree_end)
        kind = None
        if out is None:
            kind = _output.resolve(output_type, data, on_gpu)
            shape = self.output_shape(info["n_rows"], prediction_type, tree_begin, tree_end,
                                      output == _capi.CBG_PREDICT_LEAF_INDEXES)
            if kind == "numpy" or not on_gpu:
                result, pinned = _output.pinned_empty(shape, dtype) if on_gpu else (np.empty(shape, dtype), False)
                host = _output.HostTensorRef(result, pinned)
                _check(lib.cbg_predict_to_host(self.handle, pool.handle, ctypes.byref(d), ctypes.byref(host.ref()),
                                               stream))
                return _output.finish(_output.from_host(result, kind), kind)
            out = _output.device_empty(kind, shape, dtype, info["device"])
        exported = export(out, pool.ctx.stream if on_gpu else None)
        ref = exported.borrowed_ref()
        to_device = _output.is_device_array(out)
        call = lib.cbg_predict_to_device if to_device else lib.cbg_predict_to_host
        _check(call(self.handle, pool.handle, ctypes.byref(d), ctypes.byref(ref), stream))
        del exported
        if to_device and stream is None:
            pool.ctx.sync()  # results ready for any stream of the caller
        return out if kind is None else _output.finish(out, kind)

    @contextlib.contextmanager
    def _as_pool(self, data, ctx: Context | None):
        """`data` itself when it is a Pool; else a pool over the GPU array, closed afterwards."""
        if isinstance(data, Pool):
            yield data
            return
        expected = self.info()["n_flat_features"]
        shape = tuple(getattr(data, "shape", ()))
        if len(shape) != 2 or shape[1] != expected:
            got = f"{shape[1]} features" if len(shape) == 2 else f"shape {shape}"
            raise ValueError(f"the data has {got}, but the model has {expected} features: pass [rows, {expected}]")
        own_ctx = ctx is None
        if own_ctx:
            ctx = Context(int(data.__dlpack_device__()[1]))
        try:
            pool = Pool(ctx, data, cat_features=self.cat_feature_indices() or None)
            try:
                yield pool
            finally:
                pool.close()
        finally:
            if own_ctx:
                ctx.close()


def _rows(x, dtype, n: int, what: str) -> np.ndarray:
    """`x` as a C-contiguous [rows, n] array; one row for a 1-D array of n values. Any other shape
    is an error naming both counts (never a reshape into a different number of rows)."""
    a = np.ascontiguousarray(x, dtype=dtype)
    if a.ndim == 1 and a.shape[0] == n:
        return a.reshape(1, n)
    if a.ndim != 2 or a.shape[1] != n:
        got = f"{a.shape[1]} columns" if a.ndim == 2 else f"shape {a.shape}"
        raise ValueError(f"{what}: the data has {got}, but the model has {n} {what}: pass [rows, {n}]")
    return a


def _array(x, dtype=np.float64):
    """A contiguous host array for a pool's label, weight or baseline (None stays None)."""
    return None if x is None else np.ascontiguousarray(np.asarray(_host_array(x)), dtype=dtype)


def _host_array(x):
    """A host array from NumPy, a CPU PyTorch tensor or anything np.asarray takes (None stays None)."""
    if x is None:
        return None
    if _output.framework_of(x) == "torch":
        x = x.detach().numpy()
    return np.asarray(x)


def _on_device_path(x) -> bool:
    """Pools and GPU arrays go through cbg_predict_*; host arrays through the host reference."""
    return isinstance(x, Pool) or _output.is_device_array(x)
