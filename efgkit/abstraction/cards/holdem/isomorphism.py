"""Suit isomorphism of poker hands: a dense canonical index per round (Waugh 2013).

K. Waugh, "A Fast and Optimal Hand Isomorphism Algorithm", AAAI-13 Workshop on Computer Poker
and Incomplete Information. Two deals are isomorphic when one becomes the other by renaming
suits and reordering cards within a round. ``HandIndexer(cards_per_round)`` numbers the
classes of the deals through round ``r`` densely as ``0 .. round_size(r) - 1`` and maps an
index back to a canonical representative. ``(2, 3, 1, 1)`` keeps the board split by round
(169 / 1,286,792 / 55,190,538 / 2,428,287,420 classes); ``(2, 4)`` and ``(2, 5)`` treat the
turn and river board as one group (13,960,050 / 123,156,254); ``(3,)``, ``(4,)``, ``(5,)``
index boards alone.

Cards are ``4 * rank + suit`` with ``num_ranks`` ranks (2..13) and 4 suits. The index of one
suit's cards: per round, the colexicographic rank of that round's rank set among the ranks the
suit has not dealt before, in mixed radix over rounds (round 0 least significant). Its
*configuration* (``code``) counts its cards per round, also in mixed radix. Sorting the four
(code, index) pairs removes the suit names; suits sharing a configuration are combined as a
multiset (colex rank of their sorted indices); the groups in mixed radix, plus an offset per
configuration class, give the index. This is Waugh's construction; the numbering of classes
differs from his C code (kdub0/hand-isomorphism), the counts are the same.

``index_hand(tables, cards, count)`` is the numba kernel: call it from your own ``njit`` code
with ``HandIndexer.tables``; it is inlined there and allocates nothing. About 19-23 million
indexings per second on one core of this machine (benchmarks/bench_isomorphism.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations_with_replacement
from math import comb, prod
from typing import NamedTuple

import numba
import numpy as np

from efgkit.errors import AbstractionError
from efgkit.games.csr import offsets_of

NUM_SUITS = 4
MAX_RANKS = 13
_SUIT_INDEX_BITS = 32
_SUIT_INDEX_MASK = (1 << _SUIT_INDEX_BITS) - 1
_SLOT_BITS = 16
_MAX_CONFIGURATION_TABLE = 50_000_000


class IsomorphismTables(NamedTuple):
    """Everything the kernels need (int64 unless noted); built once by ``HandIndexer``.

    round_start (rounds + 1,): position in the hand where each round's cards start.
    code_radix (rounds,): weight of a suit's card count in round r within its configuration code.
    binomial (rows, 14): C(n, k); rows beyond ``num_ranks`` only for k <= 4 (multisets of suits).
    popcount (2**num_ranks,) uint8: number of ranks in a rank set.
    colex_of_set (2**num_ranks,) uint16: colexicographic rank of a rank set among sets of its size.
    set_of_colex (num_ranks + 1, max C(num_ranks, k)) uint16: its inverse, by set size.
    suit_range (codes,): number of suit indices of a configuration code (0 if impossible).
    configuration_base (rounds,): start of each round's block in ``configuration_of_key``.
    configuration_of_key int32: configuration class of a multiset key of four sorted codes, -1 if
        impossible.
    configuration_data (classes, 7): first index of the class, then for the suits sorted by
        descending key, positions 0..2: the multiplier of the suit's term and its rank in its
        group of equal codes (position 3 always has multiplier 1 and rank 1).
    configuration_list_start (rounds + 1,): each round's classes, in increasing first index.
    configuration_codes (classes, 4): the four codes of a class, descending.
    """

    round_start: np.ndarray
    code_radix: np.ndarray
    binomial: np.ndarray
    popcount: np.ndarray
    colex_of_set: np.ndarray
    set_of_colex: np.ndarray
    suit_range: np.ndarray
    configuration_base: np.ndarray
    configuration_of_key: np.ndarray
    configuration_data: np.ndarray
    configuration_list_start: np.ndarray
    configuration_codes: np.ndarray


@numba.njit(cache=True, no_cfunc_wrapper=True, inline="always")
def _suit_states(round_start, code_radix, popcount, colex_of_set, suit_range, cards, last_round):
    """The four suits' state after rounds ``0..last_round`` of ``cards`` (``index_hand``'s
    arguments and tables): their configuration codes (int64, 16 bits per suit) and their suit
    indices (two int64s, 32 bits per suit: suits 0-1, suits 2-3)."""
    used = np.int64(0)
    codes = np.int64(0)
    index_01 = np.int64(0)
    index_23 = np.int64(0)
    for r in range(last_round + 1):
        ranks = np.int64(0)
        shifted = np.int64(0)
        for position in range(round_start[r], round_start[r + 1]):
            card = np.int64(cards[position])
            slot = (card & 3) << 4
            bit = np.int64(1) << (card >> 2)
            ranks |= bit << slot
            shifted |= (bit >> np.int64(popcount[(used >> slot) & (bit - 1)])) << slot
        for suit in range(NUM_SUITS):
            slot = suit << 4
            code = (codes >> slot) & 0xFFFF
            term = suit_range[code] * np.int64(colex_of_set[(shifted >> slot) & 0xFFFF])
            if suit < 2:
                index_01 += term << (suit << 5)
            else:
                index_23 += term << ((suit - 2) << 5)
            codes += (np.int64(popcount[(ranks >> slot) & 0xFFFF]) * code_radix[r]) << slot
        used |= ranks
    return codes, index_01, index_23


@numba.njit(cache=True, no_cfunc_wrapper=True, inline="always")
def _sorted_suit_keys(codes, index_01, index_23):
    """The four suits' int64 keys (configuration code << 32 | suit index), sorted descending
    (k0 >= .. >= k3) by a five-comparison network: the suit names vanish."""
    a = ((codes & 0xFFFF) << _SUIT_INDEX_BITS) | (index_01 & _SUIT_INDEX_MASK)
    b = (((codes >> 16) & 0xFFFF) << _SUIT_INDEX_BITS) | (index_01 >> _SUIT_INDEX_BITS)
    c = (((codes >> 32) & 0xFFFF) << _SUIT_INDEX_BITS) | (index_23 & _SUIT_INDEX_MASK)
    d = (((codes >> 48) & 0xFFFF) << _SUIT_INDEX_BITS) | (index_23 >> _SUIT_INDEX_BITS)
    a, b = max(a, b), min(a, b)
    c, d = max(c, d), min(c, d)
    k0, c = max(a, c), min(a, c)
    b, k3 = max(b, d), min(b, d)
    k1, k2 = max(b, c), min(b, c)
    return k0, k1, k2, k3


@numba.njit(cache=True, no_cfunc_wrapper=True, inline="always")
def index_hand(tables, cards, count):
    """Canonical index (int64) of ``cards[:count]``, the cards through some round, in round order.

    ``tables`` is ``HandIndexer.tables``; ``cards`` a 1-D integer array of valid, distinct card
    ids; ``count`` must equal the number of cards through a round (the index is then in
    ``[0, round_size(round))``), otherwise the result is -1. Cards are not checked here (the
    caller's loop is the hot path); ``HandIndexer.index`` checks them. Call it from your own
    ``@numba.njit`` kernel, passing ``indexer.tables`` in: it is inlined there (no call, no
    allocation, no reference counting in your loop).

    Branch-light: the four suits' state is packed in 64-bit words (16 bits per suit for rank sets
    and configuration codes, 32 for suit indices; ``_suit_states``). As in Waugh's code, a card's
    rank bit is shifted down past the ranks its suit dealt in earlier rounds, so one table lookup
    gives the colex rank of a round's set among the ranks still available.
    """
    round_start, code_radix, binomial, popcount = tables[0], tables[1], tables[2], tables[3]
    colex_of_set, suit_range = tables[4], tables[6]
    configuration_base, configuration_of_key, configuration_data = tables[7], tables[8], tables[9]
    last_round = -1
    for r in range(round_start.shape[0] - 1):
        if round_start[r + 1] == count:
            last_round = r
    # No early return: a single exit lets numba drop the reference counting of ``tables`` in the
    # caller's loop. With no matching round nothing is read from ``cards``; the result is -1.
    codes, index_01, index_23 = _suit_states(round_start, code_radix, popcount, colex_of_set, suit_range,
                                             cards, last_round)
    k0, k1, k2, k3 = _sorted_suit_keys(codes, index_01, index_23)
    c0, c1 = k0 >> _SUIT_INDEX_BITS, k1 >> _SUIT_INDEX_BITS
    c2, c3 = k2 >> _SUIT_INDEX_BITS, k3 >> _SUIT_INDEX_BITS
    key = c3 + binomial[c2 + 1, 2] + binomial[c1 + 2, 3] + binomial[c0 + 3, 4]
    configuration = configuration_of_key[configuration_base[max(last_round, 0)] + key]
    # Suits with equal codes form a multiset: colex of (suit index + rank in group - 1).
    index = configuration_data[configuration, 0] + (k3 & _SUIT_INDEX_MASK)
    last_row = binomial.shape[0] - 1
    for p in range(NUM_SUITS - 1):
        value = (k0 if p == 0 else (k1 if p == 1 else k2)) & _SUIT_INDEX_MASK
        rank_in_group = configuration_data[configuration, 4 + p]
        term = binomial[min(value + rank_in_group - 1, last_row), rank_in_group]
        if rank_in_group == 1:
            term = value
        index += configuration_data[configuration, 1 + p] * term
    return index if last_round >= 0 else np.int64(-1)


@numba.njit(cache=True, no_cfunc_wrapper=True)
def _index_rows(tables, cards, out):
    """``out[row]`` (int64) = canonical index of row ``row`` of ``cards`` (rows, cards)
    through ``index_hand`` with ``HandIndexer.tables``."""
    for row in range(cards.shape[0]):
        out[row] = index_hand(tables, cards[row], cards.shape[1])


@numba.njit(cache=True, no_cfunc_wrapper=True)
def _first_row_with_repeat(cards):
    """First row of ``cards`` (ids < 64) naming a card twice, or -1."""
    for row in range(cards.shape[0]):
        seen = 0
        for k in range(cards.shape[1]):
            bit = np.int64(1) << np.int64(cards[row, k])
            if seen & bit:
                return row
            seen |= bit
    return -1


@numba.njit(cache=True, no_cfunc_wrapper=True)
def _decode_suits(tables, last_round, index, codes, values):
    """Codes and suit indices of the four suits of class ``index``, by descending key."""
    binomial, suit_range = tables[2], tables[6]
    configuration_data, list_start, configuration_codes = tables[9], tables[10], tables[11]
    low, high = list_start[last_round], list_start[last_round + 1] - 1
    while low < high:
        middle = (low + high + 1) // 2
        if configuration_data[middle, 0] <= index:
            low = middle
        else:
            high = middle - 1
    remainder = index - configuration_data[low, 0]
    for p in range(NUM_SUITS):
        codes[p] = configuration_codes[low, p]
    # Groups of equal codes from the smallest key up (mixed radix, least significant first).
    p = NUM_SUITS - 1
    while p >= 0:
        q = p
        while q > 0 and codes[q - 1] == codes[p]:
            q -= 1
        group_size = p - q + 1
        choices = suit_range[codes[p]]
        if group_size == 1:
            values[p] = remainder % choices
            remainder //= choices
        else:
            classes = binomial[choices + group_size - 1, group_size]
            group = remainder % classes
            remainder //= classes
            for j in range(group_size, 0, -1):
                low_b, high_b = j - 1, choices + j - 2
                while low_b < high_b:  # largest b with C(b, j) <= group
                    middle = (low_b + high_b + 1) // 2
                    if (middle if j == 1 else binomial[middle, j]) <= group:
                        low_b = middle
                    else:
                        high_b = middle - 1
                group -= low_b if j == 1 else binomial[low_b, j]
                values[p - (j - 1)] = low_b - (j - 1)
        p = q - 1


@numba.njit(cache=True, no_cfunc_wrapper=True)
def _unindex_rows(tables, last_round, indices, out):
    """Write one representative hand of each canonical index of ``indices`` int64 (rows,)
    (through round ``last_round``) into ``out`` int64 (rows, cards through that round), in
    round order, each round's cards ascending; ``tables`` is ``HandIndexer.tables``."""
    round_start, code_radix, binomial, popcount, set_of_colex = tables[0], tables[1], tables[2], \
        tables[3], tables[5]
    num_ranks = set_of_colex.shape[0] - 1
    codes = np.empty(NUM_SUITS, np.int64)
    values = np.empty(NUM_SUITS, np.int64)
    fill = np.empty(last_round + 1, np.int64)
    for row in range(indices.shape[0]):
        _decode_suits(tables, last_round, indices[row], codes, values)
        for r in range(last_round + 1):
            fill[r] = round_start[r]
        # The suit with the largest key is named 0, and so on: any naming is a representative.
        for suit in range(NUM_SUITS):
            value = values[suit]
            used = 0
            for r in range(last_round + 1):
                dealt = (codes[suit] // code_radix[r]) % (round_start[r + 1] - round_start[r] + 1)
                choices = binomial[num_ranks - popcount[used], dealt]
                compressed = np.int64(set_of_colex[dealt, value % choices])
                value //= choices
                # The k-th rank of the compressed set is the k-th rank this suit has not used yet.
                free = -1
                for rank in range(num_ranks):
                    if not (used >> rank) & 1:
                        free += 1
                        if (compressed >> free) & 1:
                            out[row, fill[r]] = NUM_SUITS * rank + suit
                            fill[r] += 1
                            used |= np.int64(1) << rank
        for r in range(last_round + 1):  # insertion sort of each round's few cards
            for k in range(round_start[r] + 1, round_start[r + 1]):
                card = out[row, k]
                j = k
                while j > round_start[r] and out[row, j - 1] > card:
                    out[row, j] = out[row, j - 1]
                    j -= 1
                out[row, j] = card


@numba.njit(cache=True, no_cfunc_wrapper=True)
def _multiplicity_rows(tables, last_round, indices, out):
    """24 / (suit renamings fixing the representative): raw deals in each class."""
    codes = np.empty(NUM_SUITS, np.int64)
    values = np.empty(NUM_SUITS, np.int64)
    for row in range(indices.shape[0]):
        _decode_suits(tables, last_round, indices[row], codes, values)
        stabilizer = 1
        run = 1
        for p in range(1, NUM_SUITS):
            if codes[p] == codes[p - 1] and values[p] == values[p - 1]:
                run += 1
                stabilizer *= run
            else:
                run = 1
        out[row] = 24 // stabilizer


class HandIndexer:
    """Dense canonical indices of poker hands modulo suit renaming, per round (Waugh 2013).

    ``cards_per_round``: cards dealt in each round, e.g. ``(2, 3, 1, 1)`` (hole cards, then the
    board by round), ``(2, 5)`` (river with the board as one group), ``(5,)`` (boards alone).
    ``num_ranks``: 2..13 ranks of 4 suits (a reduced deck has fewer ranks).
    """

    def __init__(self, cards_per_round: Sequence[int], num_ranks: int = MAX_RANKS):
        rounds = tuple(cards_per_round) if isinstance(cards_per_round, Sequence) else None
        if not rounds or not all(isinstance(n, int | np.integer) and n >= 1 for n in rounds):
            raise AbstractionError(f"cards_per_round must be a non-empty sequence of positive card counts "
                                   f"like (2, 3, 1, 1), got {cards_per_round!r}")
        if not isinstance(num_ranks, int | np.integer) or not 2 <= num_ranks <= MAX_RANKS:
            raise AbstractionError(f"num_ranks must be 2..{MAX_RANKS} (ranks of the 4-suit deck), "
                                   f"got {num_ranks!r}")
        if sum(rounds) > NUM_SUITS * num_ranks:
            raise AbstractionError(f"{sum(rounds)} cards do not fit a {NUM_SUITS * num_ranks}-card deck")
        self.cards_per_round = tuple(int(n) for n in rounds)
        self.num_ranks = int(num_ranks)
        self.num_rounds = len(rounds)
        self._tables, self._round_sizes = _build_tables(self.cards_per_round, self.num_ranks)

    def __repr__(self) -> str:
        return f"HandIndexer({self.cards_per_round}, num_ranks={self.num_ranks})"

    @property
    def tables(self) -> IsomorphismTables:
        """The arrays ``index_hand`` takes (a NamedTuple, usable as one argument of an njit kernel)."""
        return self._tables

    @property
    def table_bytes(self) -> int:
        """Memory of the tables, in bytes."""
        return sum(array.nbytes for array in self._tables)

    def round_size(self, round: int) -> int:
        """Number of canonical hands (classes) through ``round``."""
        return self._round_sizes[self._check_round(round)]

    def cards_through(self, round: int) -> int:
        """Number of cards dealt through ``round``: the width ``index`` expects."""
        return int(self._tables.round_start[self._check_round(round) + 1])

    def deal_count(self, round: int) -> int:
        """Number of raw deals through ``round`` (ordered by round, unordered within a round)."""
        left, deals = NUM_SUITS * self.num_ranks, 1
        for n in self.cards_per_round[:self._check_round(round) + 1]:
            deals *= comb(left, n)
            left -= n
        return deals

    def index(self, cards: np.ndarray) -> np.ndarray:
        """int64 (n,) canonical indices of ``cards`` (n, cards through some round), in round order."""
        array = np.asarray(cards)
        if array.ndim != 2 or not (np.issubdtype(array.dtype, np.integer) or array.size == 0):
            raise AbstractionError(f"cards must be a 2-D integer array (hands, cards), got shape "
                                   f"{array.shape} of {array.dtype}")
        widths = self._tables.round_start[1:].tolist()
        if array.shape[1] not in widths:
            raise AbstractionError(f"a hand of {array.shape[1]} cards ends no round of {self}: "
                                   f"hands through each round have {widths} cards")
        deck = NUM_SUITS * self.num_ranks
        if array.size and (array.min() < 0 or array.max() >= deck):
            row = int(np.flatnonzero(((array < 0) | (array >= deck)).any(axis=1))[0])
            raise AbstractionError(f"card ids must be 0..{deck - 1} ({self.num_ranks} ranks x 4 suits); "
                                   f"hand {row} is {array[row].tolist()}")
        compact = np.ascontiguousarray(array, dtype=np.int8)
        repeat = _first_row_with_repeat(compact)
        if repeat >= 0:
            raise AbstractionError(f"hand {repeat} names a card twice: {array[repeat].tolist()}")
        out = np.empty(array.shape[0], np.int64)
        _index_rows(self._tables, compact, out)
        return out

    def unindex(self, round: int, indices) -> np.ndarray:
        """int8 (n, cards through ``round``): the canonical hand of each index, each round sorted."""
        round = self._check_round(round)
        array = self._check_indices(round, indices)
        out = np.empty((array.shape[0], self.cards_through(round)), np.int8)
        _unindex_rows(self._tables, round, array, out)
        return out

    def multiplicity(self, round: int, indices) -> np.ndarray:
        """int64 (n,): raw deals (ordered by round, unordered within) in each class."""
        round = self._check_round(round)
        array = self._check_indices(round, indices)
        out = np.empty(array.shape[0], np.int64)
        _multiplicity_rows(self._tables, round, array, out)
        return out

    def _check_round(self, round: int) -> int:
        if not isinstance(round, int | np.integer) or not 0 <= round < self.num_rounds:
            raise AbstractionError(f"round must be 0..{self.num_rounds - 1} for {self}, got {round!r}")
        return int(round)

    def _check_indices(self, round: int, indices) -> np.ndarray:
        array = np.atleast_1d(np.asarray(indices))
        if array.ndim != 1 or not (np.issubdtype(array.dtype, np.integer) or array.size == 0):
            raise AbstractionError(f"indices must be a 1-D integer array, got shape {array.shape} "
                                   f"of {array.dtype}")
        size = self._round_sizes[round]
        if array.size and (array.min() < 0 or array.max() >= size):
            bad = array[(array < 0) | (array >= size)][0]
            raise AbstractionError(f"index {int(bad)} is outside 0..{size - 1}, the canonical hands of "
                                   f"round {round} of {self}")
        return np.ascontiguousarray(array, dtype=np.int64)


def _build_tables(cards_per_round: tuple[int, ...], num_ranks: int) -> tuple[IsomorphismTables, list[int]]:
    """Enumerate the configuration classes of each round (Waugh's construction) into flat tables."""
    rounds = len(cards_per_round)
    round_start = offsets_of(cards_per_round)
    code_radix = np.array([prod(n + 1 for n in cards_per_round[:r]) for r in range(rounds)], np.int64)
    num_codes = prod(n + 1 for n in cards_per_round)
    # dealt[code, r]: cards a suit with this configuration code receives in round r.
    dealt = (np.arange(num_codes)[:, None] // code_radix[None, :]) % (np.array(cards_per_round) + 1)
    suit_range = np.zeros(num_codes, np.int64)
    for code in range(num_codes):
        if dealt[code].sum() <= num_ranks:
            left, choices = num_ranks, 1
            for n in dealt[code].tolist():
                choices *= comb(left, n)
                left -= n
            suit_range[code] = choices
    # index_hand packs a configuration code in 15 bits and a suit index in 31 (signed 64-bit words).
    if num_codes >= 1 << (_SLOT_BITS - 1) or suit_range.max() >= 1 << (_SUIT_INDEX_BITS - 1):
        raise AbstractionError(f"{cards_per_round} has too many rounds or cards for this indexer")

    key_tables, configuration_base, data, codes, round_sizes = [], [], [], [], []
    list_start = [0]
    binomial_rows = max(num_ranks + 1, num_codes + 3)
    base = 0
    for r in range(rounds):
        codes_here = prod(n + 1 for n in cards_per_round[:r + 1])
        table_size = comb(codes_here + 3, 4)
        if base + table_size > _MAX_CONFIGURATION_TABLE:
            raise AbstractionError(f"{cards_per_round} has too many rounds for this indexer's tables")
        feasible = [c for c in range(codes_here) if suit_range[c] > 0]
        ascending = np.array(list(combinations_with_replacement(feasible, NUM_SUITS)), np.int64)
        totals = dealt[ascending, :r + 1].sum(axis=1)
        ascending = ascending[(totals == np.array(cards_per_round[:r + 1])).all(axis=1)]
        keys = (ascending[:, 0] + _binomial_column(ascending[:, 1] + 1, 2)
                + _binomial_column(ascending[:, 2] + 2, 3) + _binomial_column(ascending[:, 3] + 3, 4))
        configuration_of_key = np.full(table_size, -1, np.int32)
        total = 0
        for configuration, key in zip(ascending.tolist(), keys.tolist(), strict=True):
            descending = configuration[::-1]
            multipliers, group_ranks, size = _configuration_terms(descending, suit_range)
            configuration_of_key[key] = len(data)
            data.append([total, *multipliers[:3], *group_ranks[:3]])
            codes.append(descending)
            for code, rank in zip(descending, group_ranks, strict=True):
                if rank > 1:
                    binomial_rows = max(binomial_rows, int(suit_range[code]) + rank)
            total += size
        if total >= 1 << 62:
            raise AbstractionError(f"{cards_per_round} has more classes than a 64-bit index holds")
        key_tables.append(configuration_of_key)
        configuration_base.append(base)
        list_start.append(len(data))
        round_sizes.append(total)
        base += table_size

    tables = IsomorphismTables(
        round_start=round_start,
        code_radix=code_radix,
        binomial=_binomial_table(binomial_rows, num_ranks),
        popcount=np.array([bin(m).count("1") for m in range(1 << num_ranks)], np.uint8),
        colex_of_set=(colex := _colex_of_sets(num_ranks)),
        set_of_colex=_sets_of_colex(colex, num_ranks),
        suit_range=suit_range,
        configuration_base=np.array(configuration_base, np.int64),
        configuration_of_key=np.concatenate(key_tables),
        configuration_data=np.array(data, np.int64),
        configuration_list_start=np.array(list_start, np.int64),
        configuration_codes=np.array(codes, np.int64),
    )
    return tables, round_sizes


def _configuration_terms(descending: list[int], suit_range: np.ndarray) -> tuple[list[int], list[int], int]:
    """Per sorted position: multiplier and rank in its group of equal codes; and the class count.

    Positions are folded from the smallest key (3) up: a group of k equal codes whose suits have
    M indices each is a multiset, C(M + k - 1, k) values; groups combine in mixed radix.
    """
    multipliers, group_ranks = [0] * NUM_SUITS, [0] * NUM_SUITS
    multiplier, rank, previous = 1, 0, None
    for p in reversed(range(NUM_SUITS)):
        if descending[p] == previous:
            rank += 1
        else:
            if previous is not None:
                multiplier *= comb(int(suit_range[previous]) + rank - 1, rank)
            previous, rank = descending[p], 1
        multipliers[p], group_ranks[p] = multiplier, rank
    return multipliers, group_ranks, multiplier * comb(int(suit_range[previous]) + rank - 1, rank)


def _binomial_column(n: np.ndarray, k: int) -> np.ndarray:
    """C(n, k) elementwise for small k, exact in int64."""
    result = np.ones_like(n)
    for i in range(k):
        result = result * (n - i) // (i + 1)
    return np.where(n >= k, result, 0)


def _colex_of_sets(num_ranks: int) -> np.ndarray:
    """uint16 (2**num_ranks,): sum of C(rank, j) over the set's ranks, ascending, j = 1, 2, ..."""
    colex = np.zeros(1 << num_ranks, np.uint16)
    for ranks in range(1 << num_ranks):
        members = [rank for rank in range(num_ranks) if ranks >> rank & 1]
        colex[ranks] = sum(comb(rank, j) for j, rank in enumerate(members, start=1))
    return colex


def _sets_of_colex(colex: np.ndarray, num_ranks: int) -> np.ndarray:
    """uint16 (num_ranks + 1, max_k C(num_ranks, k)): the rank set of each (size, colex rank)."""
    sets = np.zeros((num_ranks + 1, comb(num_ranks, num_ranks // 2)), np.uint16)
    for ranks in range(1 << num_ranks):
        sets[bin(ranks).count("1"), colex[ranks]] = ranks
    return sets


def _binomial_table(rows: int, num_ranks: int) -> np.ndarray:
    """C(n, k) for k <= 13; rows past ``num_ranks`` only need k <= 4 (multisets of suits)."""
    table = np.zeros((rows, MAX_RANKS + 1), np.int64)
    for n in range(rows):
        for k in range(min(n, MAX_RANKS if n <= num_ranks else NUM_SUITS) + 1):
            table[n, k] = comb(n, k)
    return table


__all__ = ["HandIndexer", "IsomorphismTables", "index_hand"]
