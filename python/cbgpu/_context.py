# SPDX-License-Identifier: Apache-2.0
"""Context: the device, stream, seed and copy accounting that every other object works with."""
from __future__ import annotations

import ctypes

from ._handle import Handle
from ._capi import (CBG_CONTEXT_STRICT_NO_D2H, CBG_DEVICE_AUTO, CBG_LOG_TRACE, _check,
                    cbg_context_desc_t, cbg_copy_stats_t, cbg_memory_stats_t, lib)


NCCL_UNIQUE_ID_BYTES = 128


def nccl_unique_id() -> bytes:
    """A new NCCL unique id (cbg_nccl_unique_id) for Context(nccl_id=...). Make it in the process of
    rank 0 and keep that process alive while the ranks create their contexts."""
    out = (ctypes.c_uint8 * NCCL_UNIQUE_ID_BYTES)()
    _check(lib.cbg_nccl_unique_id(out))
    return bytes(out)


class Context(Handle):
    """A cbg_context_t. Use as a context manager, or call close(); the pools made with it stay valid."""

    _kind = "context"
    _free = staticmethod(lib.cbg_context_free)

    def __init__(self, device: int = CBG_DEVICE_AUTO, *, seed: int = 0, strict_no_d2h: bool = False,
                 log_level: int = CBG_LOG_TRACE, stream: int | None = None, device_memory_limit: int = 0,
                 nccl_comm: int | None = None, nccl_rank: int = 0, nccl_size: int = 0,
                 nccl_id: bytes | None = None, nccl_id_rank: int = 0, nccl_id_size: int = 0,
                 nccl_timeout_ms: int = 600000):
        """Creates a context (cbg_context_create).

        device: CUDA ordinal, CBG_DEVICE_CPU or CBG_DEVICE_AUTO; strict_no_d2h: refuse device-to-host
        copies above 64 KiB; log_level: this context's records below it are dropped; stream: a borrowed
        cudaStream_t as an integer, or None for a stream the context owns; device_memory_limit: a budget
        in bytes for this context's device memory (0: none).

        Training over several processes (one GPU each; cbgpu.dask does this for you):
        nccl_comm/nccl_rank/nccl_size: a ncclComm_t of yours (as an integer), borrowed; or
        nccl_id/nccl_id_rank/nccl_id_size: the 128 bytes of nccl_unique_id() made on rank 0, this
        process's rank and the number of ranks: the library makes the communicator (this call
        blocks until every rank has joined, at most nccl_timeout_ms, which also bounds the wait for
        one collective during training).
        """
        super().__init__()
        desc = cbg_context_desc_t()
        _check(lib.cbg_context_desc_init(ctypes.byref(desc)))
        desc.device = device
        desc.seed = seed
        desc.log_level = log_level
        desc.stream = stream
        desc.flags = CBG_CONTEXT_STRICT_NO_D2H if strict_no_d2h else 0
        desc.device_memory_limit = device_memory_limit
        desc.nccl_comm = nccl_comm
        desc.nccl_rank = nccl_rank
        desc.nccl_size = nccl_size
        if nccl_id is not None:
            if len(nccl_id) != NCCL_UNIQUE_ID_BYTES:
                raise ValueError(f"nccl_id holds {len(nccl_id)} bytes; nccl_unique_id() gives {NCCL_UNIQUE_ID_BYTES}")
            ctypes.memmove(desc.nccl_id, bytes(nccl_id), NCCL_UNIQUE_ID_BYTES)
        desc.nccl_id_rank = nccl_id_rank
        desc.nccl_id_size = nccl_id_size
        desc.nccl_timeout_ms = nccl_timeout_ms
        handle = ctypes.c_void_p()
        _check(lib.cbg_context_create(ctypes.byref(desc), ctypes.byref(handle)))
        self._handle = handle.value

    def abort(self) -> None:
        """Aborts the NCCL communicator the library made for this context (nccl_id_size > 0): a training
        blocked in a collective on another thread returns with an error. A no-op otherwise."""
        _check(lib.cbg_context_abort(self.handle))

    @property
    def device(self) -> int:
        """The CUDA ordinal the context works on, or CBG_DEVICE_CPU."""
        out = ctypes.c_int32()
        _check(lib.cbg_context_device(self.handle, ctypes.byref(out)))
        return out.value

    @property
    def stream(self) -> int | None:
        """The stream the context works on, as an integer (None for a CPU context)."""
        out = ctypes.c_void_p()
        _check(lib.cbg_context_get_stream(self.handle, ctypes.byref(out)))
        return out.value

    def set_stream(self, stream: int | None) -> None:
        """Makes the context work on a borrowed stream (None: back to its own)."""
        _check(lib.cbg_context_set_stream(self.handle, stream))

    def sync(self) -> None:
        """Waits for all work queued on the context's stream."""
        _check(lib.cbg_context_sync(self.handle))

    def copy_stats(self) -> dict[str, int]:
        """Copy counters since creation or the last reset: {"h2d_bytes": ..., "h2d_calls": ..., ...}."""
        stats = cbg_copy_stats_t(struct_size=ctypes.sizeof(cbg_copy_stats_t))
        _check(lib.cbg_copy_stats(self.handle, ctypes.byref(stats)))
        return {name: getattr(stats, name) for name, _ in cbg_copy_stats_t._fields_[1:]}

    def reset_copy_stats(self) -> None:
        """Zeroes the copy counters."""
        _check(lib.cbg_copy_stats_reset(self.handle))

    def memory_stats(self) -> dict[str, int]:
        """Device memory through this context: {"in_use_bytes", "peak_bytes", "limit_bytes",
        "allocations", "failed_allocations"} (zeros on the CPU)."""
        stats = cbg_memory_stats_t(struct_size=ctypes.sizeof(cbg_memory_stats_t))
        _check(lib.cbg_context_memory_stats(self.handle, ctypes.byref(stats)))
        return {name: getattr(stats, name) for name, _ in cbg_memory_stats_t._fields_[1:]}

    def reset_memory_peak(self) -> None:
        """Sets the peak to the bytes in use now."""
        _check(lib.cbg_context_reset_memory_peak(self.handle))

    def fail_allocation(self, n: int) -> None:
        """Testing hook: the n-th device allocation from now fails with CBG_ERR_OUT_OF_MEMORY (0 disarms)."""
        _check(lib.cbg_context_fail_allocation(self.handle, n))

    def __repr__(self) -> str:
        if self._handle is None:
            return "<cbgpu.Context closed>"
        return f"<cbgpu.Context device={self.device}>"
