"""Percentile bucketing of a 1-D feature: the classic baseline (PHS in Johanson et al. 2013).

``PercentileBuckets(n_buckets).fit(values, sample_weight)`` cuts the weighted
distribution of a scalar feature (usually E[HS]) into ``n_buckets`` slices of equal mass:
a value goes to bucket ``floor(n_buckets * m)`` where ``m`` is the weighted mass below
it plus half its own. Equal values always share a bucket, so fewer buckets than asked
may be non-empty; labels are renumbered densely in increasing order of the feature.
"""

from __future__ import annotations

import numpy as np

from efgkit.errors import AbstractionError


class PercentileBuckets:
    """Equal-mass buckets of a scalar feature (scikit-learn style: fit, labels_, predict)."""

    def __init__(self, n_buckets: int = 10) -> None:
        self.n_buckets = n_buckets

    def fit(self, X, y=None, sample_weight=None) -> PercentileBuckets:
        values = np.asarray(X, dtype=np.float64).reshape(-1)
        if values.size == 0 or not np.all(np.isfinite(values)):
            raise AbstractionError("percentile bucketing needs a non-empty array of finite numbers")
        if not isinstance(self.n_buckets, int | np.integer) or self.n_buckets < 1:
            raise AbstractionError(f"n_buckets must be a positive integer, got {self.n_buckets!r}")
        weights = np.ones(values.size) if sample_weight is None else np.asarray(sample_weight, float)
        if weights.shape != values.shape or weights.min() < 0 or weights.sum() <= 0:
            raise AbstractionError("sample_weight needs one non-negative weight per value, not all zero")
        distinct, inverse = np.unique(values, return_inverse=True)
        mass = np.bincount(inverse, weights=weights) / weights.sum()
        middle = np.cumsum(mass) - mass / 2
        raw = np.minimum((middle * self.n_buckets).astype(np.int64), self.n_buckets - 1)
        _, dense = np.unique(raw, return_inverse=True)
        self.labels_ = dense[inverse]
        self.n_buckets_ = int(dense.max()) + 1
        first = np.concatenate([[True], np.diff(dense) > 0])
        self.edges_ = distinct[first]
        """Smallest fitted value of each bucket; ``predict`` cuts at these."""
        return self

    def fit_predict(self, X, y=None, sample_weight=None) -> np.ndarray:
        return self.fit(X, sample_weight=sample_weight).labels_

    def predict(self, X) -> np.ndarray:
        if not hasattr(self, "edges_"):
            raise AbstractionError("this PercentileBuckets is not fitted yet; call fit first")
        values = np.asarray(X, dtype=np.float64).reshape(-1)
        return np.maximum(np.searchsorted(self.edges_, values, side="right") - 1, 0)
