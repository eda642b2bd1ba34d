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


@numba.njit(cache=True, no_cfunc_wrapper=True, inline="always")
def _top_straight(rank_mask, num_ranks):
    """Highest rank ending five consecutive ranks in ``rank_mask`` (ace-low wheel with 13
    ranks counts as ending at rank 3), or -1."""
    for top in range(num_ranks - 1, 3, -1):
        if (rank_mask >> (top - 4)) & 0x1F == 0x1F:
            return top
    if num_ranks == MAX_RANKS and (rank_mask & 0x100F) == 0x100F:
        return 3
    return -1


@numba.njit(cache=True, no_cfunc_wrapper=True, inline="always")
def _popcount(mask):
    """Number of set bits of the int64 ``mask``."""
    bits = 0
    while mask:
        mask &= mask - 1
        bits += 1
    return bits


@numba.njit(cache=True, no_cfunc_wrapper=True)
def hand_value(cards, count, num_ranks, num_suits):
    """Value of the best hand in ``cards[:count]`` (int64 card ids); higher is better.

    Allocation-free (rank counts, 4 bits per rank, and suits' ranks, 16 bits per suit, packed in
    integers); a category is (category, up to two deciding ranks, kickers wanted from a rank mask)."""
    rank_counts = suit_ranks = rank_mask = flush_ranks = 0
    for k in range(count):
        rank = cards[k] // num_suits
        rank_counts += 1 << (4 * rank)
        suit_ranks |= 1 << (16 * (cards[k] % num_suits) + rank)
        rank_mask |= 1 << rank
    quad = trips = pair_high = pair_low = straight_flush = straight = -1
    for rank in range(num_ranks - 1, -1, -1):
        c = (rank_counts >> (4 * rank)) & 15
        if c == 4 and quad < 0:
            quad = rank
        elif c >= 3 and trips < 0:
            trips = rank
        elif c >= 2 and pair_high < 0:
            pair_high = rank
        elif c >= 2 and pair_low < 0:
            pair_low = rank
    if count >= 5:  # straights and flushes need five cards
        for suit in range(num_suits):
            ranks = (suit_ranks >> (16 * suit)) & 0xFFFF
            if _popcount(ranks) >= 5:
                flush_ranks = ranks
                top = _top_straight(ranks, num_ranks)
                if top > straight_flush:
                    straight_flush = top
        straight = _top_straight(rank_mask, num_ranks)
    category, first, second, wanted, kicker_ranks = HIGH_CARD, -1, -1, 0, rank_mask
    if straight_flush >= 0:
        category, first = STRAIGHT_FLUSH, straight_flush
    elif quad >= 0:
        category, first, wanted = FOUR_OF_A_KIND, quad, 1
    elif trips >= 0 and pair_high >= 0:  # without quads pair_high is the best other pair or set
        category, first, second = FULL_HOUSE, trips, pair_high
    elif flush_ranks:
        category, wanted, kicker_ranks = FLUSH, 5, flush_ranks
    elif straight >= 0:
        category, first = STRAIGHT, straight
    elif trips >= 0:
        category, first, wanted = THREE_OF_A_KIND, trips, 2
    elif pair_low >= 0:
        category, first, second, wanted = TWO_PAIR, pair_high, pair_low, 1
    elif pair_high >= 0:
        category, first, wanted = PAIR, pair_high, 3
    else:
        wanted = 5
    value = (category << CATEGORY_SHIFT) | ((first + 1) << 16) | ((second + 1) << 12)  # none (-1): 0
    slot = (first >= 0) + (second >= 0)
    for rank in range(num_ranks - 1, -1, -1):
        if wanted == 0:
            break
        if rank != first and rank != second and (kicker_ranks >> rank) & 1:
            value |= (rank + 1) << (16 - 4 * slot)
            slot += 1
            wanted -= 1
    return value


def showdown_values(hands: np.ndarray, boards: np.ndarray, hand_masks: np.ndarray, board_masks: np.ndarray,
                    num_ranks: int, num_suits: int) -> np.ndarray:
    """int64 (hands, boards): ``hand_value`` of private hand ``h`` (row of ``hands`` int64
    (hands, private cards)) with board ``b`` (row of ``boards`` int64 (boards, board cards)),
    -1 where their card masks (int64 (hands,) and (boards,)) share a card. The showdown table
    of the tree builder and of the hand-strength features.

    A Python loop calling the ``hand_value`` kernel once per disjoint pair: games small
    enough to enumerate have a few thousand pairs, far fewer than their showdowns, and a
    kernel around the loop would cost every first run its compilation.
    """
    values = np.full((hands.shape[0], boards.shape[0]), -1, np.int64)
    cards = np.empty(hands.shape[1] + boards.shape[1], np.int64)
    private = hands.shape[1]
    for h, b in zip(*np.nonzero((hand_masks[:, None] & board_masks[None, :]) == 0), strict=True):
        cards[:private] = hands[h]
        cards[private:] = boards[b]
        values[h, b] = hand_value(cards, cards.shape[0], num_ranks, num_suits)
    return values


def hand_category(value: int) -> int:
    """The category (HIGH_CARD .. STRAIGHT_FLUSH) of a ``hand_value``."""
    return int(value) >> CATEGORY_SHIFT


def evaluate(cards, num_ranks: int, num_suits: int) -> int:
    """``hand_value`` of a Python sequence of card ids (for tests and one-off checks)."""
    array = np.asarray(cards, dtype=np.int64)
    return int(hand_value(array, array.shape[0], num_ranks, num_suits))
