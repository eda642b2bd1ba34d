"""The poker engines' view of the betting tree, and the hands they index.

The tree itself (``efgkit.games.betting_tree``: every betting sequence once, no cards, with
its node kinds ``DEAL``, ``FOLD`` and ``SHOWDOWN`` and its chance weights) lives in the games
floor, where ``LimitPoker.compile`` derives the GameTree from it too; ``BettingTree`` here is
that tree for the engines, which refuse hands of more than ``MAX_HOLE_CARDS`` cards. The
streamed engine (``full_game.py``) walks it once per board instead of materialising the
public tree: heads-up limit hold'em has 17,221 betting nodes against 7.98e11 public nodes.
"""

from __future__ import annotations

from itertools import combinations

import numpy as np

from efgkit.errors import GameDefinitionError
from efgkit.games import betting_tree
from efgkit.games.poker import LimitPoker

MAX_HOLE_CARDS = 2
"""Hole cards per player the poker engines play (their terminal kernels remove one or two
cards per hand; ACPC definitions may deal three)."""


def private_hands(num_cards: int, hole_cards: int) -> tuple[np.ndarray, np.ndarray]:
    """Every private hand of ``hole_cards`` from ``num_cards``: its cards int64 (hands, k) in
    lexicographic order and their card masks int64 (hands,)."""
    cards = np.array(list(combinations(range(num_cards), hole_cards)), np.int64).reshape(-1, hole_cards)
    return cards, (np.int64(1) << cards).sum(axis=1).astype(np.int64)


def card_mask(cards) -> int:
    """The bit set of ``cards`` (ints): bit ``c`` for card ``c``."""
    return sum(1 << int(c) for c in cards)


def sorted_deals(cards, deal_sizes) -> np.ndarray:
    """A copy of ``cards`` (int, the board's deals in order) with each deal's cards sorted
    (a deal's order does not matter; the deals' order does)."""
    cards = np.array(cards, np.int64)
    start = 0
    for size in np.asarray(deal_sizes).tolist():
        cards[start:start + size].sort()
        start += size
    return cards


def check_hole_cards(game: LimitPoker) -> None:
    """Refuse ``game`` (``GameDefinitionError``) if its hands hold more than ``MAX_HOLE_CARDS``."""
    if game.card_structure.private_cards_per_player > MAX_HOLE_CARDS:
        raise GameDefinitionError(f"{game.spec}: the poker engines play hands of at most "
                                  f"{MAX_HOLE_CARDS} hole cards")


class BettingTree(betting_tree.BettingTree):
    """The card-independent betting tree of ``game`` (a ``LimitPoker``; see
    ``efgkit.games.betting_tree``), refused (``GameDefinitionError``) when its hands hold more
    than ``MAX_HOLE_CARDS`` cards."""

    def __init__(self, game: LimitPoker) -> None:
        check_hole_cards(game)
        super().__init__(game)

    def hands(self) -> tuple[np.ndarray, np.ndarray]:
        """``private_hands`` of this game's deck."""
        return private_hands(self.num_cards, self.hole_cards)
