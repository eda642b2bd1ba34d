"""Dense ids by first appearance: the canonical numbering of a partition.

Infosets and public states (``builder.tree_from_preorder``) and abstract infosets
(``maps.InfosetMap``) are numbered 0, 1, ... in the order their first member appears, so
the same partition always gets the same ids whatever labels it arrived with.
"""

from __future__ import annotations

import numpy as np


def ids_by_first_appearance(labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Renumber ``labels`` (1-D, any sortable dtype) densely by first appearance.

    Returns ``ids`` int32 (same length as ``labels``): label ``labels[i]`` becomes the
    number of distinct labels seen before its first occurrence; and ``first`` int64
    (distinct labels,), increasing: the index of each id's first occurrence, so
    ``labels[first]`` lists the labels in id order.
    """
    _, first, inverse = np.unique(labels, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")
    rank = np.empty(first.shape[0], dtype=np.int32)
    rank[order] = np.arange(first.shape[0], dtype=np.int32)
    return rank[inverse.reshape(-1)], first[order].astype(np.int64)
