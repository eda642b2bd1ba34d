"""Offsets arrays (CSR rows): where each entry sits within its row.

Per-action arrays everywhere in efgkit are rows of consecutive entries, one row per
infoset, node or abstract infoset, described by their lengths (or by offsets).
"""

from __future__ import annotations

import numpy as np


def positions_within(lengths: np.ndarray) -> np.ndarray:
    """int64 ``0 .. length - 1`` for each row length in ``lengths``, concatenated."""
    lengths = np.asarray(lengths, dtype=np.int64)
    starts = np.cumsum(lengths) - lengths
    return np.arange(int(lengths.sum()), dtype=np.int64) - np.repeat(starts, lengths)


def offsets_of(lengths) -> np.ndarray:
    """int64 (rows + 1,): where each row of ``lengths`` starts, then the total."""
    lengths = np.asarray(lengths, dtype=np.int64)
    offsets = np.zeros(lengths.shape[0] + 1, np.int64)
    np.cumsum(lengths, out=offsets[1:])
    return offsets
