"""k-means over histograms with the earth mover's distance under a ground-distance matrix, in
scikit-learn's estimator style.

``EMDKMeans(n_clusters, ground_distance, ...).fit(X, sample_weight)`` clusters histograms
(rows of X) whose entries are at arbitrary ground distances from each other (the
potential-aware features of Ganzfried & Sandholm 2014, GS14, whose entries are next-round
buckets): EMD by GS14's greedy approximation (their Algorithm 2, ``emd.greedy_distances``),
exact EMD being an LP per pair. Points are assigned to the centre at the smallest EMD and
every centre moves to the weighted mean of its points. Seeding is k-means++ (each new
centre drawn with probability proportional to weight x squared EMD to the nearest chosen
centre), ``n_init`` restarts keep the run with the smallest inertia (weighted sum of EMDs
to the assigned centres), and ``random_state`` makes it reproducible. A centre left
without points is moved to the point farthest from its own centre.

Histograms on a line (entries at increasing positions) have an exact EMD, L1 between CDFs:
``line_kmeans.LineEMDKMeans`` clusters those, from a card game's few hundred situations to
hold'em's millions of hands.

Results follow scikit-learn: ``labels_``, ``cluster_centers_``, ``inertia_``, ``n_iter_``,
and ``predict``/``fit_predict``/``transform``.
"""

from __future__ import annotations

import numpy as np

from efgkit.abstraction.cards.emd import greedy_distances, nearest_order
from efgkit.errors import AbstractionError


class EMDKMeans:
    """k-means with GS14's greedy EMD over a ground-distance matrix (see the module docstring)."""

    def __init__(
        self,
        n_clusters: int = 8,
        ground_distance: np.ndarray | None = None,
        *,
        n_init: int = 10,
        max_iter: int = 300,
        random_state: int | np.random.Generator | None = None,
    ) -> None:
        self.n_clusters = n_clusters
        self.ground_distance = ground_distance
        self.n_init = n_init
        self.max_iter = max_iter
        self.random_state = random_state

    # ------------------------------------------------------------------ distances
    def _prepare(self, support: int) -> None:
        if self.ground_distance is None:
            raise AbstractionError("EMDKMeans needs a ground_distance matrix; histograms on a line "
                                   "(increasing positions) are LineEMDKMeans's")
        ground = np.asarray(self.ground_distance, dtype=np.float64)
        if ground.shape != (support, support):
            raise AbstractionError(
                f"ground_distance must be ({support}, {support}) for {support}-entry histograms, "
                f"got {ground.shape}"
            )
        self._order, self._sorted = nearest_order(ground)

    def _distances(self, points: np.ndarray, centers: np.ndarray) -> np.ndarray:
        return greedy_distances(points, centers, self._order, self._sorted)

    # ------------------------------------------------------------------ fitting
    def _check(self, X, sample_weight) -> tuple[np.ndarray, np.ndarray]:
        points = np.ascontiguousarray(X, dtype=np.float64)
        if points.ndim != 2 or points.shape[0] == 0:
            raise AbstractionError(f"X must be a non-empty 2-D array of histograms, got shape {points.shape}")
        if not np.all(np.isfinite(points)) or points.min() < 0 or not np.allclose(points.sum(axis=1), 1.0):
            raise AbstractionError("every row of X must be a histogram: non-negative, summing to 1")
        weights = np.ones(points.shape[0]) if sample_weight is None else np.asarray(
            sample_weight, dtype=np.float64)
        if weights.shape != (points.shape[0],) or weights.min() < 0 or weights.sum() <= 0:
            raise AbstractionError("sample_weight needs one non-negative weight per row, not all zero")
        if not isinstance(self.n_clusters, int | np.integer) or self.n_clusters < 1:
            raise AbstractionError(f"n_clusters must be a positive integer, got {self.n_clusters!r}")
        distinct = np.unique(points[weights > 0], axis=0).shape[0]
        if self.n_clusters > distinct:
            raise AbstractionError(
                f"n_clusters={self.n_clusters} is more than the {distinct} distinct histograms"
            )
        if self.n_init < 1 or self.max_iter < 1:
            raise AbstractionError("n_init and max_iter must be at least 1")
        return points, weights

    def _seed(self, points, weights, rng) -> np.ndarray:
        """k-means++: weight x squared distance to the nearest chosen centre."""
        chosen = [int(rng.choice(points.shape[0], p=weights / weights.sum()))]
        nearest = self._distances(points, points[chosen])[:, 0]
        for _ in range(1, self.n_clusters):
            mass = weights * nearest ** 2
            chosen.append(int(rng.choice(points.shape[0], p=mass / mass.sum())))
            nearest = np.minimum(nearest, self._distances(points, points[chosen[-1:]])[:, 0])
        return points[chosen].copy()

    def _lloyd(self, points, weights, centers):
        """Lloyd iterations until the assignment repeats; the labels returned are the final
        centres' nearest points (one more assignment if ``max_iter`` ran out)."""
        labels = None
        positive = weights > 0
        for iteration in range(1, self.max_iter + 1):  # noqa: B007  (n_iter_ reports it)
            distances = self._distances(points, centers)
            nearest = np.argmin(distances, axis=1)
            if labels is not None and np.array_equal(nearest, labels):
                break
            labels = nearest
            for empty in np.flatnonzero(np.bincount(labels[positive], minlength=self.n_clusters) == 0):
                # Give an empty centre the point worst served by a centre that has others.
                members = np.bincount(labels[positive], minlength=self.n_clusters)
                own = np.where(positive & (members[labels] > 1),
                               distances[np.arange(points.shape[0]), labels], -1.0)
                labels[int(np.argmax(own))] = empty
            mass = np.bincount(labels, weights=weights, minlength=self.n_clusters)
            centers = np.zeros_like(centers)
            np.add.at(centers, labels, points * weights[:, None])
            centers /= mass[:, None]
        else:
            distances = self._distances(points, centers)
            nearest = np.argmin(distances, axis=1)
        inertia = float(np.sum(weights * distances[np.arange(points.shape[0]), nearest]))
        return nearest, centers, inertia, iteration

    def fit(self, X, y=None, sample_weight=None) -> EMDKMeans:
        """Cluster the histograms in X (n_samples, support) with optional sample weights."""
        points, weights = self._check(X, sample_weight)
        self._prepare(points.shape[1])
        rng = np.random.default_rng(self.random_state)
        best = None
        for _ in range(self.n_init):
            result = self._lloyd(points, weights, self._seed(points, weights, rng))
            if best is None or result[2] < best[2]:
                best = result
        self.labels_, self.cluster_centers_, self.inertia_, self.n_iter_ = best
        return self

    def fit_predict(self, X, y=None, sample_weight=None) -> np.ndarray:
        return self.fit(X, sample_weight=sample_weight).labels_

    def transform(self, X) -> np.ndarray:
        """EMD from every row of X to every centre, (n_samples, n_clusters)."""
        if not hasattr(self, "cluster_centers_"):
            raise AbstractionError("this EMDKMeans is not fitted yet; call fit first")
        return self._distances(np.ascontiguousarray(X, dtype=np.float64), self.cluster_centers_)

    def predict(self, X) -> np.ndarray:
        """The nearest centre (by EMD) of every row of X."""
        return np.argmin(self.transform(X), axis=1)
