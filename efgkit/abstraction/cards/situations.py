"""Card situations of a poker game: per round, every (private hand, board so far) pair.

A card abstraction buckets situations, not infosets: a player's situation in round
``r`` is their private cards and the set of board cards dealt in rounds ``0..r`` (the
order in which board cards came does not change any feature). Both players share one
situation space. Hands and boards are card-id combinations in lexicographic order, and
card sets are also kept as int64 bit masks (card ``c`` is bit ``c``) for the kernels.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from itertools import combinations

import numpy as np

from efgkit.errors import AbstractionError
from efgkit.games.poker import CardStructure

MAX_CARDS = 62
"""Card sets are int64 bit masks."""


def _combinations(num_cards: int, size: int) -> np.ndarray:
    """Every ``size``-subset of ``range(num_cards)`` in lexicographic order, (count, size) int64."""
    rows = list(combinations(range(num_cards), size))
    return np.array(rows, dtype=np.int64).reshape(len(rows), size)


def _masks(card_sets: np.ndarray) -> np.ndarray:
    return np.bitwise_or.reduce(np.left_shift(1, card_sets), axis=1) if card_sets.shape[1] else (
        np.zeros(card_sets.shape[0], np.int64))


@dataclass(frozen=True)
class RoundSituations:
    """The situations of one round.

    ``hands`` (H, private cards) and ``boards`` (B, board cards so far) list card ids;
    situation ``s`` is hand ``hand_of[s]`` with board ``board_of[s]`` (disjoint);
    ``index[h, b]`` is the situation id of a pair, -1 if the two share a card.
    """

    round: int
    hands: np.ndarray
    boards: np.ndarray
    hand_of: np.ndarray
    board_of: np.ndarray
    index: np.ndarray

    @property
    def num_situations(self) -> int:
        return int(self.hand_of.shape[0])

    @cached_property
    def hand_masks(self) -> np.ndarray:
        return _masks(self.hands)

    @cached_property
    def board_masks(self) -> np.ndarray:
        return _masks(self.boards)


class CardSituations:
    """Every round's situations for a card structure (enumerated once, exactly)."""

    def __init__(self, card_structure: CardStructure) -> None:
        cards = card_structure
        if cards.num_cards > MAX_CARDS:
            raise AbstractionError(f"card abstraction supports decks of up to {MAX_CARDS} cards")
        self.card_structure = cards
        hands = _combinations(cards.num_cards, cards.private_cards_per_player)
        hand_masks = _masks(hands)
        self._hand_index = {tuple(row): k for k, row in enumerate(hands.tolist())}
        self.rounds: list[RoundSituations] = []
        self._board_index: list[dict[tuple[int, ...], int]] = []
        board_size = 0
        for round_index, dealt in enumerate(cards.public_cards_per_round):
            board_size += dealt
            boards = _combinations(cards.num_cards, board_size)
            disjoint = (hand_masks[:, None] & _masks(boards)[None, :]) == 0
            hand_of, board_of = np.nonzero(disjoint)
            index = np.full(disjoint.shape, -1, np.int64)
            index[hand_of, board_of] = np.arange(hand_of.shape[0])
            self.rounds.append(RoundSituations(round_index, hands, boards, hand_of.astype(np.int64),
                                               board_of.astype(np.int64), index))
            self._board_index.append({tuple(row): k for k, row in enumerate(boards.tolist())})

    @property
    def num_rounds(self) -> int:
        return len(self.rounds)

    def situation(self, round_index: int, private: tuple[int, ...], board: tuple[int, ...]) -> int:
        """The situation id of private cards and board cards (any order) in a round."""
        try:
            hand = self._hand_index[tuple(sorted(private))]
            board_id = self._board_index[round_index][tuple(sorted(board))]
        except (KeyError, IndexError):
            raise AbstractionError(
                f"no round-{round_index} situation with private cards {private} and board {board}"
            ) from None
        situation = int(self.rounds[round_index].index[hand, board_id])
        if situation < 0:
            raise AbstractionError(f"private cards {private} and board {board} share a card")
        return situation
