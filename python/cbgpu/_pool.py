# SPDX-License-Identifier: Apache-2.0
"""Pool: a dataset of column views over DLPack tensors (cbg_pool_from_dlpack), without copies."""
from __future__ import annotations

import ctypes
from typing import Any, Sequence

import numpy as np

from ._handle import Handle
from ._capi import (ArrowArray, ArrowDeviceArray, ARROW_DEVICE_CPU, _check, cbg_pool_desc_t, cbg_pool_info_t,
                    cbg_string_column_t, cbg_tensor_ref_t, lib)
from ._context import Context
from ._dlpack import Exported, export

_capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_pointer.restype = ctypes.c_void_p
_capsule_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]


def is_arrow(obj: Any) -> bool:
    """Whether `obj` exports the Arrow PyCapsule interface (pyarrow arrays and record batches, cuDF,
    polars, nanoarrow, ...): taken as Arrow even when it also speaks DLPack (pyarrow arrays do, for
    primitive types only)."""
    return hasattr(obj, "__arrow_c_device_array__") or hasattr(obj, "__arrow_c_array__")


def _arrow_capsules(obj: Any) -> tuple[int, int, Any, Any]:
    """(schema pointer, ArrowDeviceArray pointer, keep-alive objects): the device form when the
    producer has one, else the host form wrapped as an ARROW_DEVICE_CPU device array. The plain
    ArrowArray is moved out of its capsule (its release set to NULL there), as the spec's move."""
    if hasattr(obj, "__arrow_c_device_array__"):
        schema_cap, array_cap = obj.__arrow_c_device_array__()
        return (_capsule_pointer(schema_cap, b"arrow_schema"), _capsule_pointer(array_cap, b"arrow_device_array"),
                (schema_cap, array_cap))
    schema_cap, array_cap = obj.__arrow_c_array__()
    src = _capsule_pointer(array_cap, b"arrow_array")
    dev = ArrowDeviceArray()
    ctypes.memmove(ctypes.addressof(dev.array), src, ctypes.sizeof(ArrowArray))
    ctypes.c_void_p.from_address(src + ArrowArray.release.offset).value = None  # moved: the capsule lets go
    dev.device_id = -1
    dev.device_type = ARROW_DEVICE_CPU
    return _capsule_pointer(schema_cap, b"arrow_schema"), ctypes.addressof(dev), (schema_cap, array_cap, dev)


class Pool(Handle):
    """A cbg_pool_t. The library owns the tensors from construction on and releases them on close().

    Each tensor argument is anything with `__dlpack__` (NumPy, CuPy, PyTorch, ...), a DLPack capsule,
    or a ready cbg_tensor_ref_t (passed through unchanged: its ownership is the caller's business).
    """

    _kind = "pool"
    _free = staticmethod(lib.cbg_pool_free)

    def __init__(self, ctx: Context, features: Any = None, *, columns: Sequence[Any] | None = None,
                 label: Any = None, weight: Any = None, baseline: Any = None,
                 cat_features: Sequence[int] | None = None,
                 feature_names: Sequence[str] | None = None, producer_stream: int | None = None,
                 string_columns: Sequence[tuple] | None = None):
        """Builds the pool. On failure CbgError is raised and the library has already released every
        tensor it was given.

        `features` may also be an Arrow array or record batch (anything with
        `__arrow_c_device_array__` or `__arrow_c_array__`: pyarrow, cuDF, polars, nanoarrow): its
        columns become the features through cbg_pool_from_arrow (utf8 and dictionary columns are
        categorical; integer columns listed in cat_features too). `string_columns` adds categorical
        features given in Arrow's string layout as tensors: tuples (feature, offsets, bytes) or
        (feature, offsets, bytes, codes) for dictionary columns (see cbg_string_column_t)."""
        super().__init__()
        ctx_handle = ctx.handle  # before any capsule is taken: a closed context fails cleanly here
        stream = ctx.stream  # CUDA producers order their writes before this consumer stream
        exported: list[Exported] = []

        # Step 1: take every capsule. Nothing is renamed yet, so an exception here (a producer that
        # refuses to export) leaves the capsules to release their tensors as usual.
        def ref(obj: Any) -> cbg_tensor_ref_t:
            if obj is None:
                return cbg_tensor_ref_t()
            if isinstance(obj, cbg_tensor_ref_t):
                return obj
            e = export(obj, stream)
            exported.append(e)
            return e.consumed_ref()

        if not is_arrow(features) and hasattr(features, "__arrow_c_stream__") and hasattr(features, "combine_chunks"):
            # A pyarrow Table: one record batch of its combined chunks (no copy when it has one chunk).
            batches = features.combine_chunks().to_batches()
            if len(batches) != 1:
                raise ValueError(f"a table of {len(batches)} record batches after combine_chunks(); pass one batch")
            features = batches[0]
        arrow = is_arrow(features)
        desc = cbg_pool_desc_t()
        _check(lib.cbg_pool_desc_init(ctypes.byref(desc)))
        desc.features = cbg_tensor_ref_t() if arrow else ref(features)
        string_refs = [cbg_string_column_t(int(sc[0]), ref(sc[1]), ref(sc[2]),
                                           ref(sc[3] if len(sc) > 3 else None)) for sc in string_columns or ()]
        strings_array = (cbg_string_column_t * len(string_refs))(*string_refs)
        if string_refs:
            desc.string_columns = ctypes.addressof(strings_array)
            desc.n_string_columns = len(string_refs)
        column_refs = [ref(c) for c in columns or ()]
        desc.label = ref(label)
        desc.weight = ref(weight)
        desc.baseline = ref(baseline)

        # Arrays the descriptor points into; locals, so they live until the call returns.
        columns_array = (cbg_tensor_ref_t * len(column_refs))(*column_refs)
        if column_refs:
            desc.columns = columns_array
            desc.n_columns = len(column_refs)
        cats = list(cat_features or ())
        cats_array = (ctypes.c_int32 * len(cats))(*cats)
        if cats:
            desc.cat_features = cats_array
            desc.n_cat_features = len(cats)
        names = None
        if feature_names is not None:
            encoded = [str(n).encode("utf-8") for n in feature_names]
            names = (ctypes.c_char_p * len(encoded))(*encoded)
            desc.feature_names = names
            desc.n_feature_names = len(encoded)
        desc.producer_stream = producer_stream

        # Step 2: hand over. From the rename on, only the library may call the deleters (and the Arrow
        # release callbacks: cbg_pool_from_arrow takes the structs over, also when it fails).
        arrow_structs = _arrow_capsules(features) if arrow else None
        for e in exported:
            e.mark_consumed()
        handle = ctypes.c_void_p()
        if arrow:
            # The library takes the Arrow structs over (releases the schema, moves the array), also on error.
            schema_ptr, array_ptr, _keep = arrow_structs
            _check(lib.cbg_pool_from_arrow(ctx_handle, ctypes.byref(desc), schema_ptr, array_ptr,
                                           ctypes.byref(handle)))
        else:
            _check(lib.cbg_pool_from_dlpack(ctx_handle, ctypes.byref(desc), ctypes.byref(handle)))
        self._handle = handle.value
        self.ctx = ctx  # predictions into device arrays wait for its stream


    def info(self) -> dict[str, int]:
        """Shape and roles: n_rows, n_features, n_cat_features, label_dims, baseline_dims,
        has_weight (bool) and device (CUDA ordinal or CBG_DEVICE_CPU)."""
        info = cbg_pool_info_t(struct_size=ctypes.sizeof(cbg_pool_info_t))
        _check(lib.cbg_pool_info(self.handle, ctypes.byref(info)))
        out = {name: getattr(info, name) for name, _ in cbg_pool_info_t._fields_[1:]}
        out["has_weight"] = bool(out["has_weight"])
        return out

    def feature_name(self, index: int) -> str:
        """Name of feature `index` ("" when the pool has no names)."""
        name = ctypes.c_char_p()
        _check(lib.cbg_pool_feature_name(self.handle, index, ctypes.byref(name)))
        return name.value.decode("utf-8")

    def is_categorical(self, index: int) -> bool:
        """Whether feature `index` is categorical."""
        out = ctypes.c_int32()
        _check(lib.cbg_pool_is_categorical(self.handle, index, ctypes.byref(out)))
        return bool(out.value)

    def cat_hashes(self, index: int) -> np.ndarray:
        """CatBoost's hashes (uint32, one per row) of categorical feature `index`, copied to the host
        (cbg_pool_cat_hashes): for inspection and tests."""
        out = np.empty(self.info()["n_rows"], dtype=np.uint32)
        _check(lib.cbg_pool_cat_hashes(self.handle, index, out.ctypes.data_as(ctypes.POINTER(ctypes.c_uint32)),
                                       out.size))
        return out

    free = Handle.close

    def __repr__(self) -> str:
        if self._handle is None:
            return "<cbgpu.Pool closed>"
        i = self.info()
        return f"<cbgpu.Pool {i['n_rows']} rows x {i['n_features']} features, device {i['device']}>"
