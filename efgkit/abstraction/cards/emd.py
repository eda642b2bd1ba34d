"""Earth mover's distance between histograms: exact on a line, exact LP, and GS14's greedy.

* On a line (equal-width hand-strength bins, or next-round clusters whose centres are
  numbers), EMD is exact and linear: the L1 distance between the two CDFs, each step
  weighted by the gap to the next support point (Ganzfried & Sandholm 2014, Sec. 1;
  equals ``scipy.stats.wasserstein_distance`` with the support as values and the
  histograms as weights).
* For a general ground distance (potential-aware histograms over clusters whose
  centres are themselves histograms) ``emd_exact`` solves the transportation LP with
  HiGHS, and ``emd_greedy`` is the fast approximation of Ganzfried & Sandholm 2014,
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
from scipy.optimize import linprog

from efgkit.errors import AbstractionError


def bin_centers(bins: int) -> np.ndarray:
    """Centres of ``bins`` equal-width bins of [0, 1]: the default support of a histogram."""
    return (np.arange(bins) + 0.5) / bins


def _gaps(positions: np.ndarray) -> np.ndarray:
    positions = np.asarray(positions, dtype=np.float64)
    gaps = np.diff(positions)
    if np.any(gaps < 0):
        raise AbstractionError("EMD support positions must be increasing")
    return gaps


@numba.njit(cache=True)
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


def emd_1d(p: np.ndarray, q: np.ndarray, positions: np.ndarray | None = None) -> float:
    """Exact EMD between two histograms on a line (default: equal-width bins of [0, 1])."""
    p, q = np.asarray(p, dtype=np.float64), np.asarray(q, dtype=np.float64)
    positions = bin_centers(p.shape[0]) if positions is None else positions
    gaps = _gaps(positions)
    return float(line_distances(np.cumsum(p)[None, :], np.cumsum(q)[None, :], gaps)[0, 0])


def emd_exact(p: np.ndarray, q: np.ndarray, ground: np.ndarray) -> float:
    """Exact EMD under any ground distance: the transportation LP, solved with HiGHS."""
    p, q = np.asarray(p, dtype=np.float64), np.asarray(q, dtype=np.float64)
    n = p.shape[0]
    # flow[i, j] from p's bin i to q's bin j: rows sum to p, columns to q. One column
    # constraint is implied by the others (both sum to 1) and is dropped, so a rounding
    # difference between sum(p) and sum(q) cannot make the LP infeasible; HiGHS's presolve
    # declares masses near its 1e-7 feasibility tolerance infeasible, so it is off.
    rows = np.kron(np.eye(n), np.ones(n))
    columns = np.kron(np.ones(n), np.eye(n))[:-1]
    result = linprog(np.asarray(ground, dtype=np.float64).ravel(), A_eq=np.vstack([rows, columns]),
                     b_eq=np.concatenate([p, q[:-1]]), bounds=(0, None), method="highs",
                     options={"presolve": False})
    if result.status != 0:
        raise AbstractionError(f"the EMD transportation LP failed: {result.message}")
    return float(result.fun)


def nearest_order(ground: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per support point, the others by increasing ground distance: (order, distances)."""
    ground = np.asarray(ground, dtype=np.float64)
    order = np.argsort(ground, axis=1, kind="stable")
    return order.astype(np.int64), np.take_along_axis(ground, order, axis=1)


@numba.njit(cache=True)
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


@numba.njit(cache=True)
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
