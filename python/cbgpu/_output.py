# SPDX-License-Identifier: Apache-2.0
"""Where prediction results go: `output_type` = "cupy" | "torch" | "dlpack" | "numpy".

The default follows the input: a PyTorch tensor in gives a PyTorch tensor out, CuPy gives CuPy, NumPy
(or any other host array) gives NumPy, another DLPack device array (JAX, ...) gives a DLPack array.
Results computed on a GPU stay there unless "numpy" is asked for; that one host copy goes into
page-locked (pinned) memory from CuPy's or PyTorch's pinned allocator, passed to the library as a
kDLCUDAHost tensor (cbg_predict_to_host), so it is one direct DMA transfer.
"""
from __future__ import annotations

import ctypes
import math
from typing import Any

import numpy as np

from ._capi import CBG_TENSOR_DLTENSOR, cbg_tensor_ref_t
from ._dlpack import DLDataType, DLDevice, DLTensor, kDLCPU, kDLCUDA, kDLCUDAHost, kDLCUDAManaged, kDLFloat, \
    kDLInt, kDLUInt

OUTPUT_TYPES = ("cupy", "torch", "dlpack", "numpy")
_DEVICE_TYPES = (kDLCUDA, kDLCUDAManaged)


def framework_of(x: Any) -> str | None:
    """"torch", "cupy" or "numpy" for arrays of those libraries, else None."""
    root = type(x).__module__.split(".", 1)[0]
    return root if root in ("torch", "cupy", "numpy") else None


def is_device_array(x: Any) -> bool:
    """Whether `x` lives in CUDA device or managed memory (DLPack device type, or the CUDA array
    interface)."""
    if hasattr(x, "__dlpack_device__"):
        return int(x.__dlpack_device__()[0]) in _DEVICE_TYPES
    return hasattr(x, "__cuda_array_interface__")


def _importable(name: str) -> bool:
    try:
        __import__(name)
        return True
    except Exception:  # noqa: BLE001 - ImportError, or a package that fails to initialise
        return False


def resolve(output_type: str | None, data: Any, on_gpu: bool) -> str:
    """The output type to produce for input `data` (a Pool or an array) whose results are computed
    on a GPU (`on_gpu`) or on the host."""
    if output_type is not None:
        if output_type not in OUTPUT_TYPES:
            raise ValueError(f"output_type must be one of {', '.join(map(repr, OUTPUT_TYPES))}, "
                             f"not {output_type!r}")
        return output_type
    fw = framework_of(data)
    if fw in ("torch", "cupy"):
        return fw
    if is_device_array(data):
        return "dlpack"  # a device array of another framework: it can take the result through DLPack
    if not on_gpu:
        return "numpy"
    # A pool on a GPU: stay on the device with whichever array library is there.
    for name in ("cupy", "torch"):
        if _importable(name):
            return name
    raise ValueError("the results are on a GPU but neither CuPy nor PyTorch is importable: pass "
                     "output_type='numpy' for a host copy, or out= a writable DLPack device array")


# ---- allocation ---------------------------------------------------------------------------------------


def _torch_dtype(torch: Any, dtype: Any) -> Any:
    dtype = np.dtype(dtype)
    if dtype == np.uint32:
        return torch.int32  # leaf indexes (< 2^16); PyTorch supports few uint32 operations
    return {np.dtype(np.float64): torch.float64, np.dtype(np.float32): torch.float32,
            np.dtype(np.int32): torch.int32, np.dtype(np.int64): torch.int64}[dtype]


def device_empty(kind: str, shape: tuple[int, ...], dtype: Any, device: int) -> Any:
    """An uninitialised array of `kind` ("cupy", "torch", or "dlpack": CuPy else PyTorch) on CUDA
    device `device`."""
    if kind == "dlpack":
        kind = "cupy" if _importable("cupy") else "torch"
    if kind == "cupy":
        import cupy
        with cupy.cuda.Device(device):
            return cupy.empty(shape, dtype=dtype)
    import torch
    return torch.empty(shape, dtype=_torch_dtype(torch, dtype), device=torch.device("cuda", device))


def pinned_empty(shape: tuple[int, ...], dtype: Any) -> tuple[np.ndarray, bool]:
    """A NumPy array in pinned host memory (CuPy's pinned pool, else PyTorch's caching host
    allocator) and True; pageable memory and False when neither library is importable."""
    dtype = np.dtype(dtype)
    count = math.prod(shape)
    nbytes = max(count * dtype.itemsize, 1)
    try:
        import cupy
        mem = cupy.cuda.alloc_pinned_memory(nbytes)
        return np.frombuffer(mem, dtype=dtype, count=count).reshape(shape), True  # the array keeps mem alive
    except Exception:  # noqa: BLE001 - no CuPy: try PyTorch
        pass
    try:
        import torch
        t = torch.empty(nbytes, dtype=torch.uint8, pin_memory=True)
        return t.numpy()[:count * dtype.itemsize].view(dtype).reshape(shape), True  # base chain holds t
    except Exception:  # noqa: BLE001 - no usable pinned allocator
        return np.empty(shape, dtype=dtype), False


_DL_CODES = {"f": kDLFloat, "i": kDLInt, "u": kDLUInt}


class HostTensorRef:
    """A borrowed CBG_TENSOR_DLTENSOR describing a C-contiguous NumPy array, as pinned
    (kDLCUDAHost) or ordinary (kDLCPU) host memory. Keep it alive during the call."""

    def __init__(self, array: np.ndarray, pinned: bool):
        if not array.flags.c_contiguous:
            raise ValueError("a host output must be C-contiguous")
        self._array = array
        self._shape = (ctypes.c_int64 * array.ndim)(*array.shape)
        self._tensor = DLTensor(
            data=array.ctypes.data,
            device=DLDevice(kDLCUDAHost if pinned else kDLCPU, 0),
            ndim=array.ndim,
            dtype=DLDataType(_DL_CODES[array.dtype.kind], array.dtype.itemsize * 8, 1),
            shape=self._shape,
            strides=None,
            byte_offset=0,
        )

    def ref(self) -> cbg_tensor_ref_t:
        return cbg_tensor_ref_t(CBG_TENSOR_DLTENSOR, ctypes.addressof(self._tensor))


# ---- conversion and wrapping ------------------------------------------------------------------------------


class DLPackArray:
    """What output_type="dlpack" returns: the result behind the DLPack protocol only
    (`__dlpack__`, `__dlpack_device__`), for any consumer's `from_dlpack` (JAX, NumPy, CuPy,
    PyTorch, ...). `array` is the array that holds the memory (CuPy, PyTorch or NumPy)."""

    def __init__(self, array: Any):
        self.array = array

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.array.shape)

    def __dlpack_device__(self):
        return self.array.__dlpack_device__()

    def __dlpack__(self, *, stream: Any = None, max_version: Any = None, dl_device: Any = None,
                   copy: Any = None) -> Any:
        extra = {k: v for k, v in (("max_version", max_version), ("dl_device", dl_device), ("copy", copy))
                 if v is not None}
        base = {} if stream is None else {"stream": stream}
        try:
            return self.array.__dlpack__(**base, **extra)
        except TypeError:
            if not extra:
                raise
            return self.array.__dlpack__(**base)  # an older producer: legacy capsule

    def __repr__(self) -> str:
        return f"<cbgpu.DLPackArray {self.shape} on {self.__dlpack_device__()} over {type(self.array).__name__}>"


def from_host(result: np.ndarray, kind: str) -> Any:
    """A host result (NumPy) as `kind`: "torch" stays on the host (a CPU tensor sharing the memory),
    "cupy" goes to CuPy's current device, "dlpack" wraps the NumPy array."""
    if kind == "numpy":
        return result
    if kind == "torch":
        import torch
        if result.dtype == np.uint32:
            result = result.astype(np.int32)
        return torch.from_numpy(result)
    if kind == "cupy":
        import cupy
        return cupy.asarray(result)
    return DLPackArray(result)


def finish(array: Any, kind: str) -> Any:
    """The native array as the caller's `kind` (wraps it for "dlpack")."""
    return DLPackArray(array) if kind == "dlpack" and not isinstance(array, DLPackArray) else array


def unwrap(x: Any) -> Any:
    """The array behind a DLPackArray; anything else unchanged."""
    return x.array if isinstance(x, DLPackArray) else x


def rewrap(x: Any, fn: Any) -> Any:
    """fn applied to the array behind `x`, wrapped again if `x` was a DLPackArray."""
    return DLPackArray(fn(x.array)) if isinstance(x, DLPackArray) else fn(x)
