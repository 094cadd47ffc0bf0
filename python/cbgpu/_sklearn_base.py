# SPDX-License-Identifier: Apache-2.0
"""scikit-learn's base classes when scikit-learn is installed, else small stand-ins with the same
get_params/set_params/score behaviour (scikit-learn stays optional, as in XGBoost and LightGBM)."""
from __future__ import annotations

import inspect
from typing import Any

import numpy as np

try:
    from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin

    HAVE_SKLEARN = True
except ImportError:  # pragma: no cover - exercised where scikit-learn is absent
    HAVE_SKLEARN = False

    class BaseEstimator:  # type: ignore[no-redef]
        """get_params/set_params over the constructor's named arguments, as scikit-learn's."""

        @classmethod
        def _get_param_names(cls) -> list[str]:
            params = inspect.signature(cls.__init__).parameters.values()
            return sorted(p.name for p in params
                          if p.name != "self" and p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL))

        def get_params(self, deep: bool = True) -> dict:  # noqa: ARG002 - scikit-learn's signature
            return {name: getattr(self, name) for name in self._get_param_names()}

        def set_params(self, **params: Any):
            valid = self.get_params()
            for key, value in params.items():
                if key not in valid:
                    raise ValueError(f"invalid parameter {key!r} for estimator {type(self).__name__}")
                setattr(self, key, value)
            return self

        def __repr__(self) -> str:
            args = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items() if v is not None)
            return f"{type(self).__name__}({args})"

    class ClassifierMixin:  # type: ignore[no-redef]
        _estimator_type = "classifier"

        def score(self, X: Any, y: Any, sample_weight: Any = None) -> float:
            """Mean accuracy of predict(X) against y (weighted by sample_weight)."""
            hit = (np.asarray(self.predict(X)) == np.asarray(y)).astype(np.float64)
            return float(np.average(hit, weights=sample_weight))

    class RegressorMixin:  # type: ignore[no-redef]
        _estimator_type = "regressor"

        def score(self, X: Any, y: Any, sample_weight: Any = None) -> float:
            """The coefficient of determination R^2 of predict(X) against y."""
            y = np.asarray(y, dtype=np.float64)
            pred = np.asarray(self.predict(X), dtype=np.float64)
            w = np.ones_like(y) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
            residual = np.sum(w * (y - pred) ** 2)
            total = np.sum(w * (y - np.average(y, weights=w)) ** 2)
            return float(1.0 - residual / total) if total else 0.0

__all__ = ["BaseEstimator", "ClassifierMixin", "RegressorMixin", "HAVE_SKLEARN"]
