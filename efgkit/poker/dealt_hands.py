"""The hands a dealt board leaves, level by level, and how the boards below a board are
numbered: what every walk that deals boards shares (the streamed full-game walk, the
card-blind walk, sampled CFR)."""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True, no_cfunc_wrapper=True)
def keep_off_board(hand_mask, hands, mask, out):
    """Copy the ``hands`` (int64 (n,)) sharing no card with the card set ``mask`` to the front
    of ``out`` (int64, at least (n,)), in order; returns how many (``hand_mask`` int64 (hands,))."""
    count = 0
    for h in hands:
        if hand_mask[h] & mask == 0:
            out[count] = h
            count += 1
    return count


def hand_lists(levels: int, hands: int) -> tuple[np.ndarray, np.ndarray]:
    """A walk's per-level hands off the board (int64 (levels, hands), the first ``count[j]``
    of row ``j``) and their counts, level 0 (no board yet) holding every hand: the walks
    write the levels below it only."""
    valid = np.zeros((levels, hands), np.int64)
    valid[0] = np.arange(hands)
    count = np.zeros(levels, np.int64)
    count[0] = hands
    return valid, count


@numba.njit(cache=True, no_cfunc_wrapper=True, inline="always")
def child_key(tables, j, parent, i):
    """The key of deal ``i`` of level ``j + 1`` below board ``parent`` of level ``j``: a
    level's boards are numbered parent by parent, every deal of the level under each."""
    deals = tables.deal_start[j + 2] - tables.deal_start[j + 1]
    return tables.key_start[j + 1] + (parent - tables.key_start[j]) * deals + i
