# SPDX-License-Identifier: Apache-2.0
"""The bad-input matrix (issue #10): every case through the C ABI or the CLI gets a specific status
code (or exit code) and a message that names the problem, and the next valid call still works.

Each case is one row of CASES (C ABI) or CLI_CASES (cbgpu-bench). docs/RELIABILITY.md holds the same
table; `python3 tests/python/test_bad_inputs.py` prints it, and test_docs_list_every_case keeps the
two in step. After every C ABI case the same context trains and predicts a small model and must get
the predictions of a run that saw no error (no state damage).
"""
from __future__ import annotations

import ctypes
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import cbgpu  # noqa: E402
from cbgpu import CbgError, _capi  # noqa: E402
from cbgpu._capi import lib  # noqa: E402
from helpers import ManagedTensor  # noqa: E402

C = _capi
ROWS, FEATURES = 200, 4


@dataclass(frozen=True)
class Case:
    id: str
    what: str                       # the bad input, for the docs table
    code: int                       # expected status (C ABI) or exit code (CLI)
    fragments: tuple[str, ...]      # words the message must contain
    run: Callable[["Env"], object]  # C ABI: returns a status or raises CbgError; CLI: the arguments
    after: Callable[[Path], None] | None = None  # CLI: checks the folder afterwards (old files kept)


# ---- the environment every case runs in ------------------------------------------------------------------


class Env:
    """A CPU context with a learn pool, a trained model and a scratch folder."""

    def __init__(self, tmp: Path):
        self.tmp = tmp
        self.ctx = cbgpu.Context(cbgpu.CBG_DEVICE_CPU)
        rng = np.random.RandomState(0)
        self.X = rng.randn(ROWS, FEATURES).astype(np.float32)
        self.y = (self.X[:, 0] + 0.3 * rng.randn(ROWS) > 0).astype(np.float64)
        self.pool = cbgpu.Pool(self.ctx, self.X, label=self.y)
        self.model = cbgpu.train(self.pool, {"iterations": 5, "loss_function": "Logloss", "random_seed": 1})
        self.cbm = self.model.to_bytes()

    def close(self):
        self.model.close()
        self.pool.close()
        self.ctx.close()

    # Helpers the cases use.
    def train(self, params, X=None, y=None, weight=None, eval_pool=None):
        X = self.X if X is None else X
        y = self.y if y is None else y
        with cbgpu.Pool(self.ctx, X, label=y, weight=weight) as p:
            return cbgpu.train(p, params, eval_set=eval_pool)

    def pool_of(self, *args, **kwargs):
        return cbgpu.Pool(self.ctx, *args, **kwargs)

    def predict_into(self, out: ManagedTensor | C.cbg_tensor_ref_t, pool=None, model=None, **desc_fields) -> int:
        desc = C.cbg_predict_desc_t()
        lib.cbg_predict_desc_init(ctypes.byref(desc))
        for name, value in desc_fields.items():
            setattr(desc, name, value)
        ref = out.dltensor_ref() if isinstance(out, ManagedTensor) else out
        model_handle = (model or self.model).handle if not isinstance(model, int) else model
        C._check(lib.cbg_predict_to_host(model_handle, (pool or self.pool).handle, ctypes.byref(desc),
                                         ctypes.byref(ref), None))

    def file(self, name: str, data: bytes | str) -> str:
        path = self.tmp / name
        path.write_bytes(data.encode() if isinstance(data, str) else data)
        return str(path)

    def load(self, name: str, data: bytes | str, fmt: str = "cbm"):
        return cbgpu.Model.load(self.file(name, data), format=fmt)


def _out(shape=(ROWS, 1), dtype=np.float64, **kw) -> ManagedTensor:
    return ManagedTensor(np.zeros(shape, dtype), **kw)


def _freed_model(e: Env) -> int:
    m = e.train({"iterations": 2})
    handle = m.handle
    m.close()
    return handle


def _ctx_desc(**fields) -> int:
    d = C.cbg_context_desc_t()
    lib.cbg_context_desc_init(ctypes.byref(d))
    for name, value in fields.items():
        setattr(d, name, value)
    out = ctypes.c_void_p()
    status = lib.cbg_context_create(ctypes.byref(d), ctypes.byref(out))
    if status == C.CBG_OK:
        lib.cbg_context_free(out)
    return status


def _train_raw(e: Env, params: bytes | None, out=True) -> int:
    model = ctypes.c_void_p()
    status = lib.cbg_train(e.pool.handle, params, None, None, ctypes.byref(model) if out else None)
    if status == C.CBG_OK:
        lib.cbg_model_free(model)
    return status


def _nan_at(a, row=7, value=np.nan):
    a = np.array(a, dtype=np.float64)
    a[row] = value
    return a


def _corrupt(data: bytes, at: int) -> bytes:
    b = bytearray(data)
    for i in range(at, min(at + 64, len(b))):
        b[i] ^= 0xA5
    return bytes(b)


LOGLOSS = {"iterations": 3, "loss_function": "Logloss"}
OK, ARG, NUL, HANDLE, DTYPE, SHAPE, DEVICE, DLVER, RO, NODEV, IO, FMT, BAD = (
    C.CBG_OK, C.CBG_ERR_INVALID_ARGUMENT, C.CBG_ERR_NULL_POINTER, C.CBG_ERR_INVALID_HANDLE, C.CBG_ERR_DTYPE,
    C.CBG_ERR_SHAPE, C.CBG_ERR_DEVICE, C.CBG_ERR_DLPACK_VERSION, C.CBG_ERR_READ_ONLY, C.CBG_ERR_NO_DEVICE,
    C.CBG_ERR_IO, C.CBG_ERR_FORMAT, C.CBG_ERR_BAD_DATA)


def _param(name, value, *fragments):
    return Case(f"param-{name}-{value}".replace(" ", ""), f"`{name}` = {value!r}", ARG, (name, *fragments),
                lambda e: e.train({"iterations": 3, name: value}))


CASES: list[Case] = [
    # -- tensors given to pools ------------------------------------------------------------------------------
    Case("pool-dtype-complex", "complex64 features", DTYPE, ("features", "dtype"),
         lambda e: e.pool_of(np.zeros((3, 2), np.complex64))),
    Case("pool-rank-3", "3-D feature tensor", SHAPE, ("features", "rank 3"),
         lambda e: e.pool_of(np.zeros((3, 2, 2), np.float32))),
    Case("pool-label-rows", "label with fewer rows than the features", SHAPE, ("label", "10 rows"),
         lambda e: e.pool_of(e.X, label=e.y[:10])),
    Case("pool-weight-rows", "weight with fewer rows than the features", SHAPE, ("weight", "10 rows"),
         lambda e: e.pool_of(e.X, label=e.y, weight=np.ones(10))),
    Case("pool-label-nan", "NaN label", BAD, ("label", "NaN"),
         lambda e: e.pool_of(e.X, label=_nan_at(e.y))),
    Case("pool-label-inf", "infinite label", BAD, ("label", "infinite"),
         lambda e: e.pool_of(e.X, label=_nan_at(e.y, value=np.inf))),
    Case("pool-weight-negative", "negative weights", BAD, ("weight", "negative"),
         lambda e: e.pool_of(e.X, label=e.y, weight=-np.ones(ROWS))),
    Case("pool-weight-nan", "NaN weight", BAD, ("weight", "NaN"),
         lambda e: e.pool_of(e.X, label=e.y, weight=_nan_at(np.ones(ROWS)))),
    Case("pool-cat-index", "categorical feature index beyond the features", ARG, ("categorical", "7"),
         lambda e: e.pool_of(e.X, cat_features=[7])),
    Case("pool-cat-float", "a float column marked categorical", DTYPE, ("categorical", "float32"),
         lambda e: e.pool_of(e.X, cat_features=[0])),
    Case("pool-names-count", "1 feature name for 4 features", ARG, ("feature names",),
         lambda e: e.pool_of(e.X, feature_names=["a"])),
    Case("pool-dlpack-version", "DLPack tensor of major version 2", DLVER, ("version",),
         lambda e: _pool_from_managed(e, ManagedTensor(e.X, version=(2, 0)))),
    Case("pool-null-data", "DLPack tensor with a NULL data pointer and rows", NUL, ("data pointer is NULL",),
         lambda e: _pool_from_managed(e, ManagedTensor(e.X, data=None))),
    Case("pool-null-shape", "DLPack tensor with a NULL shape", SHAPE, ("shape",),
         lambda e: _pool_from_managed(e, ManagedTensor(e.X, null_shape=True))),
    Case("pool-device-cuda", "GPU tensor given to a CPU context", DEVICE, ("GPU",),
         lambda e: _pool_from_managed(e, ManagedTensor(e.X, device=(2, 0)))),
    Case("pool-null-desc", "NULL pool descriptor", NUL, ("desc",),
         lambda e: lib.cbg_pool_from_dlpack(e.ctx.handle, None, ctypes.byref(ctypes.c_void_p()))),
    # -- training data -------------------------------------------------------------------------------------
    Case("train-empty", "empty learn pool (0 rows)", BAD, ("no rows",),
         lambda e: e.train(LOGLOSS, X=e.X[:0], y=e.y[:0])),
    Case("train-no-label", "learn pool without a label", BAD, ("learn pool has no label",),
         lambda e: cbgpu.train(e.pool_of(e.X), LOGLOSS)),
    Case("train-logloss-label", "Logloss label 2", BAD, ("label 2", "Logloss"),
         lambda e: e.train(LOGLOSS, y=e.y * 2)),
    Case("train-class-label", "MultiClass label 1.5 (not a class index)", BAD, ("label 1.5", "row 0"),
         lambda e: e.train({"iterations": 3, "loss_function": "MultiClass"}, y=e.y * 1.5)),
    Case("train-classes-count-label", "MultiClass label outside classes_count (label 2, classes_count 2)", BAD,
         ("label 2", "row"),
         lambda e: e.train({"iterations": 3, "loss_function": "MultiClass", "classes_count": 2}, y=e.y * 2)),
    Case("train-class-names-label", "label not listed in class_names", BAD, ("label", "row", "class_names"),
         lambda e: e.train({"iterations": 3, "loss_function": "MultiClass", "class_names": [1, 5, 7]})),
    Case("train-nan-forbidden", "NaN feature with nan_mode Forbidden", BAD, ("NaN", "Forbidden"),
         lambda e: e.train({"iterations": 2, "nan_mode": "Forbidden"}, X=np.where(e.X > 1, np.nan, e.X))),
    Case("train-eval-features", "eval pool with 3 features, learn pool with 4", ARG, ("eval pool", "3 features"),
         lambda e: e.train(LOGLOSS, eval_pool=e.pool_of(e.X[:, :3], label=e.y))),
    Case("train-eval-no-label", "eval pool without a label", BAD, ("eval pool has no label",),
         lambda e: e.train(LOGLOSS, eval_pool=e.pool_of(e.X))),
    # -- parameters ------------------------------------------------------------------------------------------
    Case("param-unknown", "unknown parameter `iterationz`", ARG, ("unknown parameter", "iterationz"),
         lambda e: e.train({"iterationz": 5})),
    _param("depth", 0, "[1, 16]"),
    _param("depth", 17, "[1, 16]"),
    _param("depth", "six", "not a number"),
    _param("learning_rate", -1),
    _param("iterations", 0),
    _param("loss_function", "Foo", "Foo"),
    _param("l2_leaf_reg", -1),
    _param("border_count", 0),
    _param("border_count", 70000),
    _param("bootstrap_type", "Foo", "Bayesian"),
    _param("subsample", 1.5),
    _param("od_type", "Foo", "IncToDec"),
    _param("random_strength", -1),
    _param("bagging_temperature", -1),
    Case("params-not-json", "params_json `{` (not JSON)", ARG, ("not valid JSON", "line 1, column 2"),
         lambda e: _train_raw(e, b"{")),
    Case("params-json-position", "params_json with a bad literal on its third line", ARG,
         ("not valid JSON", "line 3, column 15", "invalid literal"),
         lambda e: _train_raw(e, b'{\n  "depth": 4,\n  "iters": tru\n}')),
    Case("params-not-object", "params_json `[1,2]`", ARG, ("JSON object",), lambda e: _train_raw(e, b"[1,2]")),
    Case("train-null-out", "cbg_train with out = NULL", NUL, ("out is NULL",),
         lambda e: _train_raw(e, b"{}", out=False)),
    # -- model files -----------------------------------------------------------------------------------------
    Case("model-truncated", ".cbm cut in half", FMT, ("malformed .cbm",),
         lambda e: e.load("half.cbm", e.cbm[: len(e.cbm) // 2])),
    Case("model-magic", ".cbm with a wrong magic", FMT, ("magic",),
         lambda e: e.load("magic.cbm", b"XXXX" + e.cbm[4:])),
    Case("model-empty", "empty .cbm file", FMT, ("malformed .cbm",), lambda e: e.load("empty.cbm", b"")),
    Case("model-corrupted", ".cbm with 64 flipped bytes inside the flatbuffer", FMT, ("malformed",),
         lambda e: e.load("flipped.cbm", _corrupt(e.cbm, 24))),
    Case("model-missing", "model file that does not exist", IO, ("cannot open", "nonexistent.cbm"),
         lambda e: cbgpu.Model.load(str(e.tmp / "nonexistent.cbm"))),
    Case("model-json-syntax", "JSON model that is not JSON", FMT, ("malformed JSON",),
         lambda e: e.load("bad.json", "{not json", "json")),
    Case("model-json-fields", "JSON model without features_info", FMT, ("features_info",),
         lambda e: e.load("fields.json", '{"oblivious_trees": 5}', "json")),
    Case("model-save-path", "saving into a folder that does not exist", IO, ("cannot write", "No such file"),
         lambda e: e.model.save(str(e.tmp / "no_such_dir" / "m.cbm"))),
    # -- prediction --------------------------------------------------------------------------------------------
    Case("predict-read-only", "read-only output tensor", RO, ("read-only",),
         lambda e: e.predict_into(_kept(_out(flags=1)).ref())),
    Case("predict-dtype", "int32 output tensor", DTYPE, ("int32",), lambda e: e.predict_into(_out(dtype=np.int32))),
    Case("predict-shape", "output of 199 rows for 200", SHAPE, ("[199, 1]",),
         lambda e: e.predict_into(_out(shape=(ROWS - 1, 1)))),
    Case("predict-rank", "3-D output tensor", SHAPE, ("rank 3",), lambda e: e.predict_into(_out(shape=(ROWS, 1, 1)))),
    Case("predict-device", "GPU output tensor on a CPU context", DEVICE, ("GPU memory",),
         lambda e: e.predict_into(_out(device=(2, 0)))),
    Case("predict-type", "prediction_type 99", ARG, ("prediction_type",),
         lambda e: e.predict_into(_out(), prediction_type=99)),
    Case("predict-tree-range", "tree range [3, 99) of a 5-tree model", ARG, ("tree range",),
         lambda e: e.predict_into(_out(), tree_begin=3, tree_end=99)),
    Case("predict-features", "pool with 3 features for a 4-feature model", SHAPE, ("feature 3", "3 features"),
         lambda e: e.predict_into(_out(), pool=e.pool_of(e.X[:, :3]))),
    # -- handles and pointers -------------------------------------------------------------------------------
    Case("handle-freed-model", "a freed model handle", HANDLE, ("not a live cbg_model_t",),
         lambda e: e.predict_into(_out(), model=_freed_model(e))),
    Case("handle-wrong-type", "a pool handle passed as the model", HANDLE, ("cbg_model_t",),
         lambda e: e.predict_into(_out(), model=e.pool.handle)),
    Case("handle-foreign", "memory cbgpu never made, as a context", HANDLE, ("not made by cbgpu",),
         lambda e: lib.cbg_context_device(ctypes.addressof(_FOREIGN), ctypes.byref(ctypes.c_int32()))),
    Case("null-pool-info", "cbg_pool_info with info = NULL", NUL, ("info is NULL",),
         lambda e: lib.cbg_pool_info(e.pool.handle, None)),
    # -- contexts and copies ---------------------------------------------------------------------------------
    Case("context-device-99", "context on CUDA device 99", NODEV, ("device 99",), lambda e: _ctx_desc(device=99)),
    Case("context-device-negative", "context device -7", ARG, ("-7",), lambda e: _ctx_desc(device=-7)),
    Case("context-log-level", "context log_level 42", ARG, ("log_level 42",), lambda e: _ctx_desc(log_level=42)),
    Case("context-struct-size", "descriptor struct_size 3", ARG, ("struct_size",), lambda e: _ctx_desc(struct_size=3)),
    Case("copy-read-only", "cbg_tensor_copy into a read-only tensor", RO, ("dst", "read-only"),
         lambda e: _copy(e, ManagedTensor(np.zeros(3), flags=1), ManagedTensor(np.zeros(3)))),
    Case("copy-shape", "cbg_tensor_copy between [3] and [4]", SHAPE, ("shape",),
         lambda e: _copy(e, ManagedTensor(np.zeros(4)), ManagedTensor(np.zeros(3)))),
    # -- writes never destroy what was there -------------------------------------------------------------------
    Case("save-target-folder", "saving onto a path that is a folder", IO, ("cannot write", "Is a directory"),
         lambda e: _save_over(e, "folder", lambda p: p.mkdir())),
    Case("save-file-too-large", "saving over a model past the file size limit (RLIMIT_FSIZE, SIGXFSZ ignored)",
         IO, ("cannot write", "File too large"), lambda e: _save_past_size_limit(e)),
    Case("save-json-folder", "saving a JSON model onto a folder", IO, ("Is a directory", "m.json"),
         lambda e: _save_over(e, "m.json", lambda p: p.mkdir(), fmt="json")),
    Case("save-train-dir-partial", "train_dir whose test_error.tsv is a folder: no log replaced", IO,
         ("train_dir", "test_error.tsv", "Is a directory"), lambda e: _train_dir_partial(e)),
    # -- handles ---------------------------------------------------------------------------------------------
    Case("handle-double-free", "a model freed twice", HANDLE, ("already freed",),
         lambda e: lib.cbg_model_free(_freed_model(e))),
    Case("handle-freed-pool", "a freed pool handle", HANDLE, ("not a live cbg_pool_t",),
         lambda e: lib.cbg_pool_info(_freed_pool(e), ctypes.byref(C.cbg_pool_info_t(ctypes.sizeof(C.cbg_pool_info_t))))),
    # -- sizes from caller input -------------------------------------------------------------------------------
    Case("size-shape-2^62", "features of shape [2^62, 4]", SHAPE, ("features", "element count"),
         lambda e: _pool_from_managed(e, ManagedTensor(e.X, shape=[1 << 62, 4], strides=[4, 1]))),
    Case("size-wraps-to-zero", "features of shape [2^32, 2^32] (2^64 elements: 0 when wrapped)", SHAPE,
         ("features", "element count"),
         lambda e: _pool_from_managed(e, ManagedTensor(e.X, shape=[1 << 32, 1 << 32], strides=[0, 0]))),
    Case("size-huge-stride", "features [200, 4] with a row stride of 2^62", SHAPE, ("features", "byte extent"),
         lambda e: _pool_from_managed(e, ManagedTensor(e.X, strides=[1 << 62, 1]))),
    Case("size-offset-wraps", "byte_offset that wraps the address space", SHAPE, ("features", "address space"),
         lambda e: _pool_from_managed(e, ManagedTensor(e.X, byte_offset=(1 << 64) - 16))),
    Case("size-broadcast-rows", "zero-stride features claiming 2^60 rows x 4", SHAPE, ("rows x features",),
         lambda e: _pool_from_managed(e, ManagedTensor(e.X, shape=[1 << 60, 4], strides=[0, 0]))),
    Case("size-label-stride", "label with a stride of 2^61 elements", SHAPE, ("label", "byte extent"),
         lambda e: _pool_from_managed(e, ManagedTensor(e.X), label=ManagedTensor(e.y, strides=[1 << 61]))),
    Case("size-output-stride", "prediction output with a row stride of 2^62", SHAPE, ("out", "byte extent"),
         lambda e: e.predict_into(_kept(_out(strides=[1 << 62, 1])))),
    Case("size-copy-stride", "cbg_tensor_copy from a source with a stride of 2^62", SHAPE, ("src", "byte extent"),
         lambda e: _copy(e, ManagedTensor(np.zeros(3)), ManagedTensor(np.zeros(3), strides=[1 << 62]))),
    Case("size-output-shape", "cbg_predict_output_shape for 2^62 rows", SHAPE, ("prediction output",),
         lambda e: e.model.output_shape(1 << 62)),
    Case("size-arrow-offset", "Arrow float column with offset 2^62", SHAPE, ("arrow column 0", "does not fit"),
         lambda e: _arrow_patched(e, offset=1 << 62)),
    Case("size-arrow-length", "Arrow float column with length -5", SHAPE, ("arrow column 0", "negative length"),
         lambda e: _arrow_patched(e, length=-5)),
    # -- readers bounded by their input ---------------------------------------------------------------------------
    Case("model-folder", "loading a folder as a model", IO, ("cannot read", "Is a directory"),
         lambda e: cbgpu.Model.load(str(e.tmp))),
    Case("model-dev-zero", "loading /dev/zero (endless) as a model", IO, ("/dev/zero", "character device"),
         lambda e: cbgpu.Model.load("/dev/zero")),
    Case("model-fifo", "loading a FIFO (would block) as a model", IO, ("a FIFO", "not a regular file"),
         lambda e: cbgpu.Model.load(_fifo(e))),
    Case("model-size-cap", "a model file above CBGPU_MAX_INPUT_BYTES (100)", IO, ("limit of 100", "CBGPU_MAX_INPUT_BYTES"),
         lambda e: _with_env("CBGPU_MAX_INPUT_BYTES", "100", lambda: e.load("capped.cbm", e.cbm))),
    Case("model-huge-core-size", ".cbm declaring a 2^60-byte core in 16 bytes", FMT, ("declared",),
         lambda e: e.load("huge.cbm", b"CBM1\xff\xff\xff\xff" + (1 << 60).to_bytes(8, "little"))),
    Case("model-json-folder", "loading a folder as a JSON model", IO, ("Is a directory",),
         lambda e: cbgpu.Model.load(str(e.tmp), format="json")),
    # -- refused as CatBoost refuses them ------------------------------------------------------------------------
    Case("pool-weight-zero", "all sample weights 0 (CatBoost: All data in Weights is 0)", BAD,
         ("weight", "0 for all 200", "positive"),
         lambda e: e.pool_of(e.X, label=e.y, weight=np.zeros(ROWS))),
    Case("train-class-label-negative", "MultiClass label -1 in row 5", BAD, ("label -1", "row 5"),
         lambda e: e.train({"iterations": 3, "loss_function": "MultiClass"}, y=_nan_at(e.y, 5, -1.0))),
]

def _kept(tensor: ManagedTensor) -> ManagedTensor:
    """Keeps a tensor alive for the whole run: a bare .ref() holds only its address."""
    _KEEP.append(tensor)
    return tensor


_FOREIGN = ctypes.create_string_buffer(256)
_KEEP: list = []  # tensors whose ownership a failed call may still hold (their deleters stay callable)


def _pool_from_managed(e: Env, tensor: ManagedTensor, label: ManagedTensor | None = None) -> int:
    _KEEP.extend([tensor, label])
    d = C.cbg_pool_desc_t()
    lib.cbg_pool_desc_init(ctypes.byref(d))
    d.features = tensor.ref()
    if label is not None:
        d.label = label.ref()
    out = ctypes.c_void_p()
    status = lib.cbg_pool_from_dlpack(e.ctx.handle, ctypes.byref(d), ctypes.byref(out))
    if status == C.CBG_OK:
        lib.cbg_pool_free(out)
    return status


def _copy(e: Env, dst: ManagedTensor, src: ManagedTensor) -> int:
    _KEEP.extend([dst, src])
    return lib.cbg_tensor_copy(e.ctx.handle, ctypes.byref(dst.ref()), ctypes.byref(src.ref()))


def _arrow_patched(e: Env, **fields) -> int:
    """cbg_pool_from_arrow over a pyarrow float column whose ArrowArray fields are overwritten."""
    import pyarrow as pa
    from cbgpu._pool import _arrow_capsules
    schema, device_array, keep = _arrow_capsules(pa.array(np.arange(ROWS, dtype=np.float32)))
    _KEEP.append(keep)
    moved = C.ArrowDeviceArray.from_address(device_array)
    for name, value in fields.items():
        setattr(moved.array, name, value)
    out = ctypes.c_void_p()
    status = lib.cbg_pool_from_arrow(e.ctx.handle, None, schema, device_array, ctypes.byref(out))
    if status == C.CBG_OK:
        lib.cbg_pool_free(out)
    return status


def _freed_pool(e: Env) -> int:
    p = e.pool_of(e.X)
    handle = p.handle
    p.close()
    return handle


def _with_env(name: str, value: str, run):
    old = os.environ.get(name)
    os.environ[name] = value
    try:
        return run()
    finally:
        if old is None:
            del os.environ[name]
        else:
            os.environ[name] = old


def _fifo(e: Env) -> str:
    path = e.tmp / "model.fifo"
    if not path.exists():
        os.mkfifo(path)
    return str(path)


def _save_over(e: Env, name: str, make, fmt: str = "cbm"):
    """Saves onto `name` after make(path) put something there; that something must stay as it was."""
    folder = e.tmp / f"save-{name}"
    folder.mkdir()
    path = folder / name
    make(path)
    before = sorted(os.listdir(folder))
    try:
        return e.model.save(str(path), format=fmt)
    finally:
        assert sorted(os.listdir(folder)) == before, "a temporary file was left behind"
        assert path.is_dir()


_SIZE_LIMIT_CHILD = r"""
import os, resource, signal, sys
sys.path.insert(0, sys.argv[3])
import cbgpu
from cbgpu import CbgError
model = cbgpu.Model.load(sys.argv[1])
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
resource.setrlimit(resource.RLIMIT_FSIZE, (int(sys.argv[2]), resource.RLIM_INFINITY))
try:
    model.save(sys.argv[1], format="json")
    print("0\nsaved")
except CbgError as err:
    print(f"{err.code}\n{err.message}")
"""


def _save_past_size_limit(e: Env):
    """In a child process (the limit stays there): the old model file must survive a failed save."""
    folder = e.tmp / "fsize"
    folder.mkdir()
    path = folder / "m.cbm"
    path.write_bytes(e.cbm)
    limit = len(e.cbm) + 16  # the old file fits, the JSON version does not
    r = subprocess.run([sys.executable, "-c", _SIZE_LIMIT_CHILD, str(path), str(limit),
                        str(Path(__file__).resolve().parents[2] / "python")],
                       capture_output=True, text=True, timeout=120, env=os.environ.copy())
    assert r.returncode == 0, r.stderr
    code, message = r.stdout.strip().split("\n", 1)
    assert path.read_bytes() == e.cbm, "the old model file changed"
    assert os.listdir(folder) == ["m.cbm"], "a temporary file was left behind"
    if int(code) != C.CBG_OK:
        raise CbgError(int(code), C.STATUS_NAMES.get(int(code), code), message)
    return C.CBG_OK


def _train_dir_partial(e: Env):
    """train_dir logs are replaced together or not at all."""
    train_dir = e.tmp / "logs"
    train_dir.mkdir()
    (train_dir / "learn_error.tsv").write_text("old learn log\n")
    (train_dir / "test_error.tsv").mkdir()
    try:
        return e.train({"iterations": 3, "train_dir": str(train_dir)}, eval_pool=e.pool)
    finally:
        assert (train_dir / "learn_error.tsv").read_text() == "old learn log\n", "learn_error.tsv was replaced"
        assert sorted(os.listdir(train_dir)) == ["learn_error.tsv", "test_error.tsv"]


# ---- the CLI ---------------------------------------------------------------------------------------------

DATA = "1\t0.5\t2\n0\t0.1\t3\n1\t0.7\t1\n0\t0.2\t5\n"
CD = "0\tLabel\n"
CLI_FILES = {
    "d.tsv": DATA, "ok.cd": CD, "badtype.cd": "0\tLabel\n1\tBanana\n", "far.cd": "0\tLabel\n9\tNum\n",
    "spaces.cd": "0 Label extra stuff here\n", "ragged.tsv": "1\t0.5\n0\t0.1\t3\n", "text.tsv": "1\tabc\t2\n",
    "empty.tsv": "", "badlabel.tsv": "x\t0.5\t2\n", "garbage.cbm": "not a model",
    "bom.tsv": "\ufeff" + DATA, "bom.cd": "\ufeff" + CD, "midbom.tsv": "1\t0.5\t2\n0\t\ufeff0.1\t3\n",
    "nul.tsv": "1\t0.5\t2\n0\t0.\x001\t3\n", "cr.cd": "0\tLabel\r\n1\tNum\rx\n",
    "p.json": '{\n  "depth": 4,\n  "l2_leaf_reg": 3,,\n}\n', "old.cbm": "old model bytes",
}
FIT = ["fit", "--cd", "ok.cd", "-i", "2", "-m", "m.cbm", "--learn-set"]
CALC = ["calc", "--cd", "ok.cd", "-o", "p.tsv", "--input-path", "d.tsv", "-m"]
USAGE, BAD_INPUT = 2, 2
CLI_CASES: list[Case] = [
    Case("cli-cd-type", ".cd with an unknown column type", BAD_INPUT, ("badtype.cd:2", "Banana"),
         lambda e: ["fit", "--cd", "badtype.cd", "-i", "2", "-m", "m.cbm", "--learn-set", "d.tsv"]),
    Case("cli-cd-index", ".cd naming column 9 of a 3-column file", BAD_INPUT, ("column 9",),
         lambda e: ["fit", "--cd", "far.cd", "-i", "2", "-m", "m.cbm", "--learn-set", "d.tsv"]),
    Case("cli-cd-syntax", ".cd line without tabs", BAD_INPUT, ("spaces.cd:1",),
         lambda e: ["fit", "--cd", "spaces.cd", "-i", "2", "-m", "m.cbm", "--learn-set", "d.tsv"]),
    Case("cli-dsv-ragged", "data row with a missing column", BAD_INPUT, ("ragged.tsv:2", "columns"),
         lambda e: FIT + ["ragged.tsv"]),
    Case("cli-dsv-text", "text in a numeric column", BAD_INPUT, ("text.tsv:1", "not a number"),
         lambda e: FIT + ["text.tsv"]),
    Case("cli-dsv-empty", "data file without rows", BAD_INPUT, ("no data rows",), lambda e: FIT + ["empty.tsv"]),
    Case("cli-dsv-label", "label that is not a number", BAD_INPUT, ("label 'x'",), lambda e: FIT + ["badlabel.tsv"]),
    Case("cli-dsv-missing", "data file that does not exist", BAD_INPUT, ("nofile.tsv",), lambda e: FIT + ["nofile.tsv"]),
    Case("cli-flag-value", "--iterations abc", USAGE, ("--iterations", "abc"),
         lambda e: ["fit", "--cd", "ok.cd", "-m", "m.cbm", "--learn-set", "d.tsv", "--iterations", "abc"]),
    Case("cli-flag-unknown", "an unknown flag", USAGE, ("--no-such-flag",),
         lambda e: FIT + ["d.tsv", "--no-such-flag", "3"]),
    Case("cli-flag-range", "--depth 40", USAGE, ("--depth", "40"), lambda e: FIT + ["d.tsv", "--depth", "40"]),
    Case("cli-model-missing", "calc with a model file that does not exist", BAD_INPUT, ("nofile.cbm",),
         lambda e: CALC + ["nofile.cbm"]),
    Case("cli-model-garbage", "calc with a model file that is not a model", BAD_INPUT, ("CBG_ERR_FORMAT",),
         lambda e: CALC + ["garbage.cbm"]),
    Case("cli-prediction-type", "calc --prediction-type Banana", USAGE, ("Banana",),
         lambda e: CALC + ["m.cbm", "--prediction-type", "Banana"]),
    Case("cli-output-path", "calc into a folder that does not exist", BAD_INPUT, ("/nonexistent/p.tsv",),
         lambda e: ["calc", "--cd", "ok.cd", "--input-path", "d.tsv", "-m", "m.cbm", "-o", "/nonexistent/p.tsv"]),
    Case("cli-output-folder", "calc -o naming a folder", BAD_INPUT, ("--output-path", "Is a directory"),
         lambda e: ["calc", "--cd", "ok.cd", "--input-path", "d.tsv", "-m", "m.cbm", "-o", "."]),
    Case("cli-model-formats-partial", "--model-format CatboostBinary,Json where the .json path is a folder: "
         "the old .cbm stays", BAD_INPUT, ("old.cbm.json", "Is a directory"),
         lambda e: ["fit", "--cd", "ok.cd", "-i", "2", "--learn-set", "d.tsv", "-m", "old.cbm",
                    "--model-format", "CatboostBinary,Json"],
         after=lambda d: _assert_text(d / "old.cbm", "old model bytes")),
    Case("cli-plot-folder", "--plot-learning-curve naming a folder", BAD_INPUT, ("--plot-learning-curve", "Is a directory"),
         lambda e: FIT + ["d.tsv", "--plot-learning-curve", "."]),
    Case("cli-params-file-syntax", "--params-file with a syntax error on line 3", BAD_INPUT,
         ("p.json", "line 3, column 20"), lambda e: FIT + ["d.tsv", "--params-file", "p.json"]),
    Case("cli-params-file-folder", "--params-file naming a folder", BAD_INPUT, ("--params-file", "Is a directory"),
         lambda e: FIT + ["d.tsv", "--params-file", "."]),
    Case("cli-dsv-folder", "a folder as the learn set", BAD_INPUT, ("pool file", "Is a directory"),
         lambda e: FIT + ["."]),
    Case("cli-dsv-dev-zero", "/dev/zero (endless, no rows) as the learn set", BAD_INPUT, ("/dev/zero", "character device"),
         lambda e: FIT + ["/dev/zero"]),
    Case("cli-cd-fifo", "a FIFO (would block) as the column description", BAD_INPUT, ("pipe.cd", "a FIFO"),
         lambda e: ["fit", "--cd", "pipe.cd", "-i", "2", "-m", "m2.cbm", "--learn-set", "d.tsv"]),
    Case("cli-dsv-bom", "data file starting with a UTF-8 byte order mark: accepted", 0, ("trained",),
         lambda e: FIT + ["bom.tsv"]),
    Case("cli-cd-bom", ".cd file starting with a UTF-8 byte order mark: accepted", 0, ("trained",),
         lambda e: ["fit", "--cd", "bom.cd", "-i", "2", "-m", "m2.cbm", "--learn-set", "d.tsv"]),
    Case("cli-dsv-bom-inside", "a byte order mark inside a data row, shown", BAD_INPUT,
         ("midbom.tsv:2", "'<U+FEFF>0.1'"), lambda e: FIT + ["midbom.tsv"]),
    Case("cli-dsv-nul", "a NUL byte inside a number, shown", BAD_INPUT, ("nul.tsv:2", "'0.\\01'"),
         lambda e: FIT + ["nul.tsv"]),
    Case("cli-cd-cr", "a carriage return inside a .cd line, shown", BAD_INPUT, ("cr.cd:2", "Num\\rx"),
         lambda e: ["fit", "--cd", "cr.cd", "-i", "2", "-m", "m2.cbm", "--learn-set", "d.tsv"]),
]


def _assert_text(path: Path, text: str) -> None:
    assert path.read_text() == text, f"{path.name} was replaced"


# ---- the tests ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def env():
    with tempfile.TemporaryDirectory() as tmp:
        e = Env(Path(tmp))
        e.baseline = _health(e)
        yield e
        e.close()


def _health(e: Env) -> np.ndarray:
    """Trains and predicts with the shared context: the answer must not change after any failure."""
    model = e.train({"iterations": 4, "loss_function": "Logloss", "random_seed": 3})
    out = _out()
    e.predict_into(out, model=model)
    model.close()
    return out.array.copy()


def _outcome(case: Case, e: Env) -> tuple[int, str]:
    try:
        result = case.run(e)
    except CbgError as err:
        return err.code, err.message
    status = result if isinstance(result, int) else C.CBG_OK
    return status, cbgpu.last_error() if status != C.CBG_OK else ""


def test_matrix_has_fifty_distinct_cases():
    ids = [c.id for c in CASES + CLI_CASES]
    assert len(ids) == len(set(ids)), "case ids must be unique"
    assert len(ids) >= 50


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_c_abi_case(env, case):
    code, message = _outcome(case, env)
    assert code == case.code, f"{case.what}: got {C.STATUS_NAMES.get(code, code)} ({message})"
    for fragment in case.fragments:
        assert fragment.lower() in message.lower(), f"{fragment!r} not in {message!r}"
    assert lib.cbg_last_error() is not None
    np.testing.assert_array_equal(_health(env), env.baseline, err_msg=f"state changed after {case.id}")


@pytest.fixture(scope="module")
def cli_dir():
    bench = os.environ.get("CBGPU_BENCH")
    if not bench:
        pytest.skip("CBGPU_BENCH (the cbgpu-bench binary) is not set")
    with tempfile.TemporaryDirectory() as tmp:
        for name, text in CLI_FILES.items():
            Path(tmp, name).write_bytes(text.encode())
        Path(tmp, "old.cbm.json").mkdir()
        os.mkfifo(Path(tmp, "pipe.cd"))
        fit = subprocess.run([bench] + FIT + ["d.tsv"], cwd=tmp, capture_output=True, text=True, timeout=120)
        assert fit.returncode == 0, fit.stderr
        yield bench, tmp


@pytest.mark.parametrize("case", CLI_CASES, ids=lambda c: c.id)
def test_cli_case(cli_dir, case):
    bench, tmp = cli_dir
    r = subprocess.run([bench] + case.run(None), cwd=tmp, capture_output=True, text=True, timeout=120)
    text = r.stdout + r.stderr
    assert r.returncode == case.code, f"{case.what}: exit {r.returncode}\n{text}"
    for fragment in case.fragments:
        assert fragment.lower() in text.lower(), f"{fragment!r} not in {text!r}"
    assert "terminate called" not in text and "Traceback" not in text
    if case.after is not None:
        case.after(Path(tmp))


def markdown_table() -> str:
    rows = ["| id | bad input | answer | message names |", "| --- | --- | --- | --- |"]
    for c in CASES:
        rows.append(f"| `{c.id}` | {c.what} | `{C.STATUS_NAMES[c.code]}` | {', '.join(c.fragments)} |")
    for c in CLI_CASES:
        rows.append(f"| `{c.id}` | {c.what} | exit {c.code} | {', '.join(c.fragments)} |")
    return "\n".join(rows)


def test_docs_list_every_case():
    doc = (Path(__file__).resolve().parents[2] / "docs" / "RELIABILITY.md").read_text()
    missing = [c.id for c in CASES + CLI_CASES if f"`{c.id}`" not in doc]
    assert not missing, f"docs/RELIABILITY.md lacks {missing}: regenerate with python3 {__file__}"


if __name__ == "__main__":
    print(markdown_table())
