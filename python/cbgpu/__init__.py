# SPDX-License-Identifier: Apache-2.0
"""cbgpu: a pure-ctypes binding of libcbgpu's C ABI (capi/include/cbgpu/cbgpu.h).

The library is the one bundled in the package (cbgpu/lib/libcbgpu.so, put there by `pip install`),
else $CBGPU_LIBRARY, else build/*/libcbgpu.so of the source checkout, else the system's library path.
`python -m cbgpu` (or show_versions()) prints which one was loaded, its build and the visible devices.
"""
from ._capi import (CBG_CONTEXT_STRICT_NO_D2H, CBG_DEVICE_AUTO, CBG_DEVICE_CPU, CBG_ERR_BAD_DATA,
                    CBG_ERR_CUDA, CBG_ERR_CUDA_FATAL, CBG_ERR_DEVICE, CBG_ERR_DLPACK_VERSION,
                    CBG_ERR_DTYPE, CBG_ERR_FORMAT, CBG_ERR_INTERNAL, CBG_ERR_INVALID_ARGUMENT,
                    CBG_ERR_INVALID_HANDLE, CBG_ERR_IO, CBG_ERR_NO_DEVICE, CBG_ERR_NOT_IMPLEMENTED,
                    CBG_ERR_NULL_POINTER, CBG_ERR_OUT_OF_MEMORY, CBG_ERR_READ_ONLY, CBG_ERR_SHAPE,
                    CBG_ERR_STRICT_D2H, CBG_ERR_UNSUPPORTED, CBG_LOG_CRITICAL, CBG_LOG_DEBUG,
                    CBG_LOG_ERROR, CBG_LOG_INFO, CBG_LOG_OFF, CBG_LOG_TRACE, CBG_LOG_WARN, CBG_OK,
                    STATUS_NAMES, CbgError, last_error, status_string)
from ._context import Context, nccl_unique_id
from ._copy import tensor_copy
from ._info import build_info, device_count, version, version_number
from ._log import set_log_callback
from ._model import PREDICTION_TYPES, Model, cat_hash
from ._pool import Pool
from ._quantize import Quantized
from ._estimators import CatBoostClassifier, CatBoostRegressor
from ._train import train
from ._output import OUTPUT_TYPES, DLPackArray
from ._versions import package_version, show_versions

__version__ = package_version()

__all__ = [
    "CbgError", "Context", "Pool", "Quantized", "Model", "cat_hash", "PREDICTION_TYPES", "tensor_copy", "build_info", "device_count", "version",
    "version_number", "set_log_callback", "last_error", "status_string", "STATUS_NAMES",
    "CBG_DEVICE_AUTO", "CBG_DEVICE_CPU", "CBG_CONTEXT_STRICT_NO_D2H",
    "CBG_LOG_TRACE", "CBG_LOG_DEBUG", "CBG_LOG_INFO", "CBG_LOG_WARN", "CBG_LOG_ERROR",
    "CBG_LOG_CRITICAL", "CBG_LOG_OFF", *STATUS_NAMES.values(),
    "train", "CatBoostRegressor", "CatBoostClassifier", "nccl_unique_id",
    "OUTPUT_TYPES", "DLPackArray", "show_versions", "__version__",
]
