"""Card abstractions as the streamed poker engine sees them: a bucket per (round, board, hand).

A strategy on a card abstraction has one row per (betting decision node, bucket), where the
bucket of a player's hand on the board dealt so far comes from the abstraction
(``bucket_strategy.BucketLayout``). Three kinds:

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
  evaluate one flop per suit-isomorphism class.

``buckets(round, board, hand_cards)``: int64 (hands,) bucket of every hand (rows of
``hand_cards``, int64 (hands, k)) on ``board`` (int64 card ids, the deals in order); entries
of hands that share a card with the board are ignored.
"""

from __future__ import annotations

from itertools import combinations
from math import comb, prod
from pathlib import Path
from typing import Protocol

import numpy as np

from efgkit.abstraction.cards.holdem.bucket_file import BucketLookup
from efgkit.abstraction.cards.holdem.deck import STANDARD_RANKS
from efgkit.abstraction.cards.holdem.features import hand_indexer
from efgkit.errors import AbstractionError
from efgkit.games.poker import LimitPoker

HOLDEM_SUITS = 4


class CardAbstraction(Protocol):
    description: str
    suit_symmetric: bool
    reference: dict
    """What rebuilds it (``abstraction_from_reference``): its kind and, for a bucket file,
    the path and the file's content digest."""

    def num_buckets(self, round: int) -> int: ...

    def buckets(self, round: int, board: np.ndarray, hand_cards: np.ndarray) -> np.ndarray: ...


class CardIndependent:
    """One bucket per round: the strategy ignores the cards."""

    description = "card independent (one bucket per round)"
    suit_symmetric = True
    reference = {"kind": "none"}

    def num_buckets(self, round: int) -> int:
        return 1

    def buckets(self, round: int, board: np.ndarray, hand_cards: np.ndarray) -> np.ndarray:
        return np.zeros(hand_cards.shape[0], np.int64)


class LosslessCards:
    """Bucket = (every board deal in order, hand): the unabstracted game of ``game``."""

    description = "lossless (every board and hand)"
    suit_symmetric = False
    reference = {"kind": "lossless"}

    def __init__(self, game: LimitPoker) -> None:
        cards = game.card_structure
        self._num_cards = cards.num_cards
        self._hands = comb(cards.num_cards, cards.private_cards_per_player)
        self._deal_sizes = [n for n in cards.public_cards_per_round if n]
        self._deals_by_round = [sum(1 for n in cards.public_cards_per_round[1:r + 1] if n)
                                for r in range(game.num_rounds)]
        self._combo_rank = {size: {combo: i for i, combo in enumerate(combinations(range(cards.num_cards),
                                                                                    size))}
                            for size in set(self._deal_sizes)}

    def num_buckets(self, round: int) -> int:
        deals = self._deal_sizes[:self._deals_by_round[round]]
        return self._hands * prod(comb(self._num_cards, size) for size in deals)

    def buckets(self, round: int, board: np.ndarray, hand_cards: np.ndarray) -> np.ndarray:
        key, start = 0, 0
        for size in self._deal_sizes[:self._deals_by_round[round]]:
            combo = tuple(sorted(board[start:start + size].tolist()))
            key = key * comb(self._num_cards, size) + self._combo_rank[size][combo]
            start += size
        return key * self._hands + np.arange(hand_cards.shape[0], dtype=np.int64)


class IsomorphicCards:
    """Bucket = ``tables[round][canonical index of (hole cards, board)]``; see the module docstring.

    ``tables[r]`` int (canonical hands of round r with the board as one group,) — the layout
    of the hold'em pipeline's bucket files.
    """

    suit_symmetric = True

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
        valid = np.all(np.isin(hand_cards, board, invert=True), axis=1)
        rows = np.concatenate([hand_cards[valid], np.broadcast_to(board, (int(valid.sum()), board.shape[0]))],
                              axis=1)
        out = np.full(hand_cards.shape[0], -1, np.int64)
        out[valid] = np.asarray(self._tables[round])[self._indexer(round).index(rows)]
        return out

    @classmethod
    def canonical(cls, game: LimitPoker) -> IsomorphicCards:
        """Each canonical (hole cards, board) class its own bucket: suit isomorphism only."""
        ranks = game.card_structure.num_ranks
        boards = [sum(game.card_structure.public_cards_per_round[:r + 1]) for r in range(game.num_rounds)]
        tables = []
        for cards in boards:
            indexer = hand_indexer(cards, ranks)
            tables.append(np.arange(indexer.round_size(indexer.num_rounds - 1), dtype=np.int64))
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
            tables.append(np.concatenate([np.arange(min(buckets[r], size)),
                                          rng.integers(0, buckets[r], max(size - buckets[r], 0))]))
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


ABSTRACTION_KINDS = ("canonical", "none", "lossless")
"""The card abstractions named by a word; anything else is a bucket file's path."""


def abstraction_from_reference(game: LimitPoker, reference: dict, bucket_file=None) -> CardAbstraction:
    """The abstraction ``reference`` describes; a bucket file is opened at ``bucket_file`` when
    given (a moved file), else at its recorded path, and must have the recorded digest."""
    kind = reference.get("kind")
    if kind == "canonical":
        return IsomorphicCards.canonical(game)
    if kind == "none":
        return CardIndependent()
    if kind == "lossless":
        return LosslessCards(game)
    if kind == "bucket-file":
        path = bucket_file or reference.get("path")
        cards = IsomorphicCards.from_bucket_file(game, path)
        if cards.reference["sha256"] != reference.get("sha256"):
            raise AbstractionError(f"{path}: not the bucket file the strategy was computed on (its "
                                   f"content digest differs)")
        return cards
    raise AbstractionError(f"unknown card abstraction {reference!r}")


def abstraction_named(game: LimitPoker, name: str) -> CardAbstraction:
    """``canonical``, ``none`` (one bucket per round), ``lossless`` or a bucket file's path."""
    if name in ABSTRACTION_KINDS:
        return abstraction_from_reference(game, {"kind": name})
    return IsomorphicCards.from_bucket_file(game, name)
