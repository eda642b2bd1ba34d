"""Card abstractions as the streamed poker engine sees them: a bucket per (round, board, hand).

A strategy on a card abstraction has one row per (betting decision node, bucket), where the
bucket of a player's hand on the board dealt so far comes from the abstraction
(``bucket_layout.BucketLayout``). Three kinds:

* ``LosslessCards``: every (board deals in order, hand) is its own bucket — the unabstracted
  game (a player's information set is the betting, every board card in the order dealt and
  the hand). Bucket counts grow with the boards, so it is for games the public tree fits.
* ``CardIndependent``: one bucket per round — strategies that do not look at the cards
  (always call, always raise, uniform random).
* ``IsomorphicCards``: the bucket of the canonical index of (hole cards, board as one group)
  (Waugh's indexer, ``abstraction.cards.holdem.isomorphism``) read from a table per round:
  the hold'em pipeline's bucket files (``from_bucket_file``), the canonical hands themselves
  (``canonical``, suit isomorphism only) or a seeded random table (``hashed``, for tests).
  These are suit symmetric: renaming suits never changes a bucket, which the engine uses to
  evaluate one flop per suit-isomorphism class. ``perfect_recall.PerfectRecallCards`` makes
  one perfect recall (the bucket is the history of its buckets).

``buckets(round, board, hand_cards)``: int64 (hands,) bucket of every hand (rows of
``hand_cards``, int64 (hands, k)) on ``board`` (int64 card ids, the deals in order); entries
of hands that share a card with the board are ignored. It runs the numba kernel
``hand_buckets(tables, round, board, hand_cards, hands, out)`` over ``kernel_tables()`` (a small
NamedTuple of arrays per kind), which njit code such as the sampled solver's board loop calls
directly, without Python in between.
"""

from __future__ import annotations

from math import comb, prod
from pathlib import Path
from typing import NamedTuple, Protocol

import numba
import numpy as np
from numba.core import types
from numba.extending import overload

from efgkit.abstraction.cards.holdem.bucket_file import BucketLookup
from efgkit.abstraction.cards.holdem.deck import STANDARD_RANKS
from efgkit.abstraction.cards.holdem.features import hand_indexer
from efgkit.abstraction.cards.holdem.isomorphism import index_hand
from efgkit.errors import AbstractionError
from efgkit.games.poker import LimitPoker
from efgkit.io.budget import check_memory
from efgkit.poker.betting_tree import sorted_deals

HOLDEM_SUITS = 4


class HandBuckets(Protocol):
    """A card abstraction as the poker engines read it: per round, each hand's bucket on a
    board (in Python, and inside kernels through ``kernel_tables``). Not to be confused with
    ``abstraction.cards.bucketing.CardAbstraction``, buckets that become an InfosetMap of a
    GameTree."""

    description: str
    suit_symmetric: bool
    perfect_recall: bool
    """Whether a hand's bucket determines its buckets in the earlier rounds, so that the abstract
    game has perfect recall (``abstract_best_response.py`` is exact there)."""
    reference: dict
    """What rebuilds it (``abstraction_from_reference``): its kind and, for a bucket file,
    the path and the file's content digest."""

    def num_buckets(self, round: int) -> int: ...

    def buckets(self, round: int, board: np.ndarray, hand_cards: np.ndarray) -> np.ndarray: ...

    def kernel_tables(self) -> NamedTuple: ...


class IndependentTables(NamedTuple):
    """``hand_buckets``'s view of ``CardIndependent``: every hand in bucket 0."""

    bucket: int


class LosslessTables(NamedTuple):
    """``hand_buckets``'s view of ``LosslessCards``: ``num_cards``, ``hands`` (private hands),
    ``deal_sizes`` int64 (deals,), ``deals_by_round`` int64 (rounds,) and ``binomial`` int64
    (num_cards + 1, largest deal + 1) C(n, k)."""

    num_cards: int
    hands: int
    deal_sizes: np.ndarray
    deals_by_round: np.ndarray
    binomial: np.ndarray


class IsomorphicTables(NamedTuple):
    """``hand_buckets``'s view of ``IsomorphicCards``: per round the indexer's
    ``IsomorphismTables`` (``indexers``) and the bucket of every canonical index (``buckets``,
    one integer dtype for all rounds, memory-mapped when they come from a bucket file). Build
    it with ``isomorphic_tables``."""

    indexers: tuple
    buckets: tuple


KERNEL_ROUNDS = 4
"""Rounds of an ``IsomorphicTables`` (more for a game with more): the tuples of a game with
fewer are padded with its last round, so every hold'em game's kernels share one compiled
type."""


def isomorphic_tables(indexers: list, buckets: list[np.ndarray], num_buckets: int) -> IsomorphicTables:
    """The kernel view of per-round ``indexers`` and bucket tables (every bucket below
    ``num_buckets``): the tables uint16 where the buckets fit (a copy of tables of a wider
    dtype; a bucket file's uint16 tables as they are, memory-mapped), else of their common
    dtype; both tuples padded to ``KERNEL_ROUNDS``. Kernels are compiled per type, so one
    dtype and one length for the common cases is one compile where there were one per game
    (docs/poker-engine.md)."""
    dtype = np.uint16 if num_buckets <= 1 << 16 else np.result_type(*buckets)
    pad = max(KERNEL_ROUNDS - len(buckets), 0)
    tables = [np.asarray(t, dtype) for t in buckets]
    return IsomorphicTables(tuple(indexers) + (indexers[-1],) * pad, tuple(tables) + (tables[-1],) * pad)


def _binomial_table(rows: int, columns: int) -> np.ndarray:
    return np.array([[comb(n, k) for k in range(columns)] for n in range(rows)], np.int64)


def hand_buckets(tables, round, board, hand_cards, hands, out):
    """``out[h]`` = the bucket of hand ``h`` (a row of ``hand_cards``) on ``board`` (int64, the
    deals in order) in ``round``, for every ``h`` in ``hands`` (int64; hands sharing no card
    with the board). A numba kernel (``overload``ed per kind of ``tables``); from Python use
    the abstraction's ``buckets``."""
    raise NotImplementedError("hand_buckets runs inside numba kernels; call HandBuckets.buckets")


@overload(hand_buckets, jit_options={"cache": True})
def _hand_buckets(tables, round, board, hand_cards, hands, out):
    if isinstance(tables, types.BaseNamedTuple) and tables.instance_class is IndependentTables:
        def independent(tables, round, board, hand_cards, hands, out):
            for h in hands:
                out[h] = tables.bucket
        return independent
    if isinstance(tables, types.BaseNamedTuple) and tables.instance_class is LosslessTables:
        def lossless(tables, round, board, hand_cards, hands, out):
            # Each deal's rank among combinations(range(num_cards), size) in lexicographic
            # order: C(n, k) - 1 - sum_i C(n - 1 - c_i, k - i) over its sorted cards c_i.
            key, start = 0, 0
            for deal in range(tables.deals_by_round[round]):
                size = tables.deal_sizes[deal]
                n = tables.num_cards
                rank = tables.binomial[n, size] - 1
                for i in range(size):
                    rank -= tables.binomial[n - 1 - board[start + i], size - i]
                key = key * tables.binomial[n, size] + rank
                start += size
            for h in hands:
                out[h] = key * tables.hands + h
        return lossless
    if isinstance(tables, types.BaseNamedTuple) and tables.instance_class is IsomorphicTables:
        def isomorphic(tables, round, board, hand_cards, hands, out):
            k = hand_cards.shape[1]
            cards = np.empty(k + board.shape[0], np.int64)
            cards[k:] = board
            indexer = tables.indexers[round]
            buckets = tables.buckets[round]
            for h in hands:
                for i in range(k):  # element by element: a slice assignment per hand costs more
                    cards[i] = hand_cards[h, i]
                out[h] = buckets[index_hand(indexer, cards, cards.shape[0])]
        return isomorphic
    return None


@numba.njit(cache=True, no_cfunc_wrapper=True)
def _sorted_hand_buckets(tables, round, board, hand_cards, hand_mask, out):
    """``hand_buckets`` over the hands sharing no card with ``board``; -1 for the others."""
    mask = 0
    for c in board:
        mask |= np.int64(1) << c
    hands = np.flatnonzero((hand_mask & mask) == 0)
    out[:] = -1
    hand_buckets(tables, round, board, hand_cards, hands, out)


def _buckets_of(tables, round: int, board: np.ndarray, hand_cards: np.ndarray) -> np.ndarray:
    hand_cards = np.ascontiguousarray(hand_cards, np.int64)
    hand_mask = (np.int64(1) << hand_cards).sum(axis=1).astype(np.int64)
    out = np.empty(hand_cards.shape[0], np.int64)
    _sorted_hand_buckets(tables, round, np.ascontiguousarray(board, np.int64), hand_cards, hand_mask, out)
    return out


class CardIndependent:
    """One bucket per round: the strategy ignores the cards."""

    description = "card independent (one bucket per round)"
    suit_symmetric = True
    perfect_recall = True  # nothing about the cards is ever seen, so nothing is forgotten
    reference = {"kind": "none"}

    def num_buckets(self, round: int) -> int:
        return 1

    def buckets(self, round: int, board: np.ndarray, hand_cards: np.ndarray) -> np.ndarray:
        return np.zeros(hand_cards.shape[0], np.int64)

    def kernel_tables(self) -> IndependentTables:
        return IndependentTables(0)


class LosslessCards:
    """Bucket = (every board deal in order, hand): the unabstracted game of ``game``."""

    description = "lossless (every board and hand)"
    suit_symmetric = False
    perfect_recall = True
    reference = {"kind": "lossless"}

    def __init__(self, game: LimitPoker) -> None:
        cards = game.card_structure
        self._num_cards = cards.num_cards
        self._hands = comb(cards.num_cards, cards.private_cards_per_player)
        self._deal_sizes = [n for n in cards.public_cards_per_round if n]
        self._deals_by_round = [sum(1 for n in cards.public_cards_per_round[1:r + 1] if n)
                                for r in range(game.num_rounds)]
        largest_deal = max(self._deal_sizes, default=0)
        self._tables = LosslessTables(self._num_cards, self._hands, np.array(self._deal_sizes, np.int64),
                                      np.array(self._deals_by_round, np.int64),
                                      _binomial_table(self._num_cards + 1, largest_deal + 1))

    def num_buckets(self, round: int) -> int:
        deals = self._deal_sizes[:self._deals_by_round[round]]
        return self._hands * prod(comb(self._num_cards, size) for size in deals)

    def buckets(self, round: int, board: np.ndarray, hand_cards: np.ndarray) -> np.ndarray:
        board = sorted_deals(board, self._deal_sizes[:self._deals_by_round[round]])
        hand_cards = np.sort(np.asarray(hand_cards, np.int64), axis=1)
        # The kernel numbers a hand by its row in ``hand_cards`` (the engines pass every hand, in
        # order); here a hand is numbered by its cards, whatever hands are passed.
        by_row = _buckets_of(self._tables, round, board, hand_cards)
        rows = np.arange(hand_cards.shape[0])
        return np.where(by_row < 0, -1, by_row - rows + self._hand_rank(hand_cards))

    def _hand_rank(self, hand_cards: np.ndarray) -> np.ndarray:
        """Each hand's (sorted rows of cards) place among all hands in lexicographic order:
        C(n, k) - 1 - sum_i C(n - 1 - c_i, k - i), the kernel's rank of a deal."""
        n, k = self._num_cards, hand_cards.shape[1]
        binomial = _binomial_table(n + 1, k + 1)
        rank = np.full(hand_cards.shape[0], comb(n, k) - 1, np.int64)
        for i in range(k):
            rank -= binomial[n - 1 - hand_cards[:, i], k - i]
        return rank

    def kernel_tables(self) -> LosslessTables:
        """Its kernel view; ``hand_buckets`` wants each deal's cards sorted."""
        return self._tables


class IsomorphicCards:
    """Bucket = ``tables[round][canonical index of (hole cards, board)]``; see the module docstring.

    ``tables[r]`` int (canonical hands of round r with the board as one group,) — the layout
    of the hold'em pipeline's bucket files.
    """

    suit_symmetric = True
    perfect_recall = False  # a round's bucket forgets the earlier ones (and the board is one group)

    def __init__(self, game: LimitPoker, tables: list[np.ndarray], description: str,
                 reference: dict | None = None) -> None:
        cards = game.card_structure
        if cards.num_suits != HOLDEM_SUITS or cards.private_cards_per_player != 2 or game.deal_by_rank:
            raise AbstractionError(f"{game.spec}: isomorphic card abstractions need hold'em cards (two hole "
                                   f"cards, four suits, dealt card by card)")
        self._num_ranks = cards.num_ranks
        self._board_cards = [sum(cards.public_cards_per_round[:r + 1]) for r in range(game.num_rounds)]
        if len(tables) < game.num_rounds:
            raise AbstractionError(f"{description}: {len(tables)} rounds of buckets, {game.spec} has "
                                   f"{game.num_rounds}")
        for r, table in enumerate(tables[:game.num_rounds]):
            size = self._indexer(r).round_size(self._indexer(r).num_rounds - 1)
            if np.shape(table) != (size,):
                raise AbstractionError(f"{description}: round {r} has {np.shape(table)} buckets, "
                                       f"{game.spec} {size} canonical hands")
        self._tables = tables
        self._num_rounds = game.num_rounds
        self._kernel_view: IsomorphicTables | None = None
        self.reference = reference or {"kind": "tables"}
        self._counts = [int(np.max(t)) + 1 if t.size else 0 for t in tables]
        self.description = description

    @property
    def tables(self) -> list[np.ndarray]:
        """The bucket of every canonical hand, per round."""
        return self._tables

    def _indexer(self, round: int):
        return hand_indexer(self._board_cards[round], self._num_ranks)

    def num_buckets(self, round: int) -> int:
        return self._counts[round]

    def buckets(self, round: int, board: np.ndarray, hand_cards: np.ndarray) -> np.ndarray:
        return _buckets_of(self.kernel_tables(), round, board, hand_cards)

    def kernel_tables(self) -> IsomorphicTables:
        """Its kernel view (``isomorphic_tables``, built once)."""
        if self._kernel_view is None:
            self._kernel_view = isomorphic_tables([self._indexer(r).tables for r in range(self._num_rounds)],
                                                  self._tables[:self._num_rounds],
                                                  max(self._counts[:self._num_rounds]))
        return self._kernel_view

    def row_buckets(self, round: int, rows: np.ndarray) -> np.ndarray:
        """int64 (n,) bucket of every row of ``rows`` (n, 2 + board cards of ``round``): hole
        cards then the board, no card twice."""
        return np.asarray(self._tables[round])[self._indexer(round).index(rows)].astype(np.int64)

    @classmethod
    def canonical(cls, game: LimitPoker) -> IsomorphicCards:
        """Each canonical (hole cards, board) class its own bucket: suit isomorphism only."""
        ranks = game.card_structure.num_ranks
        boards = [sum(game.card_structure.public_cards_per_round[:r + 1]) for r in range(game.num_rounds)]
        sizes = [hand_indexer(cards, ranks).round_size(hand_indexer(cards, ranks).num_rounds - 1)
                 for cards in boards]
        check_memory(8 * sum(sizes), f"canonical buckets of {game.spec} ({sum(sizes):,} canonical hands)",
                     "use a bucket file (efgkit holdem-abstraction) or --buckets none")
        tables = [np.arange(size, dtype=np.int64) for size in sizes]
        return cls(game, tables, "canonical hands (suit isomorphism)", {"kind": "canonical"})

    @classmethod
    def hashed(cls, game: LimitPoker, buckets: tuple[int, ...], seed: int) -> IsomorphicCards:
        """Canonical hands thrown into ``buckets[r]`` buckets at random (a test abstraction)."""
        rng = np.random.default_rng(seed)
        ranks = game.card_structure.num_ranks
        tables = []
        for r in range(game.num_rounds):
            indexer = hand_indexer(sum(game.card_structure.public_cards_per_round[:r + 1]), ranks)
            size = indexer.round_size(indexer.num_rounds - 1)
            table = np.concatenate([np.arange(min(buckets[r], size)),
                                    rng.integers(0, buckets[r], max(size - buckets[r], 0))])
            tables.append(table.astype(np.uint16) if buckets[r] <= 1 << 16 else table)
        return cls(game, tables, f"random buckets {'-'.join(map(str, buckets))} (seed {seed})")

    @classmethod
    def from_bucket_file(cls, game: LimitPoker, path) -> IsomorphicCards:
        """The buckets of a hold'em pipeline bucket file (checked against ``game``'s deck)."""
        lookup = BucketLookup(path)
        ranks = game.card_structure.num_ranks
        if lookup.deck.num_ranks != ranks:
            lookup.close()
            raise AbstractionError(f"{path}: the bucket file is for a {lookup.deck.num_ranks}-rank deck, "
                                   f"{game.spec} has {ranks} ranks"
                                   + (" (the standard deck)" if ranks == STANDARD_RANKS else ""))
        reference = {"kind": "bucket-file", "path": str(Path(path).resolve()),
                     "sha256": lookup.content_sha256}
        return cls(game, lookup.tables(), f"bucket file {path}", reference)
