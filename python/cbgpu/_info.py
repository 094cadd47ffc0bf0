# SPDX-License-Identifier: Apache-2.0
"""Versions, build facts and device count of the loaded library."""
from __future__ import annotations

import ctypes
import json
from typing import Any

from ._capi import _check, lib


def version() -> str:
    """cbg_version_string(): "MAJOR.MINOR.PATCH" of the loaded library."""
    return lib.cbg_version_string().decode("ascii")


def version_number() -> int:
    """cbg_version_number(): MAJOR * 10000 + MINOR * 100 + PATCH."""
    return lib.cbg_version_number()


def build_info() -> dict[str, Any]:
    """cbg_build_info() parsed: version, git_sha, build_type, CUDA versions, device_count, ..."""
    text = ctypes.c_char_p()
    _check(lib.cbg_build_info(ctypes.byref(text)))
    return json.loads(text.value.decode("utf-8"))


def device_count() -> int:
    """Number of CUDA devices visible to this process (0 without GPU or driver)."""
    count = ctypes.c_int32()
    _check(lib.cbg_device_count(ctypes.byref(count)))
    return count.value
