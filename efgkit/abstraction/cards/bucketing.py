"""A card abstraction: per round, a bucket for every card situation; as an InfosetMap.

``CardAbstraction.labels[r][s]`` is the bucket of situation ``s`` of round ``r`` (see
``situations.py``). Combined with the betting history it groups the game's infosets:
two infosets of one player fall together when their betting histories are equal and

* imperfect recall (the default, as Johanson et al. 2013 and Ganzfried & Sandholm 2014
  recommend): their current-round buckets are equal; earlier rounds' buckets are
  forgotten (the betting is not);
* perfect recall: their bucket sequences (one bucket per round so far) are equal.

Equal betting histories imply the same player and the same actions, so the grouping is
always a valid InfosetMap. Kuhn, Leduc, Pbrc and every ``LimitPoker`` game qualify; any
other game is refused.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from efgkit.abstraction.cards.situations import CardSituations
from efgkit.errors import AbstractionError
from efgkit.games.poker import CardStructure, LimitPoker
from efgkit.games.tree import GameTree
from efgkit.maps.infoset_map import InfosetMap

RECALLS = ("imperfect", "perfect")


def poker_rules(tree: GameTree) -> LimitPoker:
    """The poker rules a tree was compiled from, or AbstractionError for any other game."""
    if not isinstance(tree.game, LimitPoker):
        raise AbstractionError(
            f"card abstraction needs a poker game (kuhn, leduc, poker, ...); {tree.spec!r} is not one"
        )
    return tree.game


@dataclass
class CardAbstraction:
    """Per round, the bucket (int32) of every situation of a card structure.

    ``feature`` and ``parameters`` record how the buckets were made (provenance only).
    """

    card_structure: CardStructure
    labels: list[np.ndarray]
    feature: str = "custom"
    parameters: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        situations = CardSituations(self.card_structure)
        if len(self.labels) != situations.num_rounds:
            raise AbstractionError(
                f"a card abstraction needs buckets for all {situations.num_rounds} rounds, "
                f"got {len(self.labels)}"
            )
        checked = []
        for round_index, labels in enumerate(self.labels):
            labels = np.asarray(labels)
            expected = situations.rounds[round_index].num_situations
            if labels.shape != (expected,) or not np.issubdtype(labels.dtype, np.integer) or (
                    labels.min(initial=0) < 0):
                raise AbstractionError(
                    f"round {round_index} needs a non-negative integer bucket for each of its "
                    f"{expected} situations, got shape {labels.shape}"
                )
            checked.append(labels.astype(np.int32))
        self.labels = checked
        self.situations = situations

    @property
    def num_buckets(self) -> list[int]:
        """Distinct buckets used in each round."""
        return [int(np.unique(labels).shape[0]) for labels in self.labels]

    def infoset_map(self, tree: GameTree, recall: str = "imperfect") -> InfosetMap:
        """The InfosetMap grouping ``tree``'s infosets by betting history and buckets."""
        if recall not in RECALLS:
            raise AbstractionError(f"recall must be one of {', '.join(RECALLS)}, got {recall!r}")
        game = poker_rules(tree)
        if game.card_structure != self.card_structure:
            raise AbstractionError(
                f"the card abstraction is for another deck ({self.card_structure}) than "
                f"{tree.spec!r} ({game.card_structure})"
            )
        board_sizes = np.cumsum(self.card_structure.public_cards_per_round)
        groups: dict[tuple, int] = {}
        abstract_of = np.empty(tree.num_infosets, dtype=np.int64)
        for infoset, key in enumerate(tree.infoset_keys):
            seen = game.infoset_cards(key)
            rounds = range(seen.round + 1) if recall == "perfect" else (seen.round,)
            buckets = tuple(
                int(self.labels[r][self.situations.situation(r, seen.private, seen.board[:board_sizes[r]])])
                for r in rounds
            )
            abstract_of[infoset] = groups.setdefault((seen.betting, buckets), len(groups))
        return InfosetMap(tree, abstract_of)
