"""Showdown ranking of poker hands: the best five-card hand, for any deck and hand size.

``hand_value(cards, count, num_ranks, num_suits)`` gives an int64 that orders hands the
standard way (higher wins, equal ties): straight flush > four of a kind > full house >
flush > straight > three of a kind > two pair > pair > high card, then kickers. Cards
are numbered ``rank * num_suits + suit`` with ranks ascending in strength. Categories
that need five cards (straights, flushes, full houses) only occur when a hand has five
or more cards, so small-deck games fall back to "pair beats high card" on their own:
with one private and one board card (Leduc, Pbrc) a pair wins and otherwise the higher
private card wins, exactly the classic rule. A straight is five consecutive ranks; the
ace also plays low (A-2-3-4-5) when the deck has all 13 ranks.

Value layout: category in bits 20-23, then up to five ranks of 4 bits each (the ranks
that decide the category, then kickers, highest first). Hands compared at one showdown
have equally many cards, so unused rank slots (0) line up.
"""

from __future__ import annotations

import numba
import numpy as np

(HIGH_CARD, PAIR, TWO_PAIR, THREE_OF_A_KIND, STRAIGHT, FLUSH, FULL_HOUSE, FOUR_OF_A_KIND,
 STRAIGHT_FLUSH) = range(9)
CATEGORY_SHIFT = 20
MAX_RANKS = 13


@numba.njit(cache=True, inline="always")
def _top_straight(rank_mask, num_ranks):
    """Highest rank ending five consecutive ranks in ``rank_mask`` (ace-low wheel with 13
    ranks counts as ending at rank 3), or -1."""
    for top in range(num_ranks - 1, 3, -1):
        run = (rank_mask >> (top - 4)) & 0x1F
        if run == 0x1F:
            return top
    if num_ranks == MAX_RANKS and (rank_mask & 0x100F) == 0x100F:
        return 3
    return -1


@numba.njit(cache=True, inline="always")
def _slot(rank, slot):
    """Rank ``rank`` in rank slot ``slot`` (0: most significant) of a hand value."""
    return (rank + 1) << (4 * (4 - slot))


@numba.njit(cache=True, inline="always")
def _kickers(rank_counts, num_ranks, skip_a, skip_b, start, wanted):
    """The ``wanted`` highest ranks present (other than the skipped ones) in slots from ``start``."""
    value = 0
    filled = 0
    for rank in range(num_ranks - 1, -1, -1):
        if filled == wanted:
            break
        if rank != skip_a and rank != skip_b and (rank_counts >> (4 * rank)) & 15:
            value |= _slot(rank, start + filled)
            filled += 1
    return value


@numba.njit(cache=True)
def hand_value(cards, count, num_ranks, num_suits):
    """Value of the best hand in ``cards[:count]`` (int64 card ids); higher is better.

    Allocation-free (the tree builder calls it at every showdown): rank counts are packed
    4 bits per rank and each suit's ranks 16 bits per suit into two integers.
    """
    rank_counts = 0
    suit_ranks = 0
    rank_mask = 0
    for k in range(count):
        rank = cards[k] // num_suits
        rank_counts += 1 << (4 * rank)
        suit_ranks |= 1 << (16 * (cards[k] % num_suits) + rank)
        rank_mask |= 1 << rank
    flush_suit = -1
    if count >= 5:
        best = -1
        for suit in range(num_suits):
            ranks = (suit_ranks >> (16 * suit)) & 0xFFFF
            if _popcount(ranks) >= 5:
                flush_suit = suit
                best = max(best, _top_straight(ranks, num_ranks))
        if best >= 0:
            return (STRAIGHT_FLUSH << CATEGORY_SHIFT) | _slot(best, 0)
    quad, trips, pair_high, pair_low = -1, -1, -1, -1
    for rank in range(num_ranks - 1, -1, -1):
        c = (rank_counts >> (4 * rank)) & 15
        if c == 4 and quad < 0:
            quad = rank
        elif c >= 3 and trips < 0:
            trips = rank
        elif c >= 2:
            if pair_high < 0:
                pair_high = rank
            elif pair_low < 0:
                pair_low = rank
    # The categories with kickers pick (head, ranks to skip, first slot, kickers wanted) and
    # share one _kickers call at the end: five inlined copies made this kernel's compilation
    # (part of every first build of a poker game) several times slower.
    if quad >= 0:
        head = (FOUR_OF_A_KIND << CATEGORY_SHIFT) | _slot(quad, 0)
        skip_a, skip_b, start, wanted = quad, -1, 1, 1
    else:
        if trips >= 0 and count >= 5:
            for rank in range(num_ranks - 1, -1, -1):  # a second set of trips also fills the house
                if rank != trips and (rank_counts >> (4 * rank)) & 15 >= 2:
                    return (FULL_HOUSE << CATEGORY_SHIFT) | _slot(trips, 0) | _slot(rank, 1)
        if flush_suit >= 0:
            ranks = (suit_ranks >> (16 * flush_suit)) & 0xFFFF
            value = FLUSH << CATEGORY_SHIFT
            filled = 0
            for rank in range(num_ranks - 1, -1, -1):
                if filled < 5 and (ranks >> rank) & 1:
                    value |= _slot(rank, filled)
                    filled += 1
            return value
        if count >= 5:
            top = _top_straight(rank_mask, num_ranks)
            if top >= 0:
                return (STRAIGHT << CATEGORY_SHIFT) | _slot(top, 0)
        if trips >= 0:
            head = (THREE_OF_A_KIND << CATEGORY_SHIFT) | _slot(trips, 0)
            skip_a, skip_b, start, wanted = trips, -1, 1, 2
        elif pair_low >= 0:
            head = (TWO_PAIR << CATEGORY_SHIFT) | _slot(pair_high, 0) | _slot(pair_low, 1)
            skip_a, skip_b, start, wanted = pair_high, pair_low, 2, 1
        elif pair_high >= 0:
            head = (PAIR << CATEGORY_SHIFT) | _slot(pair_high, 0)
            skip_a, skip_b, start, wanted = pair_high, -1, 1, 3
        else:
            head = HIGH_CARD << CATEGORY_SHIFT
            skip_a, skip_b, start, wanted = -1, -1, 0, 5
    return head | _kickers(rank_counts, num_ranks, skip_a, skip_b, start, wanted)


@numba.njit(cache=True, inline="always")
def _popcount(mask):
    """Number of set bits of the int64 ``mask``."""
    bits = 0
    while mask:
        mask &= mask - 1
        bits += 1
    return bits


def hand_category(value: int) -> int:
    """The category (HIGH_CARD .. STRAIGHT_FLUSH) of a ``hand_value``."""
    return int(value) >> CATEGORY_SHIFT


def evaluate(cards, num_ranks: int, num_suits: int) -> int:
    """``hand_value`` of a Python sequence of card ids (for tests and one-off checks)."""
    array = np.asarray(cards, dtype=np.int64)
    return int(hand_value(array, array.shape[0], num_ranks, num_suits))
