# SPDX-License-Identifier: Apache-2.0
"""Quantized: CatBoost-identical borders and the bin index of a pool (cbg_quantize_pool)."""
from __future__ import annotations

import ctypes
from typing import Mapping

from ._capi import (CBG_BORDER_GREEDY_LOG_SUM, CBG_BORDER_GREEDY_MIN_ENTROPY, CBG_BORDER_MAX_LOG_SUM,
                    CBG_BORDER_MEDIAN, CBG_BORDER_MIN_ENTROPY, CBG_BORDER_UNIFORM,
                    CBG_BORDER_UNIFORM_AND_QUANTILES, CBG_NAN_MODE_FORBIDDEN, CBG_NAN_MODE_MAX,
                    CBG_NAN_MODE_MIN, CBG_SUBSET_FIRST_ROWS, CBG_SUBSET_SAMPLED, _check,
                    cbg_quantize_desc_t, lib)
from ._handle import Handle
from ._pool import Pool

NAN_MODES = {"Forbidden": CBG_NAN_MODE_FORBIDDEN, "Min": CBG_NAN_MODE_MIN, "Max": CBG_NAN_MODE_MAX}
BORDER_TYPES = {"GreedyLogSum": CBG_BORDER_GREEDY_LOG_SUM,
                "GreedyMinEntropy": CBG_BORDER_GREEDY_MIN_ENTROPY,
                "Median": CBG_BORDER_MEDIAN,
                "Uniform": CBG_BORDER_UNIFORM,
                "UniformAndQuantiles": CBG_BORDER_UNIFORM_AND_QUANTILES,
                "MinEntropy": CBG_BORDER_MIN_ENTROPY,
                "MaxLogSum": CBG_BORDER_MAX_LOG_SUM}
SUBSET_RULES = {"sampled": CBG_SUBSET_SAMPLED, "first_rows": CBG_SUBSET_FIRST_ROWS}


class Quantized(Handle):
    """A cbg_quantized_t: quantize `pool` with CatBoost's option names.

    per_feature maps a feature index to a dict with optional "border_count", "nan_mode" and
    "border_type". The border subset uses the pool's context seed (CatBoost's random_seed);
    subset_rule="first_rows" takes the first max_subset_size rows instead (CatBoost's rule for a
    shuffled learn set).
    """

    _kind = "quantized pool"
    _free = staticmethod(lib.cbg_quantized_free)

    def __init__(self, pool: Pool, *, border_count: int = 128, nan_mode: str = "Min",
                 feature_border_type: str = "GreedyLogSum", max_subset_size: int = 200000,
                 per_feature: Mapping[int, Mapping[str, object]] | None = None,
                 subset_rule: str = "sampled"):
        super().__init__()
        desc = cbg_quantize_desc_t()
        _check(lib.cbg_quantize_desc_init(ctypes.byref(desc)))
        desc.border_count = border_count
        desc.nan_mode = NAN_MODES[nan_mode]
        desc.border_type = BORDER_TYPES[feature_border_type]
        desc.max_subset_size = max_subset_size
        desc.subset_rule = SUBSET_RULES[subset_rule]
        items = sorted((per_feature or {}).items())
        feats = (ctypes.c_int64 * len(items))(*[f for f, _ in items])
        counts = (ctypes.c_int32 * len(items))(*[int(o.get("border_count", 0)) for _, o in items])
        modes = (ctypes.c_int32 * len(items))(
            *[NAN_MODES[o["nan_mode"]] if "nan_mode" in o else -1 for _, o in items])
        types = (ctypes.c_int32 * len(items))(
            *[BORDER_TYPES[o["border_type"]] if "border_type" in o else -1 for _, o in items])
        if items:
            desc.n_overrides = len(items)
            desc.override_features = feats
            desc.override_border_counts = counts
            desc.override_nan_modes = modes
            desc.override_border_types = types
        handle = ctypes.c_void_p()
        _check(lib.cbg_quantize_pool(pool.handle, ctypes.byref(desc), ctypes.byref(handle)))
        self._handle = handle.value
        self.n_rows = pool.info()["n_rows"]

    def borders(self, feature: int) -> list[float]:
        """The borders of `feature`, ascending (floats exactly as stored: float32 values)."""
        out = (ctypes.c_float * 256)()
        count = ctypes.c_int32()
        _check(lib.cbg_quantized_borders(self.handle, feature, out, 256, ctypes.byref(count), None))
        return [out[i] for i in range(count.value)]

    def nan_mode(self, feature: int) -> str:
        """The NaN mode binarization used ("Forbidden" when the border subset had no NaN)."""
        count = ctypes.c_int32()
        mode = ctypes.c_int32()
        out = (ctypes.c_float * 256)()
        _check(lib.cbg_quantized_borders(self.handle, feature, out, 256, ctypes.byref(count),
                                         ctypes.byref(mode)))
        return {v: k for k, v in NAN_MODES.items()}[mode.value]

    def bins(self, feature: int) -> bytes:
        """The bin of every row for `feature` (a device-to-host copy on GPU contexts)."""
        out = (ctypes.c_uint8 * max(self.n_rows, 1))()
        _check(lib.cbg_quantized_feature_bins(self.handle, feature, out, self.n_rows))
        return bytes(out)[: self.n_rows]

    free = Handle.close
