# SPDX-License-Identifier: Apache-2.0
"""CatBoost's views of a fitted model's info: the metric history ("training") as evals_result_,
best_score_ and best_iteration_, the parameters ("params", CatBoost's nested layout) as
get_all_params()'s plain names, and CatBoost's progress line."""
from __future__ import annotations

from typing import Any


def _eval_set_names(count: int) -> list[str]:
    """CatBoost's names of the eval sets: "validation" for one, "validation_0", ... for several."""
    return ["validation"] if count == 1 else [f"validation_{i}" for i in range(count)]


def evals_result(history: dict) -> dict:
    """{'learn': {metric: [value per iteration]}, 'validation': {...}} from a "training" history
    (learn_metrics_history: a dict per iteration; test_metrics_history: a list per iteration with a
    dict per eval set). Iterations where a metric was not computed are left out, as in CatBoost."""
    out: dict = {}
    learn: dict = {}
    for entry in history.get("learn_metrics_history", []):
        for name, value in entry.items():
            learn.setdefault(name, []).append(value)
    if learn:
        out["learn"] = learn
    tests = history.get("test_metrics_history", [])
    n_sets = max((len(per_iteration) for per_iteration in tests), default=0)
    for k, set_name in enumerate(_eval_set_names(n_sets) if n_sets else []):
        values: dict = {}
        for per_iteration in tests:
            if k < len(per_iteration):
                for name, value in per_iteration[k].items():
                    values.setdefault(name, []).append(value)
        out[set_name] = values
    return out


def best_score(history: dict) -> dict:
    """{'learn': {metric: best value}, 'validation': {metric: value at the best iteration}}."""
    out: dict = {}
    if history.get("learn_best_error"):
        out["learn"] = dict(history["learn_best_error"])
    tests = history.get("test_best_error", [])
    for set_name, values in zip(_eval_set_names(len(tests)), tests):
        out[set_name] = dict(values)
    return out


def best_iteration(history: dict) -> int | None:
    """The iteration with the best eval metric; None without an eval set."""
    value = history.get("best_iteration")
    return None if value is None else int(value)


# ---- parameters: CatBoost's nested layout -> plain names ------------------------------------------------
#: Plain names that differ from the nested key (path -> name); None: left out.
_RENAMED = {
    ("boosting_options", "od_config", "type"): "od_type",
    ("boosting_options", "od_config", "wait_iterations"): "od_wait",
    ("boosting_options", "od_config", "stop_pvalue"): "od_pval",
    ("tree_learner_options", "bootstrap", "type"): "bootstrap_type",
    ("data_processing_options", "float_features_binarization", "border_type"): "feature_border_type",
    ("data_processing_options", "float_features_binarization", "dev_max_subset_size_for_build_borders"): None,
    ("metrics", "custom_metrics"): "custom_metric",
    ("metrics", "objective_metric"): None,
    ("cat_feature_params", "simple_ctrs"): None,
    ("cat_feature_params", "combinations_ctrs"): None,
    ("cat_feature_params", "per_feature_ctrs"): None,
    ("cat_feature_params", "target_binarization"): None,
    ("flat_params",): None,
    ("metadata",): None,
    ("pool_metainfo_options",): None,
}


def _metric_text(m: dict) -> str:
    """{"type": "Quantile", "params": {"alpha": "0.5"}} -> "Quantile:alpha=0.5" (CatBoost's text)."""
    params = m.get("params") or {}
    return m["type"] + ("" if not params else ":" + ";".join(f"{k}={v}" for k, v in params.items()))


def _is_metric(v: Any) -> bool:
    return isinstance(v, dict) and "type" in v and set(v) <= {"type", "params"}


def plain_params(nested: dict) -> dict:
    """CatBoost's training options ("params" info of a model) by their plain parameter names, as
    catboost's get_all_params() gives them: loss_function "Logloss", depth, od_type, bootstrap_type..."""
    out: dict = {}

    def walk(node: dict, path: tuple) -> None:
        for key, value in node.items():
            here = path + (key,)
            name = _RENAMED.get(here, key)
            if name is None:
                continue
            if _is_metric(value):
                out[name] = _metric_text(value)
            elif isinstance(value, list) and value and all(_is_metric(v) for v in value):
                out[name] = [_metric_text(v) for v in value]
            elif isinstance(value, dict) and here not in _RENAMED:
                walk(value, here)
            else:
                out.setdefault(name, value)

    walk(nested, ())
    return out


# ---- progress lines ------------------------------------------------------------------------------------

def format_duration(seconds: float) -> str:
    """CatBoost's durations in progress lines: 850us, 12.3ms, 4.56s, 3m 12s, 1h 5m."""
    if seconds < 1e-3:
        return f"{seconds * 1e6:.0f}us"
    if seconds < 1:
        return f"{seconds * 1e3:.3g}ms"
    if seconds < 60:
        return f"{seconds:.3g}s"
    if seconds < 3600:
        return f"{int(seconds // 60)}m {int(seconds) % 60}s"
    return f"{int(seconds // 3600)}h {int(seconds // 60) % 60}m"


def progress_line(p: dict) -> str:
    """CatBoost's line for one iteration of a progress dict (cbgpu.train's callback argument)."""
    line = f"{p['iteration']}:"
    if p.get("learn_metric") is not None:
        line += f"\tlearn: {p['learn_metric']:.7f}"
    if p.get("eval_metric") is not None:
        line += f"\ttest: {p['eval_metric']:.7f}\tbest: {p['best_eval_metric']:.7f} ({p['best_iteration']})"
    return line + f"\ttotal: {format_duration(p['elapsed_seconds'])}\tremaining: " \
                  f"{format_duration(p['remaining_seconds'])}"
