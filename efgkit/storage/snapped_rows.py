"""Reach-weighted snapping of a bucket strategy's rows before they are modelled (format 9).

What a row's rounding costs in exploitability scales with how often the row is played: a
row the strategy reaches rarely can be coarse, and a row it never reaches can be anything.
The modelled rows (``row_model``) code a weight of zero or of all that is left in a fraction
of a bit and any other weight in about ``log2 grid`` bits, so the cheap coarsening is to set
small weights of rarely reached rows to zero (rate-distortion: a bit saved against a
probability moved, weighted by the row's reach). Rule: with ``importance[r]`` the row's
share of the solver's average-strategy accumulator (CFR's own-reach-weighted sum over
iterations, chance-sampled; 1 for a row of average reach), action ``a`` of row ``r`` is set
to zero when ``p[a] < snap / importance[r]`` and ``a`` is not the row's first largest; the row
is renormalised. ``snap = 0`` leaves the strategy as it is. The readers need nothing of it:
the snapped rows are ordinary rows on the grid.
"""

from __future__ import annotations

import numpy as np

from efgkit.errors import ParameterError


def row_importance(accumulator: np.ndarray, row_offsets: np.ndarray) -> np.ndarray:
    """float64 per row: its share of the average-strategy ``accumulator`` (float64 per row
    action, rows by the CSR ``row_offsets``), scaled to a mean of 1 over the rows."""
    accumulator = np.asarray(accumulator, np.float64)
    if accumulator.shape != (int(row_offsets[-1]),) or not np.all(np.isfinite(accumulator)) or np.any(
            accumulator < 0):
        raise ParameterError("the average-strategy accumulator must be one finite, non-negative "
                             "number per row action")
    sums = np.add.reduceat(accumulator, row_offsets[:-1]) if accumulator.size else np.zeros(0)
    mean = sums.mean() if sums.size else 0.0
    return sums / mean if mean > 0 else np.ones_like(sums)


def snap_rows(strategy: np.ndarray, row_offsets: np.ndarray, importance: np.ndarray,
              snap: float) -> np.ndarray:
    """``strategy`` (float64 per row action, rows by the CSR ``row_offsets``) with every action
    below ``snap / importance`` of its row set to zero but the row's first largest, rows
    renormalised (the module's rule)."""
    if not snap >= 0:
        raise ParameterError(f"snap must be a non-negative number, got {snap}")
    strategy = np.asarray(strategy, np.float64)
    if snap == 0 or not strategy.size:
        return strategy.copy()
    counts = np.diff(row_offsets)
    row = np.repeat(np.arange(counts.shape[0]), counts)
    order = np.lexsort((np.arange(row.shape[0]), -strategy, row))  # each row's largest first
    first_max = np.zeros(row.shape[0], np.bool_)
    first_max[order[row_offsets[:-1]]] = True
    threshold = snap / np.maximum(np.asarray(importance, np.float64), np.finfo(np.float64).tiny)
    snapped = np.where((strategy < threshold[row]) & ~first_max, 0.0, strategy)
    return snapped / np.add.reduceat(snapped, row_offsets[:-1])[row]


__all__ = ["row_importance", "snap_rows"]
