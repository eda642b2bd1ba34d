"""Texas hold'em hand evaluator: the best five-card hand of 5, 6 or 7 cards as a dense rank.

A hand's rank is its five-card equivalence class, 1 (7-5-4-3-2 offsuit) .. 7462 (royal
flush): higher wins, equal ties, ordered exactly like ``efgkit.games.hand_ranking.hand_value``.
Cards are the standard ids ``4 * rank + suit`` (rank 0 the deuce .. 12 the ace).

The method is OMPEval's (Zekyll, github.com/zekyll/OMPEval): a hand is a *state* of two
int64 words that every card extends by addition, so enumerations add one card per loop
level and pay one finishing lookup per hand.

* ``key``: the low 32 bits sum a key per rank. The keys (``RANK_KEYS``) make the sum of any
  up to seven ranks, at most four of each, identify the rank multiset; they are stored
  multiplied by an odd constant modulo 2**25, a bijection that spreads the sums evenly for
  the perfect hash below. Bits 32-47 hold one 4-bit counter per suit, starting at 3, so
  bit 3 of a counter is set exactly when its suit has five or more cards (a flush).
* ``mask``: bit ``16 * suit + rank`` per card.

Without a flush the rank depends on the rank multiset only: a row-displacement perfect hash
(8,192 rows of 4,096 slots, first-fit, rows with most keys first) maps the 73,775 multisets
of 5..7 ranks into a table of about 82,000 int16 ranks. With a flush, the ranks of the
flush suit index an 8,192-entry table; with at most seven cards a flush rules out four of a
kind and a full house, so that table's answer is the hand's. The tables (about 200 kB,
cache resident) are built at import from ``hand_value`` in well under a second.
"""

from __future__ import annotations

import numba
import numpy as np

from efgkit.errors import ParameterError
from efgkit.games.hand_ranking import (
    CATEGORY_SHIFT,
    FLUSH,
    FOUR_OF_A_KIND,
    FULL_HOUSE,
    HIGH_CARD,
    PAIR,
    STRAIGHT,
    STRAIGHT_FLUSH,
    THREE_OF_A_KIND,
    TWO_PAIR,
    hand_value,
)

NUM_RANKS = 13
NUM_SUITS = 4
NUM_CARDS = 52
MIN_HAND_CARDS = 5
MAX_HAND_CARDS = 7
NUM_HAND_RANKS = 7462
"""Distinct five-card hands up to suits: the ranks run 1..NUM_HAND_RANKS."""

CATEGORY_NAMES = {
    HIGH_CARD: "high card",
    PAIR: "pair",
    TWO_PAIR: "two pair",
    THREE_OF_A_KIND: "three of a kind",
    STRAIGHT: "straight",
    FLUSH: "flush",
    FULL_HOUSE: "full house",
    FOUR_OF_A_KIND: "four of a kind",
    STRAIGHT_FLUSH: "straight flush",
}
"""Name of each ``hand_ranking`` category constant."""

RANK_KEYS = np.array(
    [1, 5, 24, 112, 521, 2247, 9244, 30823, 103066, 250154, 667453, 1526359, 3453520], dtype=np.int64
)
"""Per-rank keys, deuce .. ace: a greedy search's result (each key the smallest above the
previous one that keeps the sums of all multisets of up to seven ranks, at most four of a
rank, distinct). The largest sum is 18,393,157 < 2**25."""

_HASH_BITS = 25
_HASH_MASK = (1 << _HASH_BITS) - 1
_SCRAMBLE = 0x9E3779B1 & _HASH_MASK  # odd: multiplying by it permutes the integers mod 2**25
_ROW_SHIFT = 12
_ROW_WIDTH = 1 << _ROW_SHIFT
_SUIT_SHIFT = 32
_SUIT_START = 0x3333 << _SUIT_SHIFT
_FLUSH_BITS = 0x8888 << _SUIT_SHIFT
_SUIT_MASK_BITS = 16

EMPTY_KEY = _SUIT_START
"""``key`` of the state with no cards."""
EMPTY_MASK = 0
"""``mask`` of the state with no cards."""
CARD_KEYS = np.array(
    [((int(RANK_KEYS[c // NUM_SUITS]) * _SCRAMBLE) & _HASH_MASK) + (1 << (_SUIT_SHIFT + 4 * (c % NUM_SUITS)))
     for c in range(NUM_CARDS)],
    dtype=np.int64,
)
"""What each card adds to a state's ``key``."""
CARD_MASKS = np.array(
    [1 << (_SUIT_MASK_BITS * (c % NUM_SUITS) + c // NUM_SUITS) for c in range(NUM_CARDS)], dtype=np.int64
)
"""What each card ORs into a state's ``mask``."""


# --------------------------------------------------------------------------- table construction
@numba.njit(cache=True, no_cfunc_wrapper=True)
def _multiset_values(rank_keys, min_cards, max_cards):
    """Every rank multiset of ``min_cards..max_cards`` cards (at most four of a rank): its key
    sum and the ``hand_value`` of a representative without a flush (suits dealt round-robin
    in rank order, so no suit gets more than two cards and equal ranks get different suits)."""
    counts = np.zeros(NUM_RANKS, np.int64)
    cards = np.empty(max_cards, np.int64)
    sums = np.empty(80_000, np.int64)
    values = np.empty(80_000, np.int64)
    sizes = np.empty(80_000, np.int64)
    found = 0
    total = np.int64(0)  # not a literal 0: hand_value would compile for it
    while True:
        if total >= min_cards:
            key_sum = 0
            dealt = 0
            for rank in range(NUM_RANKS):
                key_sum += counts[rank] * rank_keys[rank]
                for _ in range(counts[rank]):
                    cards[dealt] = NUM_SUITS * rank + dealt % NUM_SUITS
                    dealt += 1
            sums[found] = key_sum
            values[found] = hand_value(cards, total, np.int64(NUM_RANKS), np.int64(NUM_SUITS))
            sizes[found] = total
            found += 1
        rank = 0  # next count vector, odometer style (rank 0 fastest)
        while rank < NUM_RANKS:
            if counts[rank] < 4 and total < max_cards:
                counts[rank] += 1
                total += 1
                break
            total -= counts[rank]
            counts[rank] = 0
            rank += 1
        if rank == NUM_RANKS:
            return sums[:found], sizes[:found], values[:found]


@numba.njit(cache=True, no_cfunc_wrapper=True)
def _flush_values():
    """``hand_value`` of the cards of one suit with ranks ``mask``, for every 13-bit mask with
    at least five ranks (-1 for fewer)."""
    values = np.full(1 << NUM_RANKS, -1, np.int64)
    cards = np.empty(NUM_RANKS, np.int64)
    for mask in range(1 << NUM_RANKS):
        count = np.int64(0)  # not a literal 0: hand_value would compile for it
        for rank in range(NUM_RANKS):
            if (mask >> rank) & 1:
                cards[count] = NUM_SUITS * rank
                count += 1
        if count >= MIN_HAND_CARDS:
            values[mask] = hand_value(cards, count, np.int64(NUM_RANKS), np.int64(NUM_SUITS))
    return values


@numba.njit(cache=True, no_cfunc_wrapper=True)
def _bits_at(bitmap, position):
    """The 64 bits of ``bitmap`` (uint64 words) starting at bit ``position``."""
    word, bit = position >> 6, np.uint64(position & 63)
    if bit == 0:
        return bitmap[word]
    return (bitmap[word] >> bit) | (bitmap[word + 1] << (np.uint64(64) - bit))


@numba.njit(cache=True, no_cfunc_wrapper=True)
def _row_displacement(hashes, row_shift, hash_bits):
    """Row offsets of a perfect hash ``offsets[h >> row_shift] + (h & (width - 1))`` for the
    distinct ``hashes`` (< 2**hash_bits): rows placed first-fit, fullest first, 64 candidate
    offsets tested at once on a bitmap of taken slots; also the table length, padded so any
    hash of the range indexes inside it."""
    width = 1 << row_shift
    rows = 1 << (hash_bits - row_shift)
    row_count = np.zeros(rows, np.int64)
    for h in hashes:
        row_count[h >> row_shift] += 1
    starts = np.zeros(rows + 1, np.int64)
    for row in range(rows):
        starts[row + 1] = starts[row] + row_count[row]
    columns = np.empty(hashes.size, np.int64)
    filled = starts[:-1].copy()
    for h in hashes:
        row = h >> row_shift
        columns[filled[row]] = h & (width - 1)
        filled[row] += 1
    capacity = 2 * hashes.size + 2 * width  # first-fit ends well inside
    taken = np.zeros(capacity // 64 + 2, np.uint64)
    offsets = np.zeros(rows, np.int32)
    length = 0
    first_free = 0
    for row in np.argsort(-row_count, kind="mergesort"):
        if row_count[row] == 0:
            break
        first, last = starts[row], starts[row + 1]
        base = max(first_free - columns[first:last].min(), 0)  # no free slot below first_free
        while True:
            if base + 64 + width > capacity:
                raise RuntimeError("perfect hash: first-fit ran past the table's capacity")
            clash = np.uint64(0)
            for j in range(first, last):
                clash |= _bits_at(taken, base + columns[j])
            if clash != np.uint64(0xFFFFFFFFFFFFFFFF):
                break
            base += 64
        offset = base
        while (clash >> np.uint64(offset - base)) & np.uint64(1):
            offset += 1
        offsets[row] = offset
        for j in range(first, last):
            slot = offset + columns[j]
            taken[slot >> 6] |= np.uint64(1) << np.uint64(slot & 63)
            length = max(length, slot + 1)
        while (taken[first_free >> 6] >> np.uint64(first_free & 63)) & np.uint64(1):
            first_free += 1
    return offsets, max(length, int(offsets.max()) + width)


def build_tables() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The evaluator's tables, built at import (public so the benchmark can time the build):
    row offsets (int32), multiset ranks (int16), flush ranks (int16), category of each rank (int8)."""
    sums, sizes, values = _multiset_values(RANK_KEYS, MIN_HAND_CARDS, MAX_HAND_CARDS)
    flush_values = _flush_values()
    five_flush_ranks = np.bitwise_count(np.arange(flush_values.size)) == MIN_HAND_CARDS
    five_card = np.concatenate([values[sizes == MIN_HAND_CARDS], flush_values[five_flush_ranks]])
    distinct = np.unique(five_card)
    if distinct.size != NUM_HAND_RANKS or np.unique(sums).size != sums.size:
        raise RuntimeError("hold'em evaluator tables are inconsistent (rank keys or hand_value changed?)")
    hashes = (sums * _SCRAMBLE) & _HASH_MASK
    offsets, length = _row_displacement(hashes, _ROW_SHIFT, _HASH_BITS)
    multiset_ranks = np.zeros(length, np.int16)
    slots = offsets[hashes >> _ROW_SHIFT] + (hashes & (_ROW_WIDTH - 1))
    multiset_ranks[slots] = np.searchsorted(distinct, values) + 1
    flush_ranks = np.zeros(flush_values.size, np.int16)
    has_flush = flush_values >= 0
    flush_ranks[has_flush] = np.searchsorted(distinct, flush_values[has_flush]) + 1
    categories = np.concatenate([[-1], distinct >> CATEGORY_SHIFT]).astype(np.int8)
    return offsets, multiset_ranks, flush_ranks, categories


_ROW_OFFSETS, _MULTISET_RANKS, _FLUSH_RANKS, CATEGORY_OF_RANK = build_tables()
"""CATEGORY_OF_RANK[rank]: the hand_ranking category of each rank 1..7462 (entry 0 is -1)."""


# --------------------------------------------------------------------------- kernels
@numba.njit(cache=True, no_cfunc_wrapper=True)
def add_card(key, mask, card):
    """The state ``(key, mask)`` with ``card`` added (start from ``EMPTY_KEY, EMPTY_MASK``). In a
    kernel that ranks many hole pairs on one board, add the board once and each pair after it::

        key, mask = EMPTY_KEY, EMPTY_MASK
        for card in board:
            key, mask = add_card(key, mask, card)
        first_key, first_mask = add_card(key, mask, hole[0])
        rank = state_rank(*add_card(first_key, first_mask, hole[1]))
    """
    return key + CARD_KEYS[card], mask | CARD_MASKS[card]


@numba.njit(cache=True, no_cfunc_wrapper=True)
def state_rank(key, mask):
    """Rank (int32, 1..7462) of a state holding 5..7 cards; meaningless for other counts."""
    flush_bits = key & _FLUSH_BITS
    if flush_bits:
        # one suit at most has five of seven cards: its counter's bit 3 is the only one set
        suit = ((flush_bits > (0x8 << _SUIT_SHIFT)) + (flush_bits > (0x80 << _SUIT_SHIFT))
                + (flush_bits > (0x800 << _SUIT_SHIFT)))
        return np.int32(_FLUSH_RANKS[(mask >> (_SUIT_MASK_BITS * suit)) & 0x1FFF])
    hashed = key & _HASH_MASK
    return np.int32(_MULTISET_RANKS[_ROW_OFFSETS[hashed >> _ROW_SHIFT] + (hashed & (_ROW_WIDTH - 1))])


@numba.njit(cache=True, no_cfunc_wrapper=True)
def hand_rank(cards, count):
    """Rank (int32, 1..7462, higher wins) of the best five-card hand in ``cards[:count]``,
    5 <= count <= 7 distinct card ids 0..51 (not checked: this is the kernel; ``evaluate``
    checks). Allocation-free, callable from other kernels."""
    key = EMPTY_KEY
    mask = EMPTY_MASK
    for k in range(count):
        key += CARD_KEYS[cards[k]]
        mask |= CARD_MASKS[cards[k]]
    return state_rank(key, mask)


@numba.njit(cache=True, no_cfunc_wrapper=True)
def _count_subset_ranks(deck, num_cards, counts):
    """Add 1 to ``counts[rank]`` for every ``num_cards``-subset of ``deck`` (card ids). Subsets are
    enumerated in lexicographic order of positions, the state of each prefix kept per level so the
    innermost loop adds one card and looks one rank up."""
    size = deck.size
    deck_keys = np.empty(size, np.int64)
    deck_masks = np.empty(size, np.int64)
    for i in range(size):
        deck_keys[i] = CARD_KEYS[deck[i]]
        deck_masks[i] = CARD_MASKS[deck[i]]
    prefix = num_cards - 1
    position = np.arange(prefix)
    keys = np.empty(num_cards, np.int64)  # keys[j]: state of the first j chosen cards
    masks = np.empty(num_cards, np.int64)
    keys[0], masks[0] = EMPTY_KEY, EMPTY_MASK
    level = 0  # levels below this one have up-to-date states
    while True:
        for j in range(level, prefix):
            keys[j + 1] = keys[j] + deck_keys[position[j]]
            masks[j + 1] = masks[j] | deck_masks[position[j]]
        key, mask = keys[prefix], masks[prefix]
        for last in range(position[prefix - 1] + 1, size):
            counts[state_rank(key + deck_keys[last], mask | deck_masks[last])] += 1
        level = prefix - 1
        while level >= 0 and position[level] == size - num_cards + level:
            level -= 1
        if level < 0:
            return
        position[level] += 1
        for j in range(level + 1, prefix):
            position[j] = position[j - 1] + 1


def _check_integer_cards(cards: np.ndarray) -> None:
    if cards.size and not np.issubdtype(cards.dtype, np.integer):
        raise ParameterError(f"card ids must be integers 0..{NUM_CARDS - 1}, got dtype {cards.dtype}")


def _checked_deck(deck) -> np.ndarray:
    array = np.asarray(deck)
    if array.ndim != 1:
        raise ParameterError(f"a deck is a 1-D array of card ids, got shape {array.shape}")
    _check_integer_cards(array)
    array = array.astype(np.int64)
    if array.size and (array.min() < 0 or array.max() >= NUM_CARDS):
        raise ParameterError(f"card ids must be 0..{NUM_CARDS - 1} (4 * rank + suit); the deck is "
                             f"{array.tolist()}")
    if np.unique(array).size != array.size:
        raise ParameterError(f"the deck holds a card twice: {array.tolist()}")
    return array


def count_ranks(num_cards: int, deck: np.ndarray | None = None) -> np.ndarray:
    """How many ``num_cards``-card hands from ``deck`` (card ids; the 52-card deck by default)
    have each rank: int64 array of length NUM_HAND_RANKS + 1 indexed by rank (entry 0 unused).

    The exhaustive enumeration behind the evaluator's benchmark and its category-count check.
    """
    if not isinstance(num_cards, int | np.integer) or not MIN_HAND_CARDS <= num_cards <= MAX_HAND_CARDS:
        raise ParameterError(f"a hand has {MIN_HAND_CARDS} to {MAX_HAND_CARDS} cards, got {num_cards!r}")
    cards = np.arange(NUM_CARDS) if deck is None else _checked_deck(deck)
    counts = np.zeros(NUM_HAND_RANKS + 1, np.int64)
    if cards.size >= num_cards:
        _count_subset_ranks(cards, num_cards, counts)
    return counts


@numba.njit(cache=True, no_cfunc_wrapper=True)
def _rank_rows(cards, ranks):
    """``ranks[row]`` = rank of ``cards[row]``; stops at the first row with an id outside 0..51 or a
    repeated card and returns its index (-1 when all rows are valid)."""
    for row in range(cards.shape[0]):
        seen = 0
        for k in range(cards.shape[1]):
            card = cards[row, k]
            if card < 0 or card >= NUM_CARDS or (seen >> card) & 1:
                return row
            seen |= np.int64(1) << card
        ranks[row] = hand_rank(cards[row], cards.shape[1])
    return -1


def _bad_hand_error(hand: np.ndarray, row: int) -> ParameterError:
    if hand.min() < 0 or hand.max() >= NUM_CARDS:
        return ParameterError(f"card ids must be 0..{NUM_CARDS - 1} (4 * rank + suit); hand {row} is "
                              f"{hand.tolist()}")
    return ParameterError(f"hand {row} holds a card twice: {hand.tolist()}")


def evaluate(cards: np.ndarray) -> np.ndarray:
    """Ranks (int16, 1..7462, higher wins) of hands given as an (n, k) array of card ids, 5 <= k <= 7.

    Raises ParameterError for another shape, ids outside 0..51 or a card repeated in a hand.
    """
    array = np.asarray(cards)
    if array.ndim != 2 or not MIN_HAND_CARDS <= array.shape[1] <= MAX_HAND_CARDS:
        raise ParameterError(f"cards must be an (n, k) array of card ids with {MIN_HAND_CARDS} <= k <= "
                             f"{MAX_HAND_CARDS}, got shape {array.shape}")
    _check_integer_cards(array)
    array = np.ascontiguousarray(array, dtype=np.int64)
    ranks = np.empty(array.shape[0], np.int16)
    bad = _rank_rows(array, ranks)
    if bad >= 0:
        raise _bad_hand_error(array[bad], bad)
    return ranks


def hand_category(rank: int) -> int:
    """The ``hand_ranking`` category (HIGH_CARD .. STRAIGHT_FLUSH) of a rank 1..7462; its name is
    ``CATEGORY_NAMES[hand_category(rank)]``."""
    if not isinstance(rank, int | np.integer) or not 1 <= rank <= NUM_HAND_RANKS:
        raise ParameterError(f"a hand rank is an integer 1..{NUM_HAND_RANKS}, got {rank!r}")
    return int(CATEGORY_OF_RANK[rank])

