# SPDX-License-Identifier: Apache-2.0
"""Test helpers: error assertions and hand-built DLPack tensors whose deleter calls are counted."""
from __future__ import annotations

import contextlib
import ctypes
import gc
import sys

import numpy as np
import pytest

from cbgpu import CbgError, STATUS_NAMES, last_error
from cbgpu._capi import (CBG_TENSOR_DLPACK_LEGACY, CBG_TENSOR_DLPACK_VERSIONED,
                         CBG_TENSOR_DLTENSOR, cbg_tensor_ref_t)
from cbgpu._dlpack import (DLDeleter, DLManagedTensor, DLManagedTensorVersioned, kDLBool, kDLComplex,
                           kDLCPU, kDLFloat, kDLInt, kDLUInt)


def _check_message(message: str, fragments) -> None:
    for fragment in fragments:
        assert fragment.lower() in message.lower(), f"{fragment!r} not in error message {message!r}"


@contextlib.contextmanager
def expect_error(code: int, *fragments: str):
    """Expects a CbgError with status `code` whose message contains every fragment."""
    with pytest.raises(CbgError) as info:
        yield info
    err = info.value
    assert err.code == code, f"expected {STATUS_NAMES[code]}, got {err}"
    assert err.name == STATUS_NAMES[code]
    assert err.message, "cbg_last_error() was empty after a failed call"
    _check_message(err.message, fragments)


def assert_status(status: int, code: int, *fragments: str) -> None:
    """For raw C calls: checks the returned status and that cbg_last_error() names the problem."""
    message = last_error()
    assert status == code, f"expected {STATUS_NAMES[code]}, got {STATUS_NAMES.get(status, status)}: {message}"
    if code == 0:
        assert message == "", f"last error not cleared after success: {message!r}"
    else:
        assert message, "cbg_last_error() was empty after a failed call"
        _check_message(message, fragments)


def refcount(obj) -> int:
    """sys.getrefcount after collecting cycles (tracebacks can keep capsules alive for a while)."""
    gc.collect()
    return sys.getrefcount(obj)


_NUMPY_KIND_TO_DL = {"f": kDLFloat, "i": kDLInt, "u": kDLUInt, "b": kDLBool, "c": kDLComplex}


def dl_dtype(dtype) -> tuple[int, int, int]:
    """(code, bits, lanes) of a NumPy dtype."""
    dtype = np.dtype(dtype)
    return _NUMPY_KIND_TO_DL[dtype.kind], dtype.itemsize * 8, 1


class ManagedTensor:
    """A DLManagedTensorVersioned (or legacy DLManagedTensor) built by hand over a NumPy array.

    Every field can be overridden to make invalid tensors. `deleted` counts deleter calls; the
    deleter also checks it receives this struct's own address.
    """

    def __init__(self, array=None, *, legacy=False, version=(1, 0), flags=0, device=(kDLCPU, 0),
                 dtype=None, shape=None, strides=None, data="array", byte_offset=0, ndim=None,
                 null_shape=False, with_deleter=True):
        self.array = np.zeros((4, 3), np.float32) if array is None else array
        self.deleted = 0
        self.bad_addresses = []
        shape = self.array.shape if shape is None else shape
        if strides is None:
            strides = [s // self.array.itemsize for s in self.array.strides]
        self._shape = (ctypes.c_int64 * max(len(shape), 1))(*shape)
        self._strides = (ctypes.c_int64 * max(len(strides), 1))(*strides)
        self.struct = DLManagedTensor() if legacy else DLManagedTensorVersioned()
        if not legacy:
            self.struct.version.major, self.struct.version.minor = version
            self.struct.flags = flags
        t = self.struct.dl_tensor
        t.data = self.array.ctypes.data if data == "array" else data
        t.device.device_type, t.device.device_id = device
        t.ndim = len(shape) if ndim is None else ndim
        t.dtype.code, t.dtype.bits, t.dtype.lanes = dtype or dl_dtype(self.array.dtype)
        if not null_shape:
            t.shape = self._shape
        t.strides = self._strides
        t.byte_offset = byte_offset
        self._deleter = DLDeleter(self._on_delete)  # kept alive as long as this object
        if with_deleter:
            self.struct.deleter = self._deleter
        self.kind = CBG_TENSOR_DLPACK_LEGACY if legacy else CBG_TENSOR_DLPACK_VERSIONED

    def _on_delete(self, address):
        self.deleted += 1
        if address != self.address:
            self.bad_addresses.append(address)

    @property
    def address(self) -> int:
        return ctypes.addressof(self.struct)

    def ref(self) -> cbg_tensor_ref_t:
        """A consumed-kind reference to the managed struct."""
        return cbg_tensor_ref_t(self.kind, self.address)

    def dltensor_ref(self) -> cbg_tensor_ref_t:
        """A borrowed reference (CBG_TENSOR_DLTENSOR) to the DLTensor inside."""
        return cbg_tensor_ref_t(CBG_TENSOR_DLTENSOR, ctypes.addressof(self.struct.dl_tensor))

    def assert_deleted_once(self) -> None:
        assert self.deleted == 1, f"deleter called {self.deleted} times, expected exactly once"
        assert not self.bad_addresses, f"deleter got foreign addresses {self.bad_addresses}"


class LegacyProducer:
    """Wraps an array as a producer that predates DLPack 1.0: __dlpack__ takes no max_version."""

    def __init__(self, array):
        self.array = array

    def __dlpack__(self, stream=None):
        return self.array.__dlpack__()  # NumPy's legacy "dltensor" capsule

    def __dlpack_device__(self):
        return self.array.__dlpack_device__()
