"""Earth mover's distance between histograms: exact on a line, exact transport, GS14's greedy.

* On a line (equal-width hand-strength bins, or next-round clusters whose centres are
  numbers), EMD is exact and linear: the L1 distance between the two CDFs, each step
  weighted by the gap to the next support point (Ganzfried & Sandholm 2014, Sec. 1;
  equals ``scipy.stats.wasserstein_distance`` with the support as values and the
  histograms as weights).
* For a general ground distance (potential-aware histograms over clusters whose
  centres are themselves histograms) ``emd_exact`` solves the transportation problem with
  POT (``ot.emd2``), and ``emd_greedy`` is the fast approximation of Ganzfried & Sandholm 2014,
  Algorithm 2: each unit of the point's mass moves to the nearest cluster where the
  mean still has mass left. It is a feasible transport plan, so never below the exact
  EMD (the published pseudo-code subtracts the moved mass after zeroing it; here the
  subtraction comes first, the fix their own text implies).

Arrays: histograms are float64 with one entry per support point, each summing to 1;
``positions`` are increasing floats; ``ground`` is a symmetric (n, n) distance matrix.
"""

from __future__ import annotations

import numba
import numpy as np

from efgkit.errors import AbstractionError


def bin_centers(bins: int) -> np.ndarray:
    """Centres of ``bins`` equal-width bins of [0, 1]: the default support of a histogram."""
    return (np.arange(bins) + 0.5) / bins


@numba.njit(cache=True, no_cfunc_wrapper=True)
def line_distances(point_cdfs, center_cdfs, gaps):
    """Exact EMD on a line between every point and every centre, float64 (points, centres).

    Arguments are CDFs (cumulative sums of the histograms, shape (n, support)) and the
    gaps between consecutive support points (support - 1,).
    """
    points, centers = point_cdfs.shape[0], center_cdfs.shape[0]
    distances = np.empty((points, centers))
    for i in range(points):
        for k in range(centers):
            total = 0.0
            for t in range(gaps.shape[0]):
                total += abs(point_cdfs[i, t] - center_cdfs[k, t]) * gaps[t]
            distances[i, k] = total
    return distances


def emd_exact(p: np.ndarray, q: np.ndarray, ground: np.ndarray) -> float:
    """Exact EMD under any ground distance: the transportation problem, solved by POT's network
    simplex (``ot.emd2``, the field's optimal-transport library)."""
    import ot

    p, q = np.asarray(p, dtype=np.float64), np.asarray(q, dtype=np.float64)
    cost = float(ot.emd2(p, q / q.sum() * p.sum(), np.asarray(ground, dtype=np.float64)))
    if not np.isfinite(cost):
        raise AbstractionError("the EMD transportation problem failed")
    return cost


def nearest_order(ground: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per support point, the others by increasing ground distance: (order, distances)."""
    ground = np.asarray(ground, dtype=np.float64)
    order = np.argsort(ground, axis=1, kind="stable")
    return order.astype(np.int64), np.take_along_axis(ground, order, axis=1)


@numba.njit(cache=True, no_cfunc_wrapper=True)
def _greedy(point, mean, order, sorted_distances, remaining, targets):
    """GS14 Algorithm 2 for one (point, mean) pair; ``remaining``/``targets`` are scratch."""
    n = point.shape[0]
    for j in range(n):
        remaining[j] = mean[j]
        targets[j] = point[j]
    cost = 0.0
    for rank in range(n):
        for j in range(n):
            if targets[j] <= 0.0:
                continue
            cluster = order[j, rank]
            left = remaining[cluster]
            if left <= 0.0:
                continue
            if left < targets[j]:
                cost += left * sorted_distances[j, rank]
                targets[j] -= left
                remaining[cluster] = 0.0
            else:
                cost += targets[j] * sorted_distances[j, rank]
                remaining[cluster] -= targets[j]
                targets[j] = 0.0
    return cost


@numba.njit(cache=True, no_cfunc_wrapper=True)
def greedy_distances(points, centers, order, sorted_distances):
    """GS14's approximate EMD from every point to every centre, float64 (points, centres)."""
    n = points.shape[1]
    remaining = np.empty(n)
    targets = np.empty(n)
    distances = np.empty((points.shape[0], centers.shape[0]))
    for i in range(points.shape[0]):
        for k in range(centers.shape[0]):
            distances[i, k] = _greedy(points[i], centers[k], order, sorted_distances, remaining, targets)
    return distances


def emd_greedy(p: np.ndarray, q: np.ndarray, ground: np.ndarray) -> float:
    """GS14's greedy approximation of the EMD from ``p`` to ``q`` (an upper bound)."""
    order, sorted_distances = nearest_order(ground)
    p = np.asarray(p, dtype=np.float64)[None, :]
    q = np.asarray(q, dtype=np.float64)[None, :]
    return float(greedy_distances(p, q, order, sorted_distances)[0, 0])
