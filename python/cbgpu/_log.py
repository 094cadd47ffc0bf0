# SPDX-License-Identifier: Apache-2.0
"""The process-wide log callback (cbg_set_log_callback)."""
from __future__ import annotations

from typing import Callable, Optional

from ._capi import CBG_LOG_INFO, _check, cbg_log_fn, lib

# The library keeps only the C function pointer: this module keeps the ctypes thunk behind it alive.
_installed: Optional[cbg_log_fn] = None


def set_log_callback(fn: Optional[Callable[[int, str, str], None]],
                     min_level: int = CBG_LOG_INFO) -> None:
    """Installs fn(level, category, message) for records at or above `min_level` (CBG_LOG_*);
    fn=None silences the library again. fn may run on any thread that calls into the library."""
    global _installed
    if fn is None:
        _check(lib.cbg_set_log_callback(cbg_log_fn(), None, min_level))  # NULL fn: silence
        _installed = None
        return

    def thunk(_user_data, level, category, message):
        fn(level, category.decode("utf-8", "replace"), message.decode("utf-8", "replace"))

    c_fn = cbg_log_fn(thunk)
    _check(lib.cbg_set_log_callback(c_fn, None, min_level))
    # Replace the old thunk only after the library stopped using it.
    _installed = c_fn
