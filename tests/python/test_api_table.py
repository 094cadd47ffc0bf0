# SPDX-License-Identifier: Apache-2.0
"""cbg_get_api: the dlopen table lists every function the header declares (new ones are appended to
the table, so its order is its own), and each slot holds the address of the exported function of
that name."""
from __future__ import annotations

import ctypes
import re
from pathlib import Path

from cbgpu import _capi

HEADER = Path(__file__).resolve().parents[2] / "capi" / "include" / "cbgpu" / "cbgpu.h"


def _header_functions(text: str) -> list[str]:
    return re.findall(r"CBG_API\s+[^;]*?\b(cbg_\w+)\s*\(", text)


def _table_members(text: str) -> list[str]:
    body = re.search(r"typedef struct cbg_api_v1_t \{(.*?)\} cbg_api_v1_t;", text, re.S).group(1)
    return re.findall(r"\(\*(\w+)\)\(", body)


def test_table_names_every_function_once():
    text = HEADER.read_text()
    declared = [f for f in _header_functions(text) if f != "cbg_get_api"]
    members = ["cbg_" + m for m in _table_members(text)]
    assert len(members) == len(set(members)), "a function is listed twice in cbg_api_v1_t"
    missing = sorted(set(declared) - set(members))
    unknown = sorted(set(members) - set(declared))
    assert not missing, f"append these to cbg_api_v1_t (and capi/src/api_table.cpp): {missing}"
    assert not unknown, f"cbg_api_v1_t lists functions the header does not declare: {unknown}"


def test_table_slots_hold_the_exported_functions():
    text = HEADER.read_text()
    members = _table_members(text)
    lib = _capi.load_library()
    get_api = lib.cbg_get_api
    get_api.argtypes = [ctypes.c_uint32, ctypes.POINTER(ctypes.c_void_p)]
    get_api.restype = ctypes.c_int
    table = ctypes.c_void_p()
    assert get_api(1, ctypes.byref(table)) == _capi.CBG_OK
    header = ctypes.cast(table, ctypes.POINTER(ctypes.c_size_t))
    struct_size = header[0]
    # size_t struct_size, uint32_t api_version, uint32_t library_version, then the pointers.
    first = ctypes.sizeof(ctypes.c_size_t) + 8
    assert struct_size == first + len(members) * ctypes.sizeof(ctypes.c_void_p)
    versions = ctypes.cast(table.value + ctypes.sizeof(ctypes.c_size_t), ctypes.POINTER(ctypes.c_uint32))
    assert versions[0] == 1
    assert versions[1] == lib.cbg_version_number()
    slots = ctypes.cast(table.value + first, ctypes.POINTER(ctypes.c_void_p))
    for i, name in enumerate(members):
        exported = ctypes.cast(getattr(lib, "cbg_" + name), ctypes.c_void_p).value
        assert slots[i] == exported, f"slot {i} ({name}) does not hold cbg_{name}"
