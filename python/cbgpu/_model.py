# SPDX-License-Identifier: Apache-2.0
"""Model: CatBoost .cbm / JSON models through the C ABI (load, save, info, host prediction)."""
from __future__ import annotations

import ctypes
import os

import numpy as np

from . import _capi
from ._capi import _check, lib
from ._handle import Handle

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
        floats = np.ascontiguousarray(floats, dtype=np.float32).reshape(-1, info["n_float_features"]) \
            if info["n_float_features"] else None
        cats = np.ascontiguousarray(cats, dtype=np.uint32).reshape(-1, info["n_cat_features"]) \
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

    def predict(self, floats, cats=None, prediction_type: str = "RawFormulaVal", tree_begin: int = 0,
                tree_end: int = 0) -> np.ndarray:
        """Host prediction: floats [rows, n_float_features], cats [rows, n_cat_features] as hashes."""
        d, rows, keep = self._desc(floats, cats, tree_begin, tree_end, prediction_type)
        cols = self.prediction_columns(prediction_type)
        out = np.empty((rows, cols), dtype=np.float64)
        _check(lib.cbg_model_predict_host(self.handle, ctypes.byref(d),
                                          out.ctypes.data_as(ctypes.POINTER(ctypes.c_double)), out.size))
        del keep
        return out

    def leaf_indexes(self, floats, cats=None, tree_begin: int = 0, tree_end: int = 0) -> np.ndarray:
        d, rows, keep = self._desc(floats, cats, tree_begin, tree_end, "RawFormulaVal")
        n_trees = (tree_end or self.info()["n_trees"]) - tree_begin
        out = np.empty((rows, n_trees), dtype=np.uint32)
        _check(lib.cbg_model_leaf_indexes_host(self.handle, ctypes.byref(d),
                                               out.ctypes.data_as(ctypes.POINTER(ctypes.c_uint32)), out.size))
        del keep
        return out
