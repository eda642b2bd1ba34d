"""Perfect-recall card abstractions built from an imperfect-recall one.

An ``IsomorphicCards`` abstraction (the hold'em pipeline's bucket files) forgets: the bucket
of a hand on the turn does not say which flop bucket it came from, so hands the player could
tell apart on the flop may share a turn bucket (imperfect recall). ``PerfectRecallCards``
keeps the history: the bucket at round ``r`` is the tuple of the base abstraction's buckets
at rounds ``0..r``, numbered densely (only tuples some deal reaches get a number). With base
bucket counts ``k0, k1, k2, k3`` it has at most ``k0``, ``k0 k1``, ``k0 k1 k2`` and
``k0 k1 k2 k3`` buckets per round: the kind of abstraction Johanson et al. 2013 ("Evaluating
State-Space Abstractions in Extensive-Form Games") compare against imperfect recall at equal
size. Here every round is clustered on its own and the tuple refines it (the perfect-recall
version of an existing imperfect-recall abstraction); clustering a round's hands within each
earlier bucket would be another way to build one.

The tables are built over canonical deals with the board split by deal (Waugh's indexer,
``HandIndexer((2, 3, 1, 1))``): a class's representative, cut after an earlier round, is that
round's canonical deal, so every round's tuple follows from the previous round's table. The
river table has one entry per such class (1,398,100 on the 5-rank deck; 2.4e9 on the full
deck, so this is for reduced decks). Renaming suits changes no tuple: the abstraction is suit
symmetric like its base.
"""

from __future__ import annotations

import numpy as np

from efgkit.abstraction.cards.holdem.isomorphism import HandIndexer
from efgkit.errors import AbstractionError
from efgkit.games.poker import LimitPoker
from efgkit.poker.buckets.card_abstraction import (
    IsomorphicCards,
    IsomorphicTables,
    _buckets_of,
    isomorphic_tables,
)


class PerfectRecallCards:
    """Bucket at round ``r`` = the dense number of (``base``'s buckets at rounds 0..r).

    ``base_buckets[r]`` int64 (``num_buckets(r)``,): the base bucket at round ``r`` of every
    bucket (its tuple's last entry), which lifts a base strategy to this abstraction.
    """

    suit_symmetric = True
    perfect_recall = True

    def __init__(self, game: LimitPoker, base: IsomorphicCards) -> None:
        cards = game.card_structure
        deals = list(cards.public_cards_per_round[1:game.num_rounds])
        if cards.public_cards_per_round[0] != 0 or 0 in deals:
            raise AbstractionError(f"{game.spec}: perfect recall needs no board before the first round "
                                   f"and new board cards in every later round")
        self._indexer = HandIndexer((cards.private_cards_per_player, *deals), num_ranks=cards.num_ranks)
        self.base = base
        self._tables: list[np.ndarray] = []
        self.base_buckets: list[np.ndarray] = []
        for r in range(game.num_rounds):
            hands = self._indexer.unindex(r, np.arange(self._indexer.round_size(r))).astype(np.int64)
            own = base.row_buckets(r, hands)
            if r:
                earlier = self._tables[-1][self._indexer.index(hands[:, :self._indexer.cards_through(r - 1)])]
                own = earlier * base.num_buckets(r) + own
            keys, table = np.unique(own, return_inverse=True)
            self._tables.append(table.astype(np.int64).reshape(-1))
            self.base_buckets.append(keys % base.num_buckets(r))
        self._counts = [keys.shape[0] for keys in self.base_buckets]
        self._kernel_view: IsomorphicTables | None = None
        self.description = f"perfect recall of {base.description}"
        self.reference = {"kind": "perfect-recall", "base": base.reference}

    def num_buckets(self, round: int) -> int:
        return self._counts[round]

    def buckets(self, round: int, board: np.ndarray, hand_cards: np.ndarray) -> np.ndarray:
        return _buckets_of(self.kernel_tables(), round, board, hand_cards)

    def kernel_tables(self) -> IsomorphicTables:
        """``IsomorphicCards``' kernel view: every round indexed by the split-board indexer
        (its index of the cards through a round), the tuple numbers as the buckets; built
        once."""
        if self._kernel_view is None:
            self._kernel_view = isomorphic_tables([self._indexer.tables] * len(self._tables), self._tables,
                                                  max(self._counts))
        return self._kernel_view
