# SPDX-License-Identifier: Apache-2.0
"""DLPack structs in ctypes and the Python `__dlpack__` capsule protocol (consumer side).

A producer's capsule is named "dltensor_versioned" (DLPack >= 1.0) or "dltensor" (legacy). Whoever
takes ownership renames it to "used_dltensor_versioned" / "used_dltensor"; the capsule's destructor
then leaves the deleter alone, and the new owner (here: libcbgpu) calls it exactly once.
"""
from __future__ import annotations

import ctypes
from dataclasses import dataclass
from typing import Any

from ._capi import (CBG_TENSOR_DLPACK_LEGACY, CBG_TENSOR_DLPACK_VERSIONED, CBG_TENSOR_DLTENSOR,
                    cbg_tensor_ref_t)

# ---- dlpack.h ----------------------------------------------------------------------------------------
kDLCPU, kDLCUDA, kDLCUDAHost, kDLCUDAManaged = 1, 2, 3, 13
kDLInt, kDLUInt, kDLFloat, kDLOpaqueHandle, kDLBfloat, kDLComplex, kDLBool = 0, 1, 2, 3, 4, 5, 6
DLPACK_FLAG_BITMASK_READ_ONLY = 1 << 0
DLPACK_FLAG_BITMASK_IS_COPIED = 1 << 1


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", DLDevice),
        ("ndim", ctypes.c_int32),
        ("dtype", DLDataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


class DLPackVersion(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


# Deleters take the struct's own address; declared with void* so any struct can be passed.
DLDeleter = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


class DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", DLDeleter)]


class DLManagedTensorVersioned(ctypes.Structure):
    _fields_ = [
        ("version", DLPackVersion),
        ("manager_ctx", ctypes.c_void_p),
        ("deleter", DLDeleter),
        ("flags", ctypes.c_uint64),
        ("dl_tensor", DLTensor),
    ]


# ---- PyCapsule access ----------------------------------------------------------------------------------
_api = ctypes.pythonapi  # PyDLL: holds the GIL, and raises the Python error a failing call sets
_api.PyCapsule_GetName.restype = ctypes.c_char_p
_api.PyCapsule_GetName.argtypes = [ctypes.py_object]
_api.PyCapsule_GetPointer.restype = ctypes.c_void_p
_api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_api.PyCapsule_SetName.restype = ctypes.c_int
_api.PyCapsule_SetName.argtypes = [ctypes.py_object, ctypes.c_void_p]

VERSIONED_NAME = b"dltensor_versioned"
LEGACY_NAME = b"dltensor"


def _static_c_string(text: bytes) -> int:
    # PyCapsule_SetName keeps the pointer, not a copy, and a capsule can outlive this module at
    # interpreter exit: give it memory that is never freed.
    libc = ctypes.CDLL(None)
    libc.strdup.restype = ctypes.c_void_p
    libc.strdup.argtypes = [ctypes.c_char_p]
    return libc.strdup(text)


_USED_NAMES = {
    VERSIONED_NAME: _static_c_string(b"used_" + VERSIONED_NAME),
    LEGACY_NAME: _static_c_string(b"used_" + LEGACY_NAME),
}

_CUDA_DEVICE_TYPES = (kDLCUDA, kDLCUDAManaged)


def _is_capsule(obj: Any) -> bool:
    return type(obj).__name__ == "PyCapsule"


def _call_dlpack(obj: Any, stream: int | None) -> Any:
    """obj.__dlpack__ asking for DLPack 1.0, with the consumer stream for CUDA producers."""
    kwargs = {}
    if stream is not None and hasattr(obj, "__dlpack_device__"):
        if int(obj.__dlpack_device__()[0]) in _CUDA_DEVICE_TYPES:
            kwargs["stream"] = stream  # producer orders its pending writes before our stream
    try:
        return obj.__dlpack__(max_version=(1, 0), **kwargs)
    except TypeError:
        return obj.__dlpack__(**kwargs)  # producer predates max_version: legacy capsule


@dataclass
class Exported:
    """One producer capsule, still owned by the capsule until `mark_consumed()` is called."""

    capsule: Any
    versioned: bool
    address: int  # of the DLManagedTensorVersioned / DLManagedTensor

    def consumed_ref(self) -> cbg_tensor_ref_t:
        """A consumed-kind reference (the library will call the deleter); call mark_consumed() next."""
        kind = CBG_TENSOR_DLPACK_VERSIONED if self.versioned else CBG_TENSOR_DLPACK_LEGACY
        return cbg_tensor_ref_t(kind, self.address)

    def mark_consumed(self) -> None:
        """Renames the capsule to used_*: ownership has passed, its destructor must not delete."""
        name = VERSIONED_NAME if self.versioned else LEGACY_NAME
        if _api.PyCapsule_SetName(self.capsule, _USED_NAMES[name]) != 0:
            raise RuntimeError("PyCapsule_SetName failed")

    def borrowed_ref(self) -> cbg_tensor_ref_t:
        """A reference the library only borrows. Versioned tensors keep their kind so that the
        read-only flag stays visible (cbg_tensor_copy borrows the DLPack kinds too); legacy ones
        are passed as the bare DLTensor inside (kind CBG_TENSOR_DLTENSOR)."""
        if self.versioned:
            return cbg_tensor_ref_t(CBG_TENSOR_DLPACK_VERSIONED, self.address)
        offset = DLManagedTensor.dl_tensor.offset  # 0, but say what is meant
        return cbg_tensor_ref_t(CBG_TENSOR_DLTENSOR, self.address + offset)


def export(obj: Any, stream: int | None = None) -> Exported:
    """Takes a DLPack capsule from `obj` (anything with `__dlpack__`, or a capsule itself).

    `stream` is the consumer's CUDA stream as an integer; it is passed to CUDA producers only.
    The capsule is not renamed here: until mark_consumed(), dropping it releases the tensor.
    """
    if _is_capsule(obj):
        capsule = obj
    elif hasattr(obj, "__dlpack__"):
        capsule = _call_dlpack(obj, stream)
    else:
        raise TypeError(f"{type(obj).__name__} does not support DLPack (no __dlpack__ method)")
    name = _api.PyCapsule_GetName(capsule)
    if name not in (VERSIONED_NAME, LEGACY_NAME):
        raise ValueError(f"capsule named {name!r} is not an unused DLPack capsule")
    address = _api.PyCapsule_GetPointer(capsule, name)
    return Exported(capsule, name == VERSIONED_NAME, address)
