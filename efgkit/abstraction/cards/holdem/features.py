"""Hold'em hand features over canonical hands, computed one canonical board at a time.

Every feature is a function of the final hand strength (on the river in four-round hold'em,
on the last round's board in games of fewer rounds: 3 cards after the flop in
``holdem(rounds=2)``, 4 after the turn in ``holdem(rounds=3)``): the probability of
winning plus half the probability of tying against a uniformly random opponent hand from
the cards the player cannot see. On one complete board, ranking the hole pairs once and
sorting them gives every pair's strength in O(n) more (the sorted sweep of Johanson et al.
2011): the opponents beaten by pair {a, b} are all lower-ranked pairs minus those holding
a or b, counted per card while sweeping upwards (inclusion–exclusion; no lower pair holds
both), and the same for ties within a group of equal rank. Strengths are kept as the
integer ``2 x wins + ties`` out of ``2 x opponents``, so results are exact and the same in
any order of computation.

Per round (the board as one group, so features never depend on the order the board came):

* the final round (``river_chunk``; the river in four-round hold'em), per canonical final
  board: E[HS] and OCHS (strength against each opponent cluster of preflop classes; a
  cluster that card removal empties gets the hand's E[HS], as in
  ``efgkit.abstraction.cards.hand_strength``): no future cards;
* turn / flop before the final round, per canonical 4- / 3-card board: over every runout to
  the final board, the histogram of the final strength (``bins`` equal-width bins of [0, 1],
  bin ``min(floor(strength x bins), bins - 1)``), E[HS] and E[HS^2];
* preflop, summed over canonical final boards weighted by how many boards each stands
  for: E[HS], E[HS^2] and the histogram of every preflop class;
* potential-aware flop (``transition_chunk``): the turn bucket each turn card leads to.

Each ``*_chunk`` function takes a block of canonical boards and returns plain arrays, so
chunks are independent (what Dask distributes); entries are indexed by the hand indexer
with the board as one group, ``HandIndexer((2, k))``. A canonical board stands for
``orbit`` boards (its suit-isomorphic images), so a canonical hand index ``i`` stands for
``sum(orbit[board] for every (board, hole) entry indexed i)`` concrete (hole, board)
pairs: its weight for clustering.
"""

from __future__ import annotations

from functools import lru_cache
from math import comb
from typing import NamedTuple

import numba
import numpy as np

from efgkit.abstraction.cards.holdem.deck import HOLE_CARDS, Deck
from efgkit.abstraction.cards.holdem.evaluator import hand_rank
from efgkit.abstraction.cards.holdem.isomorphism import HandIndexer, index_hand

FINAL_BOARD = 5
"""Board cards at the showdown of four-round hold'em; games of fewer rounds pass their own."""


@lru_cache(maxsize=16)
def hand_indexer(board_cards: int, num_ranks: int) -> HandIndexer:
    """The indexer of (hole, board) with the board as one group; (2,) for preflop (cached)."""
    return HandIndexer((HOLE_CARDS, board_cards) if board_cards else (HOLE_CARDS,), num_ranks=num_ranks)


@lru_cache(maxsize=16)
def board_indexer(board_cards: int, num_ranks: int) -> HandIndexer:
    """The indexer of canonical boards of ``board_cards`` cards (cached)."""
    return HandIndexer((board_cards,), num_ranks=num_ranks)


# ---------------------------------------------------------------- small combinatorics
@numba.njit(cache=True, no_cfunc_wrapper=True)
def _combinations(cards, size):
    """All ``size``-subsets of ``cards`` in lexicographic order, (C(n, size), size)."""
    n = cards.shape[0]
    count = 1
    for k in range(size):
        count = count * (n - k) // (k + 1)
    out = np.empty((count, size), np.int64)
    chosen = np.arange(size)
    for row in range(count):
        for k in range(size):
            out[row, k] = cards[chosen[k]]
        k = size - 1
        while k >= 0 and chosen[k] == n - size + k:
            k -= 1
        if k < 0:
            break
        chosen[k] += 1
        for j in range(k + 1, size):
            chosen[j] = chosen[j - 1] + 1
    return out


@numba.njit(cache=True, no_cfunc_wrapper=True)
def _cards_except(excluded, num_cards):
    """The cards of the deck not in ``excluded``, ascending."""
    used = np.zeros(num_cards, np.bool_)
    for card in excluded:
        used[card] = True
    out = np.empty(num_cards - excluded.shape[0], np.int64)
    n = 0
    for card in range(num_cards):
        if not used[card]:
            out[n] = card
            n += 1
    return out


def canonical_boards(deck: Deck, board_cards: int) -> tuple[np.ndarray, np.ndarray]:
    """Representatives (n, board_cards) int64 of the deck's canonical boards, in index order, and
    their orbit sizes (n,): how many boards each stands for."""
    indexer = board_indexer(board_cards, deck.num_ranks)
    every = np.arange(indexer.round_size(0))
    return indexer.unindex(0, every).astype(np.int64), indexer.multiplicity(0, every)


# ---------------------------------------------------------------- one complete board
@numba.njit(cache=True, no_cfunc_wrapper=True)
def _showdown_ranks(board, holes, offset, ranks):
    """Evaluator rank of every hole pair (rows of ``holes``) with the final ``board`` (3 to 5
    cards)."""
    width = board.shape[0]
    cards = np.empty(HOLE_CARDS + width, np.int64)
    for k in range(width):
        cards[2 + k] = board[k] + offset
    for h in range(holes.shape[0]):
        cards[0] = holes[h, 0] + offset
        cards[1] = holes[h, 1] + offset
        ranks[h] = hand_rank(cards, HOLE_CARDS + width)


@numba.njit(cache=True, no_cfunc_wrapper=True)
def _doubled_strength(ranks, holes, num_cards, doubled):
    """``2 x wins + ties`` of every hole pair against every disjoint pair of ``holes``
    (all pairs of the unseen cards), by the sorted sweep: O(n log n)."""
    n = ranks.shape[0]
    order = np.argsort(ranks)
    lower_with = np.zeros(num_cards, np.int64)
    equal_with = np.zeros(num_cards, np.int64)
    lower = 0
    start = 0
    while start < n:
        stop = start
        while stop < n and ranks[order[stop]] == ranks[order[start]]:
            equal_with[holes[order[stop], 0]] += 1
            equal_with[holes[order[stop], 1]] += 1
            stop += 1
        size = stop - start
        for t in range(start, stop):
            a, b = holes[order[t], 0], holes[order[t], 1]
            wins = lower - lower_with[a] - lower_with[b]
            ties = size - equal_with[a] - equal_with[b] + 1  # the pair itself was subtracted twice
            doubled[order[t]] = 2 * wins + ties
        for t in range(start, stop):
            a, b = holes[order[t], 0], holes[order[t], 1]
            lower_with[a] += 1
            lower_with[b] += 1
            equal_with[a] = 0
            equal_with[b] = 0
        lower += size
        start = stop


@numba.njit(cache=True, no_cfunc_wrapper=True)
def _doubled_strength_by_cluster(ranks, holes, cluster, num_clusters, num_cards, doubled, opponents):
    """Per hole pair and opponent cluster: ``2 x wins + ties`` (n, K) and opponent pairs (n, K);
    the sorted sweep of ``_doubled_strength`` with every count kept per cluster."""
    n = ranks.shape[0]
    total = np.zeros(num_clusters, np.int64)
    holding = np.zeros((num_cards, num_clusters), np.int64)
    for h in range(n):
        total[cluster[h]] += 1
        holding[holes[h, 0], cluster[h]] += 1
        holding[holes[h, 1], cluster[h]] += 1
    for h in range(n):
        for k in range(num_clusters):
            opponents[h, k] = total[k] - holding[holes[h, 0], k] - holding[holes[h, 1], k]
        opponents[h, cluster[h]] += 1
    order = np.argsort(ranks)
    lower = np.zeros(num_clusters, np.int64)
    lower_with = np.zeros((num_cards, num_clusters), np.int64)
    equal = np.zeros(num_clusters, np.int64)
    equal_with = np.zeros((num_cards, num_clusters), np.int64)
    start = 0
    while start < n:
        stop = start
        while stop < n and ranks[order[stop]] == ranks[order[start]]:
            h = order[stop]
            equal[cluster[h]] += 1
            equal_with[holes[h, 0], cluster[h]] += 1
            equal_with[holes[h, 1], cluster[h]] += 1
            stop += 1
        for t in range(start, stop):
            h = order[t]
            a, b = holes[h, 0], holes[h, 1]
            for k in range(num_clusters):
                wins = lower[k] - lower_with[a, k] - lower_with[b, k]
                ties = equal[k] - equal_with[a, k] - equal_with[b, k]
                doubled[h, k] = 2 * wins + ties
            doubled[h, cluster[h]] += 1
        for t in range(start, stop):
            h = order[t]
            k = cluster[h]
            a, b = holes[h, 0], holes[h, 1]
            lower[k] += 1
            lower_with[a, k] += 1
            lower_with[b, k] += 1
            equal[k] = 0
            equal_with[a, k] = 0
            equal_with[b, k] = 0
        start = stop


# ---------------------------------------------------------------- chunk kernels
@numba.njit(cache=True, no_cfunc_wrapper=True)
def _hand_indices(tables, board, holes, count, out, offset):
    """Write the canonical index of each hole pair of ``holes`` int64 (pairs, 2) with the
    first ``count`` cards of ``board`` int64 into ``out[offset:offset + pairs]`` (int64);
    ``tables`` is the indexer's ``HandIndexer.tables`` for (2, count)."""
    cards = np.empty(HOLE_CARDS + count, np.int64)
    for k in range(count):
        cards[HOLE_CARDS + k] = board[k]
    for h in range(holes.shape[0]):
        cards[0] = holes[h, 0]
        cards[1] = holes[h, 1]
        out[offset + h] = index_hand(tables, cards, HOLE_CARDS + count)


@numba.njit(cache=True, no_cfunc_wrapper=True)
def _river_kernel(boards, num_cards, offset, cluster_of_pair, num_clusters, tables):
    """Final-round features of every hole pair on each canonical board of ``boards`` int64
    (boards, final board cards): canonical indices int64 (boards x pairs,), E[HS] float32 (entries,) and OCHS
    float32 (entries, ``num_clusters``). ``offset`` maps deck card ids to the evaluator's
    52-card ids; ``cluster_of_pair`` int64 (cards, cards) the opponent cluster of each hole
    pair (-1 on the diagonal); ``tables`` the (2, final board cards) indexer's."""
    final = boards.shape[1]
    unseen = num_cards - final
    n = unseen * (unseen - 1) // 2
    opponents_total = (unseen - 2) * (unseen - 3) // 2
    indices = np.empty(boards.shape[0] * n, np.int64)
    strength = np.empty(boards.shape[0] * n, np.float32)
    ochs = np.empty((boards.shape[0] * n, num_clusters), np.float32)
    ranks = np.empty(n, np.int64)
    cluster = np.empty(n, np.int64)
    doubled = np.empty((n, num_clusters), np.int64)
    opponents = np.empty((n, num_clusters), np.int64)
    for b in range(boards.shape[0]):
        holes = _combinations(_cards_except(boards[b], num_cards), 2)
        for h in range(n):
            cluster[h] = cluster_of_pair[holes[h, 0], holes[h, 1]]
        _showdown_ranks(boards[b], holes, offset, ranks)
        _doubled_strength_by_cluster(ranks, holes, cluster, num_clusters, num_cards, doubled, opponents)
        _hand_indices(tables, boards[b], holes, final, indices, b * n)
        for h in range(n):
            row = b * n + h
            ehs = doubled[h].sum() / (2.0 * opponents_total)
            strength[row] = ehs
            for k in range(num_clusters):
                ochs[row, k] = doubled[h, k] / (2.0 * opponents[h, k]) if opponents[h, k] > 0 else ehs
    return indices, strength, ochs


@numba.njit(cache=True, no_cfunc_wrapper=True)
def _street_kernel(boards, num_cards, offset, bins, tables, final_cards):
    """Flop or turn features of every hole pair on each canonical board of ``boards`` int64
    (boards, 3 or 4) over every runout to the final board of ``final_cards`` cards: canonical
    indices int64 (boards x pairs,), the final-strength histogram int32 (entries, ``bins``), E[HS] and E[HS^2]
    float32 (entries,). ``offset`` and ``tables`` as in ``_river_kernel`` (the (2, board
    cards) indexer)."""
    num_boards, board_cards = boards.shape
    unseen = num_cards - board_cards
    n = unseen * (unseen - 1) // 2
    opponents_total = (num_cards - HOLE_CARDS - final_cards) * (num_cards - HOLE_CARDS - final_cards - 1) // 2
    indices = np.empty(num_boards * n, np.int64)
    histogram = np.zeros((num_boards * n, bins), np.int32)
    sums = np.zeros(num_boards * n, np.int64)
    squares = np.zeros(num_boards * n, np.int64)
    runouts_per_hole = np.zeros(num_boards * n, np.int64)
    final = np.empty(final_cards, np.int64)
    position = np.empty(num_cards, np.int64)
    for b in range(num_boards):
        cards = _cards_except(boards[b], num_cards)
        for p in range(unseen):
            position[cards[p]] = p
        _hand_indices(tables, boards[b], _combinations(cards, 2), board_cards, indices, b * n)
        runouts = _combinations(cards, final_cards - board_cards)
        for k in range(board_cards):
            final[k] = boards[b, k]
        for r in range(runouts.shape[0]):
            for k in range(final_cards - board_cards):
                final[board_cards + k] = runouts[r, k]
            holes = _combinations(_cards_except(final, num_cards), 2)
            ranks = np.empty(holes.shape[0], np.int64)
            doubled = np.empty(holes.shape[0], np.int64)
            _showdown_ranks(final, holes, offset, ranks)
            _doubled_strength(ranks, holes, num_cards, doubled)
            for h in range(holes.shape[0]):
                i, j = position[holes[h, 0]], position[holes[h, 1]]
                row = b * n + i * (2 * unseen - i - 1) // 2 + (j - i - 1)  # pair (i, j) of ``cards``
                d = doubled[h]
                sums[row] += d
                squares[row] += d * d
                runouts_per_hole[row] += 1
                histogram[row, min(d * bins // (2 * opponents_total), bins - 1)] += 1
    ehs = sums / (2.0 * opponents_total * runouts_per_hole)
    ehs2 = squares / (4.0 * opponents_total * opponents_total * runouts_per_hole)
    return indices, histogram, ehs.astype(np.float32), ehs2.astype(np.float32)


@numba.njit(cache=True, no_cfunc_wrapper=True)
def _preflop_kernel(boards, orbit, num_cards, offset, class_of_pair, num_classes, bins):
    """Orbit-weighted preflop sums over the canonical final boards ``boards`` int64 (boards,
    final board cards), each standing for ``orbit`` int64 (boards,) boards: per preflop class
    (``class_of_pair`` int64 (cards, cards)) the sums of ``2 x wins + ties`` and of its square, the count, all
    int64 (``num_classes``,), and the histogram int64 (classes, ``bins``)."""
    unseen = num_cards - boards.shape[1]
    n = unseen * (unseen - 1) // 2
    opponents_total = (unseen - 2) * (unseen - 3) // 2
    sums = np.zeros(num_classes, np.int64)
    squares = np.zeros(num_classes, np.int64)
    counts = np.zeros(num_classes, np.int64)
    histogram = np.zeros((num_classes, bins), np.int64)
    ranks = np.empty(n, np.int64)
    doubled = np.empty(n, np.int64)
    for b in range(boards.shape[0]):
        holes = _combinations(_cards_except(boards[b], num_cards), 2)
        _showdown_ranks(boards[b], holes, offset, ranks)
        _doubled_strength(ranks, holes, num_cards, doubled)
        weight = orbit[b]
        for h in range(n):
            c = class_of_pair[holes[h, 0], holes[h, 1]]
            d = doubled[h]
            sums[c] += weight * d
            squares[c] += weight * d * d
            counts[c] += weight
            histogram[c, min(d * bins // (2 * opponents_total), bins - 1)] += weight
    return sums, squares, counts, histogram


@numba.njit(cache=True, no_cfunc_wrapper=True)
def _transition_kernel(boards, num_cards, turn_buckets, flop_tables, turn_tables):
    """Potential-aware flop data of every hole pair on each canonical flop of ``boards``
    int64 (boards, 3): canonical flop indices int64 (boards x pairs,) and the turn bucket
    after each possible turn card, int32 (entries, unseen cards - 2), read from
    ``turn_buckets`` (one per canonical turn index) through the (2, 4) indexer's
    ``turn_tables``; ``flop_tables`` the (2, 3) indexer's."""
    unseen = num_cards - 3
    n = unseen * (unseen - 1) // 2
    indices = np.empty(boards.shape[0] * n, np.int64)
    next_buckets = np.empty((boards.shape[0] * n, unseen - HOLE_CARDS), np.int32)
    cards = np.empty(6, np.int64)
    for b in range(boards.shape[0]):
        remaining = _cards_except(boards[b], num_cards)
        holes = _combinations(remaining, 2)
        _hand_indices(flop_tables, boards[b], holes, 3, indices, b * n)
        for k in range(3):
            cards[HOLE_CARDS + k] = boards[b, k]
        for h in range(n):
            cards[0], cards[1] = holes[h, 0], holes[h, 1]
            column = 0
            for turn in remaining:
                if turn != cards[0] and turn != cards[1]:
                    cards[5] = turn
                    next_buckets[b * n + h, column] = turn_buckets[index_hand(turn_tables, cards, 6)]
                    column += 1
    return indices, next_buckets


# ---------------------------------------------------------------- chunk functions (picklable)
class RiverChunk(NamedTuple):
    indices: np.ndarray
    """int64 (boards x pairs,): canonical river index of every (board, hole) entry."""
    ehs: np.ndarray
    """float32: E[HS] of each entry."""
    ochs: np.ndarray
    """float32 (entries, clusters): strength against each opponent cluster."""


class StreetChunk(NamedTuple):
    indices: np.ndarray
    """int64 (boards x pairs,): canonical flop/turn index of every (board, hole) entry."""
    histogram: np.ndarray
    """int32 (entries, bins): runouts whose final strength falls in each bin."""
    ehs: np.ndarray
    ehs2: np.ndarray


class TransitionChunk(NamedTuple):
    indices: np.ndarray
    """int64 (boards x pairs,): canonical flop index of every (board, hole) entry."""
    next_buckets: np.ndarray
    """int32 (entries, turn cards): the turn bucket each possible turn card leads to."""


class PreflopSums(NamedTuple):
    """Orbit-weighted sums over (board, hole) of ``2 x wins + ties``, its square, the count and
    the histogram of the strength, per preflop class (the canonical preflop index)."""

    sums: np.ndarray
    squares: np.ndarray
    counts: np.ndarray
    histogram: np.ndarray

    def __add__(self, other: PreflopSums) -> PreflopSums:  # type: ignore[override]
        return PreflopSums(*(mine + theirs for mine, theirs in zip(self, other, strict=True)))


def pairs_per_board(deck: Deck, board_cards: int) -> int:
    """Hole pairs on a board of ``board_cards`` cards."""
    return comb(deck.num_cards - board_cards, HOLE_CARDS)


def opponents_per_hand(deck: Deck, final_cards: int = FINAL_BOARD) -> int:
    """Opponent hole pairs at a showdown on ``final_cards`` board cards (the same for every hand
    and board)."""
    return comb(deck.num_cards - HOLE_CARDS - final_cards, HOLE_CARDS)


@lru_cache(maxsize=16)
def preflop_class_of_pair(num_ranks: int) -> np.ndarray:
    """(cards, cards) int64: the canonical preflop index (class) of every hole pair."""
    deck = Deck(num_ranks)
    indexer = hand_indexer(0, num_ranks)
    first, second = np.triu_indices(deck.num_cards, 1)
    table = np.full((deck.num_cards, deck.num_cards), -1, np.int64)
    table[first, second] = table[second, first] = indexer.index(np.stack([first, second], axis=1))
    return table


def river_chunk(num_ranks: int, boards: np.ndarray, cluster_of_class: np.ndarray) -> RiverChunk:
    """Final-round E[HS] and OCHS of every hole pair on each of ``boards`` (canonical final
    boards: 5 cards in four-round hold'em); ``cluster_of_class`` gives the opponent cluster of
    every preflop class."""
    deck = Deck(num_ranks)
    boards = np.ascontiguousarray(boards, np.int64)
    cluster_of_class = np.asarray(cluster_of_class, np.int64)
    cluster_of_pair = np.where(preflop_class_of_pair(num_ranks) >= 0,
                               cluster_of_class[preflop_class_of_pair(num_ranks)], -1)
    return RiverChunk(*_river_kernel(boards, deck.num_cards,
                                     deck.standard_offset, cluster_of_pair, int(cluster_of_class.max()) + 1,
                                     hand_indexer(boards.shape[1], num_ranks).tables))


def street_chunk(num_ranks: int, boards: np.ndarray, bins: int,
                 final_cards: int = FINAL_BOARD) -> StreetChunk:
    """Histogram, E[HS] and E[HS^2] of every hole pair on each of ``boards`` (canonical flop or
    turn boards) over every runout to the final board of ``final_cards`` cards."""
    deck = Deck(num_ranks)
    boards = np.ascontiguousarray(boards, np.int64)
    return StreetChunk(*_street_kernel(boards, deck.num_cards, deck.standard_offset, bins,
                                       hand_indexer(boards.shape[1], num_ranks).tables,
                                       np.int64(final_cards)))


def preflop_chunk(num_ranks: int, boards: np.ndarray, orbit: np.ndarray, bins: int) -> PreflopSums:
    """Preflop sums (see PreflopSums) over ``boards`` (canonical final boards, each counted
    ``orbit`` times)."""
    deck = Deck(num_ranks)
    return PreflopSums(*_preflop_kernel(np.ascontiguousarray(boards, np.int64),
                                        np.ascontiguousarray(orbit, np.int64), deck.num_cards,
                                        deck.standard_offset, preflop_class_of_pair(num_ranks),
                                        hand_indexer(0, num_ranks).round_size(0), bins))


def transition_chunk(num_ranks: int, boards: np.ndarray, turn_buckets: np.ndarray) -> TransitionChunk:
    """Potential-aware flop features (Ganzfried & Sandholm 2014): for every hole pair on each of
    ``boards`` (canonical flops), the bucket of the turn hand after each turn card;
    ``turn_buckets`` gives the bucket of every canonical turn index."""
    deck = Deck(num_ranks)
    return TransitionChunk(*_transition_kernel(np.ascontiguousarray(boards, np.int64), deck.num_cards,
                                               np.asarray(turn_buckets), hand_indexer(3, num_ranks).tables,
                                               hand_indexer(4, num_ranks).tables))
