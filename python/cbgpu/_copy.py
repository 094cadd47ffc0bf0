# SPDX-License-Identifier: Apache-2.0
"""tensor_copy: the library's accounted copy between two tensors (cbg_tensor_copy)."""
from __future__ import annotations

import ctypes
from typing import Any

from ._capi import _check, lib
from ._context import Context
from ._dlpack import export


def tensor_copy(ctx: Context, dst: Any, src: Any) -> None:
    """Copies `src` into `dst` (same dtype and shape, any strides and devices the context reaches).

    Both are borrowed: their capsules stay alive and unrenamed during the call, and release the
    tensors afterwards as usual. Raises CbgError (e.g. CBG_ERR_READ_ONLY for a read-only `dst`,
    CBG_ERR_STRICT_D2H in strict mode).
    """
    ctx_handle = ctx.handle
    stream = ctx.stream
    dst_capsule = export(dst, stream)
    src_capsule = export(src, stream)
    dst_ref = dst_capsule.borrowed_ref()
    src_ref = src_capsule.borrowed_ref()
    _check(lib.cbg_tensor_copy(ctx_handle, ctypes.byref(dst_ref), ctypes.byref(src_ref)))
    # The capsules (locals) are dropped only now, after the library is done with the memory.
    del dst_capsule, src_capsule
