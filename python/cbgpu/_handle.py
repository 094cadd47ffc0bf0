# SPDX-License-Identifier: Apache-2.0
"""The lifetime of one library handle, shared by Context and Pool."""
from __future__ import annotations

from ._capi import _check


class Handle:
    """Owns a cbg_*_t handle: `handle`, close() (idempotent), context manager, finaliser.

    Subclasses set `_kind` (a word for messages) and `_free` (the cbg_*_free function).
    """

    _kind = "handle"
    _free = None

    def __init__(self) -> None:
        self._handle: int | None = None

    @property
    def handle(self) -> int:
        """The raw pointer as an integer; ValueError once closed."""
        if self._handle is None:
            raise ValueError(f"the {self._kind} is closed")
        return self._handle

    def close(self) -> None:
        """Frees the handle; idempotent."""
        handle, self._handle = self._handle, None
        if handle is not None:
            _check(type(self)._free(handle))

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # noqa: BLE001 - a finaliser cannot report; the handle is gone either way
            pass
