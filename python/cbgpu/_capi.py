# SPDX-License-Identifier: Apache-2.0
"""ctypes mirror of the C ABI in capi/include/cbgpu/cbgpu.h: loading, structs, constants, prototypes.

Everything here is a one-to-one transcription of the header; the friendlier classes live in the
other modules. Keep the field order and types identical to the header when it changes.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import glob
import os
from pathlib import Path

# ---- status codes (frozen values, cbgpu.h) ---------------------------------------------------------
CBG_OK = 0
CBG_ERR_INVALID_ARGUMENT = 1
CBG_ERR_NULL_POINTER = 2
CBG_ERR_INVALID_HANDLE = 3
CBG_ERR_DTYPE = 4
CBG_ERR_SHAPE = 5
CBG_ERR_DEVICE = 6
CBG_ERR_DLPACK_VERSION = 7
CBG_ERR_READ_ONLY = 8
CBG_ERR_STRICT_D2H = 9
CBG_ERR_OUT_OF_MEMORY = 10
CBG_ERR_CUDA = 11
CBG_ERR_CUDA_FATAL = 12
CBG_ERR_NO_DEVICE = 13
CBG_ERR_UNSUPPORTED = 14
CBG_ERR_NOT_IMPLEMENTED = 15
CBG_ERR_IO = 16
CBG_ERR_FORMAT = 17
CBG_ERR_BAD_DATA = 18
CBG_ERR_INTERNAL = 19

#: Status code -> its C macro name, for error messages.
STATUS_NAMES = {
    value: name for name, value in globals().items() if name == "CBG_OK" or name.startswith("CBG_ERR_")
}

# ---- logging levels -----------------------------------------------------------------------------
CBG_LOG_TRACE = 0
CBG_LOG_DEBUG = 1
CBG_LOG_INFO = 2
CBG_LOG_WARN = 3
CBG_LOG_ERROR = 4
CBG_LOG_CRITICAL = 5
CBG_LOG_OFF = 6

# ---- devices, context flags, tensor kinds ---------------------------------------------------------
CBG_FSTR_PREDICTION_VALUES_CHANGE = 0
CBG_FSTR_LOSS_FUNCTION_CHANGE = 1
CBG_FSTR_SHAP_VALUES = 2
CBG_FSTR_INTERACTION = 3

CBG_DEVICE_CPU = -1
CBG_DEVICE_AUTO = -2
CBG_CONTEXT_STRICT_NO_D2H = 1 << 0
#: Bytes a single device-to-host copy may move in strict mode (cbgpu.h: "above 64 KiB").
STRICT_D2H_LIMIT = 64 * 1024

CBG_TENSOR_NONE = 0
CBG_TENSOR_DLPACK_VERSIONED = 1
CBG_TENSOR_DLPACK_LEGACY = 2
CBG_TENSOR_DLTENSOR = 3

# ---- models ---------------------------------------------------------------------------------------
CBG_MODEL_FORMAT_CBM = 0
CBG_MODEL_FORMAT_JSON = 1
CBG_PREDICTION_RAW_FORMULA_VAL = 0
CBG_PREDICTION_PROBABILITY = 1
CBG_PREDICTION_LOG_PROBABILITY = 2
CBG_PREDICTION_CLASS = 3
CBG_PREDICTION_EXPONENT = 4
CBG_PREDICTION_RMSE_WITH_UNCERTAINTY = 5
CBG_PREDICTION_MULTI_PROBABILITY = 6
CBG_PREDICT_VALUES = 0
CBG_PREDICT_LEAF_INDEXES = 1

# ---- callback types ---------------------------------------------------------------------------------
# void (*)(void* user_data, int32_t level, const char* category, const char* message)
cbg_log_fn = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int32, ctypes.c_char_p, ctypes.c_char_p)
# void* (*)(size_t bytes, cbg_stream_t stream, void* user_data)
cbg_device_alloc_fn = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p, ctypes.c_void_p)
# void (*)(void* ptr, size_t bytes, cbg_stream_t stream, void* user_data)
cbg_device_free_fn = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p,
                                      ctypes.c_void_p)


# ---- structs ------------------------------------------------------------------------------------------
class cbg_context_desc_t(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("device", ctypes.c_int32),
        ("log_level", ctypes.c_int32),
        ("seed", ctypes.c_uint64),
        ("stream", ctypes.c_void_p),
        ("flags", ctypes.c_uint32),
        ("alloc_fn", cbg_device_alloc_fn),
        ("free_fn", cbg_device_free_fn),
        ("alloc_user_data", ctypes.c_void_p),
        ("device_memory_limit", ctypes.c_size_t),
        # since issue 9: a caller's NCCL communicator (several processes)
        ("nccl_comm", ctypes.c_void_p),
        ("nccl_rank", ctypes.c_int32),
        ("nccl_size", ctypes.c_int32),
        ("profile", ctypes.c_int32),  # 1: stage timings (cbg_context_stage_times)
        # a communicator the library makes from an NCCL unique id (cbg_nccl_unique_id)
        ("nccl_id", ctypes.c_uint8 * 128),
        ("nccl_id_rank", ctypes.c_int32),
        ("nccl_id_size", ctypes.c_int32),
        ("nccl_timeout_ms", ctypes.c_int32),
    ]


class cbg_memory_stats_t(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("in_use_bytes", ctypes.c_uint64), ("peak_bytes", ctypes.c_uint64),
                ("limit_bytes", ctypes.c_uint64), ("allocations", ctypes.c_uint64),
                ("failed_allocations", ctypes.c_uint64)]


class cbg_copy_stats_t(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t)] + [
        (f"{direction}_{what}", ctypes.c_uint64)
        for direction in ("h2d", "d2h", "d2d", "h2h")
        for what in ("bytes", "calls")
    ]


class cbg_tensor_ref_t(ctypes.Structure):
    _fields_ = [("kind", ctypes.c_int32), ("ptr", ctypes.c_void_p)]


class cbg_pool_desc_t(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("features", cbg_tensor_ref_t),
        ("columns", ctypes.POINTER(cbg_tensor_ref_t)),
        ("n_columns", ctypes.c_size_t),
        ("label", cbg_tensor_ref_t),
        ("weight", cbg_tensor_ref_t),
        ("baseline", cbg_tensor_ref_t),
        ("cat_features", ctypes.POINTER(ctypes.c_int32)),
        ("n_cat_features", ctypes.c_size_t),
        ("feature_names", ctypes.POINTER(ctypes.c_char_p)),
        ("n_feature_names", ctypes.c_size_t),
        ("producer_stream", ctypes.c_void_p),
        ("string_columns", ctypes.c_void_p),  # const cbg_string_column_t*
        ("n_string_columns", ctypes.c_size_t),
    ]


class cbg_string_column_t(ctypes.Structure):
    _fields_ = [("feature", ctypes.c_int64), ("offsets", cbg_tensor_ref_t), ("bytes", cbg_tensor_ref_t),
                ("codes", cbg_tensor_ref_t)]


# Arrow C data interface / C device data interface (arrow.apache.org/docs/format/CDeviceDataInterface.html).
class ArrowSchema(ctypes.Structure):
    pass


ArrowSchema._fields_ = [
    ("format", ctypes.c_char_p), ("name", ctypes.c_char_p), ("metadata", ctypes.c_char_p),
    ("flags", ctypes.c_int64), ("n_children", ctypes.c_int64),
    ("children", ctypes.POINTER(ctypes.POINTER(ArrowSchema))), ("dictionary", ctypes.POINTER(ArrowSchema)),
    ("release", ctypes.CFUNCTYPE(None, ctypes.POINTER(ArrowSchema))), ("private_data", ctypes.c_void_p),
]


class ArrowArray(ctypes.Structure):
    pass


ArrowArray._fields_ = [
    ("length", ctypes.c_int64), ("null_count", ctypes.c_int64), ("offset", ctypes.c_int64),
    ("n_buffers", ctypes.c_int64), ("n_children", ctypes.c_int64),
    ("buffers", ctypes.POINTER(ctypes.c_void_p)), ("children", ctypes.POINTER(ctypes.POINTER(ArrowArray))),
    ("dictionary", ctypes.POINTER(ArrowArray)),
    ("release", ctypes.CFUNCTYPE(None, ctypes.POINTER(ArrowArray))), ("private_data", ctypes.c_void_p),
]


class ArrowDeviceArray(ctypes.Structure):
    _fields_ = [("array", ArrowArray), ("device_id", ctypes.c_int64), ("device_type", ctypes.c_int32),
                ("sync_event", ctypes.c_void_p), ("reserved", ctypes.c_int64 * 3)]


ARROW_DEVICE_CPU = 1
ARROW_DEVICE_CUDA = 2
ARROW_DEVICE_CUDA_HOST = 3
ARROW_DEVICE_CUDA_MANAGED = 13


class cbg_pool_info_t(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("n_rows", ctypes.c_int64),
        ("n_features", ctypes.c_int64),
        ("n_cat_features", ctypes.c_int64),
        ("label_dims", ctypes.c_int64),
        ("baseline_dims", ctypes.c_int64),
        ("has_weight", ctypes.c_int32),
        ("device", ctypes.c_int32),
    ]


CBG_NAN_MODE_FORBIDDEN = 0
CBG_NAN_MODE_MIN = 1
CBG_NAN_MODE_MAX = 2
CBG_BORDER_GREEDY_LOG_SUM = 0
CBG_BORDER_GREEDY_MIN_ENTROPY = 1
CBG_BORDER_MEDIAN = 2
CBG_BORDER_UNIFORM = 3
CBG_BORDER_UNIFORM_AND_QUANTILES = 4
CBG_BORDER_MIN_ENTROPY = 5
CBG_BORDER_MAX_LOG_SUM = 6
CBG_SUBSET_SAMPLED = 0
CBG_SUBSET_FIRST_ROWS = 1


class cbg_quantize_desc_t(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("border_count", ctypes.c_int32),
        ("nan_mode", ctypes.c_int32),
        ("border_type", ctypes.c_int32),
        ("max_subset_size", ctypes.c_uint32),
        ("n_overrides", ctypes.c_size_t),
        ("override_features", ctypes.POINTER(ctypes.c_int64)),
        ("override_border_counts", ctypes.POINTER(ctypes.c_int32)),
        ("override_nan_modes", ctypes.POINTER(ctypes.c_int32)),
        ("override_border_types", ctypes.POINTER(ctypes.c_int32)),
        ("subset_rule", ctypes.c_int32),
    ]


class cbg_model_info_t(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("n_trees", ctypes.c_int64),
        ("approx_dimension", ctypes.c_int32),
        ("reserved", ctypes.c_int32),
        ("n_flat_features", ctypes.c_int64),
        ("n_float_features", ctypes.c_int64),
        ("n_cat_features", ctypes.c_int64),
        ("n_class_names", ctypes.c_int64),
        ("scale", ctypes.c_double),
    ]


class cbg_model_predict_host_desc_t(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("n_rows", ctypes.c_int64),
        ("float_features", ctypes.POINTER(ctypes.c_float)),
        ("float_row_stride", ctypes.c_int64),
        ("cat_hashes", ctypes.POINTER(ctypes.c_uint32)),
        ("cat_row_stride", ctypes.c_int64),
        ("prediction_type", ctypes.c_int32),
        ("reserved", ctypes.c_int32),
        ("tree_begin", ctypes.c_int64),
        ("tree_end", ctypes.c_int64),
    ]


# ---- training (cbgpu.h "Training") -------------------------------------------------------------------
class cbg_train_progress_t(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("iteration", ctypes.c_int64),
        ("iterations", ctypes.c_int64),
        ("metric", ctypes.c_char_p),
        ("has_learn_metric", ctypes.c_int32),
        ("has_eval_metric", ctypes.c_int32),
        ("learn_metric", ctypes.c_double),
        ("eval_metric", ctypes.c_double),
        ("best_eval_metric", ctypes.c_double),
        ("best_iteration", ctypes.c_int64),
        ("elapsed_seconds", ctypes.c_double),
        ("remaining_seconds", ctypes.c_double),
    ]


# int32_t (*)(void* user_data, const cbg_train_progress_t* progress)
cbg_train_iteration_fn = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p, ctypes.POINTER(cbg_train_progress_t))


class cbg_train_callbacks_t(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("on_iteration", cbg_train_iteration_fn),
        ("user_data", ctypes.c_void_p),
    ]


class cbg_predict_desc_t(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("prediction_type", ctypes.c_int32),
        ("output", ctypes.c_int32),
        ("tree_begin", ctypes.c_int64),
        ("tree_end", ctypes.c_int64),
        ("devices", ctypes.c_char_p),  # since issue 9: GPUs to spread the rows over
    ]


# ---- loading --------------------------------------------------------------------------------------------
PACKAGE_DIR = Path(__file__).resolve().parent
#: The library a wheel (`pip install .`) puts inside the package.
BUNDLED_LIBRARY = PACKAGE_DIR / "lib" / "libcbgpu.so"
#: The source checkout this package sits in, when it is not installed (python/cbgpu of the repository).
REPO_ROOT = PACKAGE_DIR.parents[1]


def _build_tree_libraries() -> list[str]:
    """build/*/libcbgpu.so of the source checkout around the package (none for an installed one),
    newest first so that a fresh build directory wins over a stale one."""
    if not (REPO_ROOT / "CMakeLists.txt").is_file() or not (REPO_ROOT / "python" / "cbgpu").is_dir():
        return []
    # Newest first, but the sanitizer presets' libraries last: they load only behind their runtime
    # (LD_PRELOAD), which a plain Python does not have.
    def order(path: str) -> tuple[bool, float]:
        return (Path(path).parent.name in ("dev", "tsan"), -os.path.getmtime(path))

    return sorted(glob.glob(str(REPO_ROOT / "build" / "*" / "libcbgpu.so")), key=order)


def _candidates() -> list[tuple[str, str]]:
    """(path, where it comes from) in loading order: the library bundled in the package, else
    $CBGPU_LIBRARY (an explicit choice: nothing after it is tried), else a build tree of this
    checkout, then the system's library path."""
    out = []
    if BUNDLED_LIBRARY.is_file():
        out.append((str(BUNDLED_LIBRARY), "bundled in the package"))
    env = os.environ.get("CBGPU_LIBRARY")
    if env:
        return out + [(env, "$CBGPU_LIBRARY")]
    out += [(path, "build tree") for path in _build_tree_libraries()]
    system = ctypes.util.find_library("cbgpu")
    if system:
        out.append((system, "system library path"))
    return out


def load_library() -> ctypes.CDLL:
    """Loads libcbgpu and declares every function's argtypes/restype; raises OSError if not found."""
    tried = []
    for path, origin in _candidates():
        try:
            lib = ctypes.CDLL(path)  # CDLL releases the GIL during calls: deleters/callbacks retake it
        except OSError as e:
            tried.append(f"{path} ({origin}): {e}")
            continue
        _declare(lib)
        return lib
    searched = "\n  ".join(tried) or "(no candidate existed)"
    raise OSError(
        "libcbgpu.so not found.\n"
        f"Tried, in order: the package's own copy ({BUNDLED_LIBRARY}: "
        f"{'present' if BUNDLED_LIBRARY.is_file() else 'absent'}), $CBGPU_LIBRARY "
        f"({os.environ.get('CBGPU_LIBRARY') or 'not set'}), build/*/libcbgpu.so of a source checkout, "
        "the system's library path:\n"
        f"  {searched}\n"
        "To fix: install the package with its library (pip install <cbgpu checkout>), or set "
        "CBGPU_LIBRARY to the full path of a libcbgpu.so, or build one in the checkout (scripts/build.sh release).")


_P = ctypes.POINTER
_vp = ctypes.c_void_p
_st = ctypes.c_int32  # cbg_status

# name: (restype, argtypes); handles are passed as plain void pointers.
_PROTOTYPES = {
    "cbg_status_string": (ctypes.c_char_p, [_st]),
    "cbg_last_error": (ctypes.c_char_p, []),
    "cbg_version_number": (ctypes.c_uint32, []),
    "cbg_version_string": (ctypes.c_char_p, []),
    "cbg_build_info": (_st, [_P(ctypes.c_char_p)]),
    "cbg_device_count": (_st, [_P(ctypes.c_int32)]),
    "cbg_set_log_callback": (_st, [cbg_log_fn, _vp, ctypes.c_int32]),
    "cbg_context_desc_init": (_st, [_P(cbg_context_desc_t)]),
    "cbg_context_create": (_st, [_P(cbg_context_desc_t), _P(_vp)]),
    "cbg_context_free": (_st, [_vp]),
    "cbg_context_device": (_st, [_vp, _P(ctypes.c_int32)]),
    "cbg_context_set_stream": (_st, [_vp, _vp]),
    "cbg_context_get_stream": (_st, [_vp, _P(_vp)]),
    "cbg_context_sync": (_st, [_vp]),
    "cbg_copy_stats": (_st, [_vp, _P(cbg_copy_stats_t)]),
    "cbg_copy_stats_reset": (_st, [_vp]),
    "cbg_context_stage_times": (_st, [_vp, _P(ctypes.c_char_p)]),
    "cbg_context_stage_times_reset": (_st, [_vp]),
    "cbg_nccl_unique_id": (_st, [_P(ctypes.c_uint8)]),
    "cbg_context_abort": (_st, [_vp]),
    "cbg_pool_desc_init": (_st, [_P(cbg_pool_desc_t)]),
    "cbg_pool_from_dlpack": (_st, [_vp, _P(cbg_pool_desc_t), _P(_vp)]),
    "cbg_pool_free": (_st, [_vp]),
    "cbg_pool_info": (_st, [_vp, _P(cbg_pool_info_t)]),
    "cbg_pool_feature_name": (_st, [_vp, ctypes.c_int64, _P(ctypes.c_char_p)]),
    "cbg_pool_is_categorical": (_st, [_vp, ctypes.c_int64, _P(ctypes.c_int32)]),
    "cbg_tensor_copy": (_st, [_vp, _P(cbg_tensor_ref_t), _P(cbg_tensor_ref_t)]),
    "cbg_quantize_desc_init": (_st, [_P(cbg_quantize_desc_t)]),
    "cbg_quantize_pool": (_st, [_vp, _P(cbg_quantize_desc_t), _P(_vp)]),
    "cbg_quantized_free": (_st, [_vp]),
    "cbg_quantized_borders": (_st, [_vp, ctypes.c_int64, _P(ctypes.c_float), ctypes.c_int32,
                                    _P(ctypes.c_int32), _P(ctypes.c_int32)]),
    "cbg_quantized_feature_bins": (_st, [_vp, ctypes.c_int64, _P(ctypes.c_uint8), ctypes.c_size_t]),
    "cbg_model_load_file": (_st, [ctypes.c_char_p, ctypes.c_int32, _P(_vp)]),
    "cbg_model_load_buffer": (_st, [_vp, ctypes.c_size_t, ctypes.c_int32, _P(_vp)]),
    "cbg_model_save_file": (_st, [_vp, ctypes.c_char_p, ctypes.c_int32]),
    "cbg_model_save_buffer": (_st, [_vp, ctypes.c_int32, _P(_vp), _P(ctypes.c_size_t)]),
    "cbg_model_free": (_st, [_vp]),
    "cbg_model_info": (_st, [_vp, _P(cbg_model_info_t)]),
    "cbg_model_feature_name": (_st, [_vp, ctypes.c_int64, _P(ctypes.c_char_p)]),
    "cbg_model_cat_feature_index": (_st, [_vp, ctypes.c_int64, _P(ctypes.c_int64)]),
    "cbg_model_float_feature_index": (_st, [_vp, ctypes.c_int64, _P(ctypes.c_int64)]),
    "cbg_model_class_name": (_st, [_vp, ctypes.c_int64, _P(ctypes.c_char_p)]),
    "cbg_model_info_value": (_st, [_vp, ctypes.c_char_p, _P(ctypes.c_char_p)]),
    "cbg_cat_hash_string": (_st, [ctypes.c_char_p, ctypes.c_size_t, _P(ctypes.c_uint32)]),
    "cbg_cat_hash_int64": (_st, [ctypes.c_int64, _P(ctypes.c_uint32)]),
    "cbg_model_prediction_columns": (_st, [_vp, ctypes.c_int32, _P(ctypes.c_int64)]),
    "cbg_model_predict_host_desc_init": (_st, [_P(cbg_model_predict_host_desc_t)]),
    "cbg_model_predict_host": (_st, [_vp, _P(cbg_model_predict_host_desc_t), _P(ctypes.c_double),
                                     ctypes.c_size_t]),
    "cbg_model_leaf_indexes_host": (_st, [_vp, _P(cbg_model_predict_host_desc_t), _P(ctypes.c_uint32),
                                          ctypes.c_size_t]),
    "cbg_train_callbacks_init": (_st, [_P(cbg_train_callbacks_t)]),
    "cbg_train": (_st, [_vp, ctypes.c_char_p, _vp, _P(cbg_train_callbacks_t), _P(_vp)]),
    "cbg_predict_desc_init": (_st, [_P(cbg_predict_desc_t)]),
    "cbg_predict_output_shape": (_st, [_vp, _P(cbg_predict_desc_t), ctypes.c_int64, _P(ctypes.c_int64)]),
    "cbg_predict_to_device": (_st, [_vp, _vp, _P(cbg_predict_desc_t), _P(cbg_tensor_ref_t), _vp]),
    "cbg_predict_to_host": (_st, [_vp, _vp, _P(cbg_predict_desc_t), _P(cbg_tensor_ref_t), _vp]),
    "cbg_context_memory_stats": (_st, [_vp, _P(cbg_memory_stats_t)]),
    "cbg_context_reset_memory_peak": (_st, [_vp]),
    "cbg_context_fail_allocation": (_st, [_vp, ctypes.c_uint64]),
    "cbg_pool_cat_hashes": (_st, [_vp, ctypes.c_int64, _P(ctypes.c_uint32), ctypes.c_size_t]),
    "cbg_pool_from_arrow": (_st, [_vp, _P(cbg_pool_desc_t), _vp, _vp, _P(_vp)]),
    "cbg_model_feature_importance": (_st, [_vp, ctypes.c_int32, _vp, _P(ctypes.c_double), ctypes.c_size_t,
                                           _P(ctypes.c_int64), _P(ctypes.c_int32)]),
}


def _declare(lib: ctypes.CDLL) -> None:
    for name, (restype, argtypes) in _PROTOTYPES.items():
        fn = getattr(lib, name)
        fn.restype = restype
        fn.argtypes = argtypes


lib = load_library()


# ---- errors ---------------------------------------------------------------------------------------------
class CbgError(RuntimeError):
    """A cbg_* call returned a non-zero status; `code`, `name` (e.g. "CBG_ERR_SHAPE") and `message`
    (cbg_last_error() of the failed call) tell what happened."""

    def __init__(self, code: int, name: str, message: str):
        super().__init__(f"{name} ({code}): {message}")
        self.code = code
        self.name = name
        self.message = message


def last_error() -> str:
    """cbg_last_error() of the calling thread, decoded."""
    return lib.cbg_last_error().decode("utf-8", "replace")


def status_string(status: int) -> str:
    """cbg_status_string(): the static description of a status code."""
    return lib.cbg_status_string(status).decode("utf-8", "replace")


def _check(status: int) -> None:
    """Raises CbgError for a non-zero status, with the thread's last error message."""
    if status != CBG_OK:
        raise CbgError(status, STATUS_NAMES.get(status, f"unknown status {status}"), last_error())
