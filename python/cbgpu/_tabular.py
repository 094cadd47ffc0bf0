# SPDX-License-Identifier: Apache-2.0
"""Host tables as the estimators take them: pandas DataFrames, NumPy arrays (numeric, or object/string
arrays) and nested lists, with categorical features named as CatBoost names them (`cat_features`:
indices or column names).

A table becomes one pool column per feature: float32 for numeric features, int64 for integer
categorical ones (the library hashes their decimal text, as CatBoost's Python package does) and a
dictionary string column (cbg_string_column_t: a code per row, each distinct value's UTF-8 text
once) for the others: str and bytes values as they are, Python/NumPy integers (and bools) as their
decimal text. Real numbers, NaN and None are refused as CatBoost refuses them.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np


@dataclass
class Table:
    """Pool arguments for one table: `columns` (None where a string column takes the slot),
    `string_columns` tuples for cbgpu.Pool, all categorical indices, and the feature names."""

    columns: list
    string_columns: list = field(default_factory=list)
    cat_features: list = field(default_factory=list)
    names: list | None = None


def is_dataframe(x: Any) -> bool:
    return type(x).__module__.split(".", 1)[0] == "pandas" and hasattr(x, "columns") and hasattr(x, "iloc")


def is_table(x: Any) -> bool:
    """Host data the estimators turn into a pool column by column (a DataFrame, or an array that is
    not numeric), rather than pass as one float32 matrix."""
    if is_dataframe(x):
        return True
    if hasattr(x, "__dlpack_device__") or hasattr(x, "__cuda_array_interface__"):
        return False
    return isinstance(x, np.ndarray) and x.dtype.kind in "OUS"


def feature_names(x: Any) -> list[str] | None:
    return [str(c) for c in x.columns] if is_dataframe(x) else None


def resolve_cat_features(cat_features: Sequence[Any] | None, names: list[str] | None,
                         n_features: int | None) -> list[int]:
    """Sorted feature indices of `cat_features` (indices, or names where the data has names)."""
    out = []
    for c in cat_features if cat_features is not None else ():
        if isinstance(c, str):
            if names is None or c not in names:
                raise ValueError(f"cat_features: {c!r} is not a feature name of the data "
                                 f"({'no names: pass indices' if names is None else names})")
            out.append(names.index(c))
            continue
        if isinstance(c, (bool, np.bool_)) or not isinstance(c, (int, np.integer)):
            raise ValueError(f"cat_features must hold feature indices or names, not {c!r}")
        i = int(c)
        if i < 0 or (n_features is not None and i >= n_features):
            raise ValueError(f"cat_features: index {i} is out of range for {n_features} features")
        out.append(i)
    if len(set(out)) != len(out):
        raise ValueError(f"cat_features lists a feature twice: {list(cat_features)}")
    return sorted(out)


def _text(v: Any, feature: int) -> bytes:
    """CatBoost's string form of a categorical value."""
    if isinstance(v, bytes):
        return v
    if isinstance(v, str):
        return v.encode("utf-8")
    if isinstance(v, (bool, int, np.bool_, np.integer)):
        return str(int(v)).encode("ascii")
    raise ValueError(f"categorical feature {feature}: value {v!r} is neither an integer nor a string; as in "
                     f"CatBoost, real numbers, NaN and None must be converted to strings first")


def _factorize(values: np.ndarray) -> tuple[np.ndarray, list]:
    """(code per row, distinct values in order of first appearance)."""
    try:
        import pandas as pd
    except ImportError:
        pd = None
    if pd is not None:
        codes, uniques = pd.factorize(values, use_na_sentinel=False)
        return np.asarray(codes, dtype=np.int64), list(uniques)
    index: dict = {}
    codes = np.empty(len(values), dtype=np.int64)
    for r, v in enumerate(values):
        key = (type(v), v)
        codes[r] = index.setdefault(key, len(index))
    return codes, [k[1] for k in index]


def _string_column(feature: int, codes: np.ndarray, uniques: Sequence[Any]) -> tuple:
    texts = [_text(u, feature) for u in uniques]
    offsets = np.zeros(len(texts) + 1, dtype=np.int64)
    np.cumsum([len(t) for t in texts], out=offsets[1:])
    data = np.frombuffer(b"".join(texts) or b"\0", dtype=np.uint8).copy()
    return feature, offsets, data, np.ascontiguousarray(codes, dtype=np.int64)


def _categorical(table: Table, j: int, col: Any) -> None:
    """Adds categorical feature j from a pandas Series or a NumPy column."""
    dtype = getattr(col, "dtype", None)
    if dtype is not None and type(dtype).__name__ == "CategoricalDtype":
        codes = np.asarray(col.cat.codes, dtype=np.int64)
        if (codes < 0).any():
            raise ValueError(f"categorical feature {j}: missing values (NaN) in row {int(np.argmax(codes < 0))}; "
                             f"as in CatBoost, give them a category of their own")
        table.columns.append(None)
        table.string_columns.append(_string_column(j, codes, list(col.cat.categories)))
        return
    if isinstance(dtype, np.dtype) and (dtype.kind in "ib" or (dtype.kind == "u" and dtype.itemsize < 8)):
        table.columns.append(np.ascontiguousarray(np.asarray(col), dtype=np.int64))
        return
    codes, uniques = _factorize(np.asarray(col, dtype=object))
    table.columns.append(None)
    table.string_columns.append(_string_column(j, codes, uniques))


def _numeric(j: int, name: str | None, col: Any) -> np.ndarray:
    try:
        return np.ascontiguousarray(np.asarray(col, dtype=np.float32))
    except (TypeError, ValueError) as e:
        what = f"feature {j}" + (f" ({name!r})" if name else "")
        raise ValueError(f"{what} is not numeric ({e}); list it in cat_features if it is categorical") from None


def host_table(x: Any, cat_features: Sequence[Any] | None) -> Table | None:
    """The pool columns of host data `x`, or None when `x` is a plain numeric matrix without
    categorical features (the caller passes it as one float32 matrix)."""
    if is_dataframe(x):
        names = feature_names(x)
        cats = resolve_cat_features(cat_features, names, len(names))
        table = Table(columns=[], cat_features=cats, names=names)
        for j in range(len(names)):
            col = x.iloc[:, j]
            if j in cats:
                _categorical(table, j, col)
            else:
                table.columns.append(_numeric(j, names[j], col.to_numpy()))
        return table
    a = x if isinstance(x, np.ndarray) else np.asarray(x, dtype=object if _has_text(x) else None)
    if a.ndim != 2:
        raise ValueError(f"features must be 2-D [rows, features], not of shape {a.shape}")
    cats = resolve_cat_features(cat_features, None, a.shape[1])
    if not cats and a.dtype.kind not in "OUS":
        return None
    if cats and a.dtype.kind in "fc":
        raise ValueError("a floating-point array cannot hold categorical features (as in CatBoost): pass an "
                         "integer or object array, or a DataFrame")
    table = Table(columns=[], cat_features=cats)
    for j in range(a.shape[1]):
        if j in cats:
            _categorical(table, j, a[:, j])
        else:
            table.columns.append(_numeric(j, None, a[:, j]))
    return table


def _has_text(x: Any) -> bool:
    """Whether a nested list holds strings or bytes (then it becomes an object array)."""
    try:
        return any(isinstance(v, (str, bytes)) for row in x for v in row)
    except TypeError:
        return False


def is_catboost_pool(x: Any) -> bool:
    """Whether `x` is a catboost.Pool (checked by type name: catboost need not be installed)."""
    return type(x).__module__.split(".")[0] in ("catboost", "_catboost") and hasattr(x, "get_features")


def from_catboost_pool(x: Any, y: Any = None, weight: Any = None, baseline: Any = None) -> tuple:
    """(features, label, weight, baseline) of a catboost.Pool: its numeric features as float32, and
    its label, weights (when not all 1) and baseline unless given; anything else is returned as it is.
    A pool with categorical, text or embedding features is refused: catboost.Pool does not give their
    values back (pass the data itself, a DataFrame or arrays, with cat_features)."""
    if not is_catboost_pool(x):
        return x, y, weight, baseline
    other = [kind for kind, get in (("categorical", "get_cat_feature_indices"), ("text", "get_text_feature_indices"),
                                    ("embedding", "get_embedding_feature_indices"))
             if hasattr(x, get) and len(getattr(x, get)())]
    if other:
        raise ValueError(f"a catboost.Pool with {' and '.join(other)} features: catboost.Pool does not give those "
                         "values back; pass the data itself (a DataFrame or arrays) with cat_features")
    features = np.ascontiguousarray(np.asarray(x.get_features(), dtype=np.float32))
    if y is None and x.has_label():
        y = np.asarray(x.get_label())
    if weight is None:
        w = np.asarray(x.get_weight(), dtype=np.float32)
        weight = w if w.size and np.any(w != 1) else None
    if baseline is None:
        b = x.get_baseline()
        baseline = np.asarray(b, dtype=np.float64) if b is not None and np.size(b) else None
        if baseline is not None and baseline.ndim == 2 and baseline.shape[1] == 1:
            baseline = baseline[:, 0]
    return features, y, weight, baseline


def eval_pair(eval_set: Any) -> Any:
    """eval_set as an (X, y) pair (or None): a one-element list is its element; a catboost.Pool its
    numeric features and label."""
    if isinstance(eval_set, list):
        if len(eval_set) != 1:
            raise ValueError(f"eval_set: one (X, y) pair or catboost.Pool is supported, not {len(eval_set)}")
        eval_set = eval_set[0]
    if is_catboost_pool(eval_set):
        x, y, _, _ = from_catboost_pool(eval_set)
        return x, y
    return eval_set
