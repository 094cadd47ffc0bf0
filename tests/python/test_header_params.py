# SPDX-License-Identifier: Apache-2.0
"""The C header is the specification: every parameter name the trainer accepts (its canonical names
and aliases) is listed in cbg_train's documentation in capi/include/cbgpu/cbgpu.h.

The accepted names are found by asking the trainer itself, so the test does not depend on how the
parameter tables are written: every snake_case string literal of the parameter sources is a
candidate, and a candidate is accepted when cbg_train does not refuse it as an unknown parameter."""
import re
from pathlib import Path

import numpy as np
import pytest

import cbgpu

ROOT = Path(__file__).resolve().parents[2]
HEADER = ROOT / "capi" / "include" / "cbgpu" / "cbgpu.h"
PARAMETER_SOURCES = [ROOT / "src" / "train" / "param_table.cpp", ROOT / "src" / "train" / "params.cpp",
                     ROOT / "src" / "ctr" / "options.cpp"]


def documented_names() -> set[str]:
    """The words of cbg_train's params_json documentation."""
    text = HEADER.read_text()
    start = text.index("@param params_json")
    end = text.index("@param eval_pool", start)
    return set(re.findall(r"[a-z][a-z0-9_]*", text[start:end]))


def candidate_names() -> set[str]:
    names = set()
    for source in PARAMETER_SOURCES:
        names |= set(re.findall(r'"([a-z][a-z0-9]*(?:_[a-z0-9]+)*)"', source.read_text()))
    return names


def is_accepted(ctx, pool, name: str) -> bool:
    """Whether the trainer knows `name` (a deliberately unusable value makes it stop early)."""
    try:
        cbgpu.train(pool, {name: {"not": "a value"}, "iterations": 1})
    except cbgpu.CbgError as e:
        # CatBoost's parameters that cbgpu lacks are refused by name as not implemented.
        return "unknown parameter" not in str(e) and "a CatBoost parameter cbgpu does not implement" not in str(e)
    return True


def test_every_accepted_parameter_is_documented_in_the_header(ctx):
    X = np.arange(40, dtype=np.float32).reshape(20, 2)
    y = (np.arange(20) % 2).astype(np.float32)
    with cbgpu.Pool(ctx, X, label=y) as pool:
        assert not is_accepted(ctx, pool, "surely_not_a_parameter")
        accepted = {name for name in candidate_names() if is_accepted(ctx, pool, name)}
    assert {"loss_function", "depth", "max_ctr_complexity", "eta"} <= accepted  # the probe works
    missing = sorted(accepted - documented_names())
    if missing:
        pytest.fail(f"parameters the trainer accepts but cbg_train's documentation in {HEADER.name} does not "
                    f"list: {missing}")
